# One MulTCP(N) flow against M TCP SACK flows on a DropTail dumbbell (docs/validation.md,
# "MulTCP against ns-2.35: the PA-MulTCP study's dumbbell"), driven by
# bench/peers/crosscheck_multcp.py.
#
# The set-up of Kuo and Fu, "Probe-Aided MulTCP: An Aggregate Congestion Control Mechanism", ACM
# SIGCOMM CCR 38(1), 2008, sections 3.2 and 5.1: flow 0 is MulTCP(N), ns-2's parameter-based
# MulTCP: Agent/TCP/Sack1 with `increase_num_ N` (cwnd += N/cwnd per ACK in congestion
# avoidance, TcpAgent::opencwnd) and `decrease_num_ 1 - 1/(2N)` (TcpAgent::slowdown: ssthresh
# and cwnd become decrease_num_ x window() on a fast recovery, except on the agent's first
# decrease and in slow start, which halve; a timeout halves ssthresh and restarts cwnd at
# `wnd_restart_` = 1); its slow start is the standard one. Flows 1..M are Agent/TCP/Sack1 with
# ns-2's defaults. Every flow has its own sender s_i - X (ACCESS_MBPS, ACCESS_MS, queue 100000)
# and receiver Y - r_i (the same), through the bottleneck X - Y (BW_MBPS, DELAY_MS, DropTail
# with LIMIT packets both ways). Agent/TCPSink/Sack1 (one ACK per data packet, 40 bytes), SIZE-
# byte payloads with HDR bytes of header, `window_ 100000`, every other variable ns-2.35's
# default (windowInit_ 2, tcpTick_ 0.01, minrto_ 0.2, rtxcur_init_ 3, maxburst_ 0).
# Flow i starts at a uniform random time in [0, JITTER] s. With overhead=S each agent waits a
# uniform random time in [0, S] before each send (`overhead_`, against DropTail phase effects).
#
# usage: ns ns2_multcp.tcl key=value ...
#   n=N            MulTCP's weight N (10); N = 1 makes flow 0 a plain Sack1 flow
#   m=M            TCP SACK flows (190)
#   bw=MBPS        bottleneck rate (400)
#   delay_ms=MS    bottleneck one-way delay (50)
#   limit=PKTS     DropTail limit of X <-> Y; 0: one round-trip bandwidth-delay product,
#                  BW x 2 DELAY_MS / ((SIZE + HDR) x 8), rounded (0)
#   access=MBPS    access link rate; 0: 10 x BW (0)
#   access_ms=MS   access link delay (0.1)
#   size=B hdr=B   payload and header bytes of a data packet (1460, 40)
#   seconds=S      simulated seconds (400)
#   warmup=S       the first S seconds are not measured (100)
#   jitter=S       start-time jitter bound (10)
#   overhead=S    every agent's `overhead_`; -1: one packet's transmission time at the
#                  bottleneck, (SIZE + HDR) x 8 / BW (0)
#   seed=K         seed ns-2's default RNG with K, then one `next-substream` (as
#                  ns2_tcp_matrix.tcl); the start times and `overhead_` draw from it.
#                  Omitted: ns-2's default seed.
#   defaults=1     print flow 0's agent variables, one `CLASS VARIABLE VALUE` line each, and exit
#
# Output: one line `result k v k v ...`; the per-flow keys are comma-separated lists, flow 0
# (MulTCP) first, counted over the window [WARMUP, SECONDS]:
#   starts      each flow's start time (s)
#   acked       data packets cumulatively acknowledged (the sender's `ack_`, i.e. SIZE-byte
#               payloads delivered in order: goodput)
#   sent        data packets sent, retransmissions included (`ndatapack_`)
#   recoveries  entries into SACK fast recovery: the `FAST_RECOVERY` events of ns-2's event
#               trace, which Sack1TcpAgent::dupack_action emits once per entry, just before
#               slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)
#   timeouts    retransmission timeouts (`nrexmit_`: TcpAgent::timeout increments it at every
#               expiry of the timer with data outstanding, backed-off repeats included, just
#               before slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART))
#   cuts        window reductions (`ncwndcuts_`: every call of slowdown), a check of
#               recoveries + timeouts
#   drops       packets the X -> Y queue dropped (a total)
#   limit       the DropTail limit used (a number)
set opt(n) 10
set opt(m) 190
set opt(bw) 400
set opt(delay_ms) 50
set opt(limit) 0
set opt(access) 0
set opt(access_ms) 0.1
set opt(size) 1460
set opt(hdr) 40
set opt(seconds) 400
set opt(warmup) 100
set opt(jitter) 10
set opt(overhead) 0
set opt(seed) ""
set opt(defaults) 0
foreach a $argv {
  set kv [split $a =]
  if {[llength $kv] != 2 || ![info exists opt([lindex $kv 0])]} {
    puts stderr "bad argument $a; keys: [lsort [array names opt]]"
    exit 2
  }
  set opt([lindex $kv 0]) [lindex $kv 1]
}
if {$opt(warmup) < 0 || $opt(warmup) >= $opt(seconds)} {
  puts stderr "warmup=$opt(warmup) must be in \[0, seconds)"
  exit 2
}
if {$opt(n) < 1} { puts stderr "n=$opt(n) must be at least 1"; exit 2 }
set wire [expr {$opt(size) + $opt(hdr)}]
set bw [expr {$opt(bw) * 1e6}]
set access [expr {$opt(access) > 0 ? $opt(access) : 10 * $opt(bw)}]
set limit $opt(limit)
if {$limit <= 0} {
  set limit [expr {round($bw * 2 * $opt(delay_ms) / 1000.0 / ($wire * 8))}]
}
set nflows [expr {$opt(m) + 1}]
set overhead [expr {$opt(overhead) < 0 ? $wire * 8.0 / $bw : $opt(overhead)}]

set ns [new Simulator]
if {$opt(seed) ne ""} {
  $defaultRNG seed $opt(seed)
  $defaultRNG next-substream
}
set X [$ns node]
set Y [$ns node]
$ns duplex-link $X $Y $opt(bw)Mb $opt(delay_ms)ms DropTail
$ns queue-limit $X $Y $limit
$ns queue-limit $Y $X $limit
set dropmon [new QueueMonitor]
set snoop [new SnoopQueue/Drop]
$snoop set-monitor $dropmon
$snoop target [$ns set nullAgent_]
[[$ns link $X $Y] set drophead_] target $snoop

# MulTCP's events and the TCP flows' events go to two event trace files.
set tmp [expr {[info exists env(TMPDIR)] ? $env(TMPDIR) : "/tmp"}]
foreach k {0 1} {
  set etfile($k) [file join $tmp "ns2_multcp.[pid].$k.et"]
  set etfd($k) [open $etfile($k) w]
  set et($k) [new BaseTrace/Event]
  $et($k) attach $etfd($k)
}
set startrv [new RandomVariable/Uniform]
$startrv use-rng $defaultRNG
for {set i 0} {$i < $nflows} {incr i} {
  set s($i) [$ns node]
  set r($i) [$ns node]
  $ns duplex-link $s($i) $X ${access}Mb $opt(access_ms)ms DropTail
  $ns duplex-link $Y $r($i) ${access}Mb $opt(access_ms)ms DropTail
  $ns queue-limit $s($i) $X 100000
  $ns queue-limit $X $s($i) 100000
  $ns queue-limit $Y $r($i) 100000
  $ns queue-limit $r($i) $Y 100000
  set tcp($i) [new Agent/TCP/Sack1]
  $tcp($i) set packetSize_ $opt(size)
  $tcp($i) set tcpip_base_hdr_size_ $opt(hdr)
  $tcp($i) set window_ 100000
  $tcp($i) set fid_ $i
  $tcp($i) set overhead_ $overhead
  if {$i == 0 && $opt(n) != 1} {
    $tcp($i) set increase_num_ $opt(n)
    $tcp($i) set decrease_num_ [expr {1.0 - 1.0 / (2.0 * $opt(n))}]
  }
  $ns attach-agent $s($i) $tcp($i)
  set sink($i) [new Agent/TCPSink/Sack1]
  $ns attach-agent $r($i) $sink($i)
  $ns connect $tcp($i) $sink($i)
  $tcp($i) eventtrace $et([expr {$i == 0 ? 0 : 1}])
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  set start($i) [expr {$opt(jitter) > 0 ? $opt(jitter) * [$startrv value] : 0}]
  $ns at $start($i) "$ftp($i) start"
}

proc counters {} {
  global nflows tcp
  set out {}
  for {set i 0} {$i < $nflows} {incr i} {
    set t $tcp($i)
    lappend out [list [$t set ack_] [$t set ndatapack_] [$t set nrexmit_] [$t set ncwndcuts_]]
  }
  return $out
}
proc mark {} {
  global base base_drops dropmon
  set base [counters]
  set base_drops [$dropmon set pdrops_]
}
$ns at $opt(warmup) "mark"

# The MulTCP flow's data packets sent (retransmissions included) per 0.1 s bin over
# [warmup, seconds], for the CoV of eq. (12) of Kuo and Fu: sampled at warmup + k * 0.1 s for
# k = 0 .. K - 1, the last bin closed by `finish`.
set bin_s 0.1
set nbins [expr {round(($opt(seconds) - $opt(warmup)) / $bin_s)}]
set bins {}
set last_sent 0
proc sample {k} {
  global ns tcp bins last_sent nbins bin_s opt
  set sent [$tcp(0) set ndatapack_]
  if {$k > 0} { lappend bins [expr {$sent - $last_sent}] }
  set last_sent $sent
  if {$k + 1 < $nbins} { $ns at [expr {$opt(warmup) + ($k + 1) * $bin_s}] "sample [expr {$k + 1}]" }
}
$ns at $opt(warmup) "sample 0"

# FAST_RECOVERY events of one trace file in [WARMUP, now], per flow (by source address).
proc recoveries {k} {
  global etfd etfile opt ns
  close $etfd($k)
  array set n {}
  set fd [open $etfile($k) r]
  while {[gets $fd line] >= 0} {
    set w [split $line " "]
    set t [lindex $w 1]
    if {$t < $opt(warmup) || $t > [$ns now]} { continue }
    if {[lindex $w 5] eq "FAST_RECOVERY"} {
      set src [lindex $w 2]
      if {[info exists n($src)]} { incr n($src) } else { set n($src) 1 }
    }
  }
  close $fd
  file delete $etfile($k)
  return [array get n]
}

proc finish {} {
  global ns opt base base_drops dropmon nflows start tcp s limit bins last_sent
  lappend bins [expr {[$tcp(0) set ndatapack_] - $last_sent}]
  array set fr [recoveries 0]
  array set fr [recoveries 1]
  set cols {acked sent timeouts cuts}
  foreach c $cols { set v($c) {} }
  set v(recoveries) {}
  foreach b $base e [counters] {
    foreach c $cols x $b y $e { lappend v($c) [expr {$y - $x}] }
  }
  set starts {}
  for {set i 0} {$i < $nflows} {incr i} {
    lappend starts [format %.6f $start($i)]
    set a [$s($i) id]
    lappend v(recoveries) [expr {[info exists fr($a)] ? $fr($a) : 0}]
  }
  set line "result starts [join $starts ,]"
  foreach c {acked sent recoveries timeouts cuts} { append line " $c [join $v($c) ,]" }
  append line " drops [expr {[$dropmon set pdrops_] - $base_drops}] limit $limit"
  append line " bins [join $bins ,]"
  puts $line
  exit 0
}

proc show_defaults {} {
  global tcp etfd etfile
  foreach k {0 1} { close $etfd($k); file delete $etfile($k) }
  foreach v {packetSize_ tcpip_base_hdr_size_ window_ windowInit_ maxburst_ overhead_ tcpTick_
             minrto_ maxrto_ rtxcur_init_ numdupacks_ singledup_ bugFix_ increase_num_
             decrease_num_ precisionReduce_ windowOption_ timestamps_} {
    puts "Agent/TCP/Sack1 $v [$tcp(0) set $v]"
  }
  exit 0
}
if {$opt(defaults)} { $ns at 0 "show_defaults" }
$ns at $opt(seconds) "finish"
$ns run
