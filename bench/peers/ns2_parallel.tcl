# Parallel TCP flows under Bernoulli loss (docs/validation.md, "Parallel TCP Reno under random
# loss against ns-2.35"), driven by bench/peers/crosscheck_parallel.py.
#
# Scenario S1 of Damjanovic (2010), chapter 3: N TCP flows, each from its own sender s_i over an
# access link s_i - X (ACCESS_MBPS, 1 ms, queue 100000) through the bottleneck X - Y (BW_MBPS,
# DELAY_MS, RED with ns-2's automatic parameters: q_weight_ -1, thresh_ 0, maxthresh_ 0,
# gentle_ true; queue limit LIMIT packets both ways) to its own receiver r_i (Y - r_i, ACCESS_MBPS,
# 1 ms). Bernoulli loss with probability LOSS on X -> Y only (ErrorModel, unit pkt, after the queue
# and the link: `$ns link-lossmodel`), so data packets are lost and ACKs are not. Agent/TCP/AGENT ->
# Agent/TCPSink (one ACK per data packet), SIZE-byte payloads with HDR bytes of header
# (`packetSize_`, `tcpip_base_hdr_size_`), `window_ 100000`, every other agent variable ns-2's
# default; `overhead_` (each send waits a uniform random time in [0, overhead_]) against phase
# effects. Flow i starts at a uniform random time in [0, JITTER] s.
#
# usage: ns ns2_parallel.tcl key=value ...
#   n=N            flows (5)
#   loss=P         Bernoulli loss probability on X -> Y (0.01)
#   delay_ms=MS    bottleneck one-way delay (30)
#   agent=NAME     Reno, Newreno, Sack1 (with Agent/TCPSink/Sack1) or Tahoe (= Agent/TCP) (Reno)
#   seconds=S      simulated seconds (160)
#   warmup=S       the first S seconds are not measured (15)
#   seed=K         seed ns-2's default RNG with K, then one `next-substream` (as
#                  ns2_tcp_matrix.tcl); start times, the loss model, RED and `overhead_` draw from
#                  it. Omitted: ns-2's default seed.
#   bw=MBPS        bottleneck rate (1000)
#   access=MBPS    access link rate (10000)
#   limit=PKTS     queue limit of X <-> Y; 0: one bandwidth-delay product of SIZE+HDR-byte packets
#                  over the base RTT 2 x (DELAY_MS + 2) ms, at least 50 (0)
#   queue=KIND     the X <-> Y queue: red (as above) or droptail (scenario S2's) (red)
#   size=B hdr=B   payload and header bytes of a data packet (1000, 40)
#   overhead=S     the agents' `overhead_`; -1: one packet's transmission time at the bottleneck,
#                  (SIZE + HDR) x 8 / BW (-1)
#   jitter=S       start-time jitter bound (1)
#   sample=S       interval at which every agent's RTO state is sampled (0.1)
#   defaults=1     print the variables of the first agent and of RED, one `CLASS VARIABLE VALUE`
#                  line each, and exit without running (0)
#
# Output: one line `result k v k v ...`, with, over the window [WARMUP, SECONDS] and summed over
# the flows unless said otherwise:
#   starts           each flow's start time (s), comma-separated
#   sent             data packets sent, retransmissions included (the agents' `ndatapack_`)
#   sent_flows       the same per flow, comma-separated
#   fast_retransmits entries into fast retransmit/recovery: the agents' `*FAST_RETX` events of
#                    ns-2's event trace (`$agent eventtrace`), which RenoTcpAgent::dupack_action
#                    emits once per entry (tcp-reno.cc, `reno_action`), just before it halves
#                    ssthresh_ and cwnd_ and retransmits
#   timeouts         retransmission timeouts: the agents' `nrexmit_`, which TcpAgent::timeout
#                    (tcp.cc) increments on every expiry of the retransmission timer while data is
#                    outstanding (not in ECN recovery): every backed-off repeat counts again
#   timeout_events   the `TIMEOUT` events of the same trace (every expiry, data outstanding or
#                    not): a check of `timeouts`
#   rexmit_pkts      retransmitted data packets (`nrexmitpack_`)
#   rtt_base         propagation plus transmission delays of a data packet and its ACK (s)
#   rtt_mean         rtt_base plus the bottleneck's mean queueing delay (time-averaged bytes
#                    waiting at X -> Y x 8 / BW) (s); ns-2 keeps no per-packet RTT Tcl can read
#                    (its samples are whole 10 ms ticks)
#   srtt_mean        the agents' smoothed RTT, `srtt_` >> 3 ticks x `tcpTick_`, sampled every
#                    SAMPLE s (s)
#   rto_mean         the retransmission timeout armed without back-off: max(`minrto_`, rtxcur),
#                    rtxcur = ((`rttvar_` << 3) + `srtt_`) >> 3 ticks x `tcpTick_` (srtt + 4 rttvar:
#                    TcpAgent::rtt_update with rttvar_exp_ 2, T_SRTT_BITS 3, T_RTTVAR_BITS 2;
#                    rtt_timeout with rfc2988_ true), averaged over the samples taken while
#                    `backoff_` is 1 (s)
#   rto_samples      how many samples rto_mean averages
#   link_losses      packets the loss model dropped
#   drops            packets the queues of X <-> Y dropped (RED's early drops included)
#   red              q_weight_,thresh_,maxthresh_ as ns-2 derived them (queue=red only)
set opt(n) 5
set opt(loss) 0.01
set opt(delay_ms) 30
set opt(agent) Reno
set opt(seconds) 160
set opt(warmup) 15
set opt(seed) ""
set opt(bw) 1000
set opt(access) 10000
set opt(limit) 0
set opt(queue) red
set opt(size) 1000
set opt(hdr) 40
set opt(overhead) -1
set opt(jitter) 1
set opt(sample) 0.1
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
switch -- $opt(agent) {
  Reno - Newreno - Sack1 { set tcpclass Agent/TCP/$opt(agent) }
  Tahoe { set tcpclass Agent/TCP }
  default { puts stderr "agent=$opt(agent): must be Reno, Newreno, Sack1 or Tahoe"; exit 2 }
}
switch -- $opt(queue) {
  red { set qclass RED }
  droptail { set qclass DropTail }
  default { puts stderr "queue=$opt(queue): must be red or droptail"; exit 2 }
}
set sinkclass [expr {$opt(agent) eq "Sack1" ? "Agent/TCPSink/Sack1" : "Agent/TCPSink"}]
set wire [expr {$opt(size) + $opt(hdr)}]
set bw [expr {$opt(bw) * 1e6}]
set acc [expr {$opt(access) * 1e6}]
set limit $opt(limit)
if {$limit <= 0} {
  set bdp [expr {round($bw * 2 * ($opt(delay_ms) + 2) / 1000.0 / ($wire * 8))}]
  set limit [expr {max($bdp, 50)}]
}
set overhead [expr {$opt(overhead) < 0 ? $wire * 8.0 / $bw : $opt(overhead)}]

Queue/RED set q_weight_ -1
Queue/RED set thresh_ 0
Queue/RED set maxthresh_ 0
Queue/RED set gentle_ true
Queue/RED set mean_pktsize_ $wire

set ns [new Simulator]
if {$opt(seed) ne ""} {
  $defaultRNG seed $opt(seed)
  $defaultRNG next-substream
}
set X [$ns node]
set Y [$ns node]
$ns duplex-link $X $Y $opt(bw)Mb $opt(delay_ms)ms $qclass
$ns queue-limit $X $Y $limit
$ns queue-limit $Y $X $limit
# Queue drops of both directions (RED's early drops too), counted at each link's drop head.
set dropmons {}
foreach {a b} [list $X $Y $Y $X] {
  set m [new QueueMonitor]
  set snoop [new SnoopQueue/Drop]
  $snoop set-monitor $m
  $snoop target [$ns set nullAgent_]
  [[$ns link $a $b] set drophead_] target $snoop
  lappend dropmons $m
}
# Time-integral of the bytes waiting at X -> Y, for the mean queueing delay.
set qmon [new QueueMonitor]
set qint [new Integrator]
$qmon set-bytes-integrator $qint
[$ns link $X $Y] attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] [new SnoopQueue/Drop] $qmon
set lossmon [new QueueMonitor]
if {$opt(loss) > 0} {
  set em [new ErrorModel]
  $em unit pkt
  $em set rate_ $opt(loss)
  set u [new RandomVariable/Uniform]
  $u use-rng $defaultRNG
  $em ranvar $u
  $ns link-lossmodel $em $X $Y
  set lsnoop [new SnoopQueue/Drop]
  $lsnoop set-monitor $lossmon
  $lsnoop target [$ns set nullAgent_]
  $em drop-target $lsnoop
}
# The agents' events (fast retransmits, timeouts, slow starts) go to one event trace file.
set etfile [file join [expr {[info exists env(TMPDIR)] ? $env(TMPDIR) : "/tmp"}] "ns2_parallel.[pid].et"]
set etfd [open $etfile w]
set et [new BaseTrace/Event]
$et attach $etfd
set startrv [new RandomVariable/Uniform]
$startrv use-rng $defaultRNG
for {set i 0} {$i < $opt(n)} {incr i} {
  set s($i) [$ns node]
  set r($i) [$ns node]
  $ns duplex-link $s($i) $X $opt(access)Mb 1ms DropTail
  $ns duplex-link $Y $r($i) $opt(access)Mb 1ms DropTail
  $ns queue-limit $s($i) $X 100000
  set tcp($i) [new $tcpclass]
  $tcp($i) set packetSize_ $opt(size)
  $tcp($i) set tcpip_base_hdr_size_ $opt(hdr)
  $tcp($i) set window_ 100000
  $tcp($i) set overhead_ $overhead
  $tcp($i) set fid_ $i
  $ns attach-agent $s($i) $tcp($i)
  set sink($i) [new $sinkclass]
  $ns attach-agent $r($i) $sink($i)
  $ns connect $tcp($i) $sink($i)
  $tcp($i) eventtrace $et
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  set start($i) [expr {$opt(jitter) > 0 ? $opt(jitter) * [$startrv value] : 0}]
  $ns at $start($i) "$ftp($i) start"
}

proc counters {} {
  global opt tcp
  set out {}
  for {set i 0} {$i < $opt(n)} {incr i} {
    lappend out [list [$tcp($i) set ndatapack_] [$tcp($i) set nrexmit_] [$tcp($i) set nrexmitpack_]]
  }
  return $out
}
proc mark {} {
  global base base_qsum base_llost qint lossmon
  set base [counters]
  set base_qsum [$qint set sum_]
  set base_llost [$lossmon set pdrops_]
}
$ns at $opt(warmup) "mark"

# RTO samples: every SAMPLE s from the warm-up on, each agent's unbacked timeout.
set rto_sum 0.0
set rto_n 0
set srtt_sum 0.0
set srtt_n 0
proc sample {} {
  global ns opt tcp rto_sum rto_n srtt_sum srtt_n
  for {set i 0} {$i < $opt(n)} {incr i} {
    set t $tcp($i)
    set tick [$t set tcpTick_]
    set srtt [$t set srtt_]
    if {$srtt > 0} {
      set srtt_sum [expr {$srtt_sum + ($srtt >> [$t set T_SRTT_BITS]) * $tick}]
      incr srtt_n
    }
    if {[$t set backoff_] == 1 && $srtt > 0} {
      set shift [expr {[$t set rttvar_exp_] + [$t set T_SRTT_BITS] - [$t set T_RTTVAR_BITS]}]
      set rtxcur [expr {((([$t set rttvar_] << $shift) + $srtt) >> [$t set T_SRTT_BITS]) * $tick}]
      set rto_sum [expr {$rto_sum + max([$t set minrto_], $rtxcur)}]
      incr rto_n
    }
  }
  $ns at [expr {[$ns now] + $opt(sample)}] "sample"
}
$ns at $opt(warmup) "sample"

proc finish {} {
  global ns opt base base_qsum base_llost qint lossmon dropmons etfd etfile start wire bw acc
  global rto_sum rto_n srtt_sum srtt_n X Y
  set now [$ns now]
  set span [expr {$now - $opt(warmup)}]
  set sent 0
  set timeouts 0
  set rx 0
  set flows {}
  foreach b $base e [counters] {
    set d [expr {[lindex $e 0] - [lindex $b 0]}]
    lappend flows $d
    incr sent $d
    incr timeouts [expr {[lindex $e 1] - [lindex $b 1]}]
    incr rx [expr {[lindex $e 2] - [lindex $b 2]}]
  }
  close $etfd
  set fr 0
  set to_ev 0
  set fd [open $etfile r]
  while {[gets $fd line] >= 0} {
    set w [split $line " "]
    set t [lindex $w 1]
    if {$t < $opt(warmup) || $t > $now} { continue }
    set kind [lindex $w 5]
    if {[string match *FAST_RETX $kind]} { incr fr }
    if {$kind eq "TIMEOUT"} { incr to_ev }
  }
  close $fd
  file delete $etfile
  # Two access hops and the bottleneck each way: a data packet out, a 40-byte ACK back.
  set rbase [expr {2 * (0.002 + $opt(delay_ms) / 1000.0) + $wire * 8.0 * (2 / $acc + 1 / $bw)
                   + 40 * 8.0 * (2 / $acc + 1 / $bw)}]
  set qbytes [expr {([$qint set sum_] - $base_qsum) / $span}]
  set rtt [expr {$rbase + $qbytes * 8.0 / $bw}]
  set drops 0
  foreach m $dropmons { incr drops [$m set pdrops_] }
  set starts {}
  for {set i 0} {$i < $opt(n)} {incr i} { lappend starts [format %.9f $start($i)] }
  set q [[$ns link $X $Y] queue]
  set line "result starts [join $starts ,] sent $sent sent_flows [join $flows ,]"
  append line " fast_retransmits $fr timeouts $timeouts timeout_events $to_ev rexmit_pkts $rx"
  append line " rtt_base [format %.6f $rbase] rtt_mean [format %.6f $rtt]"
  append line " srtt_mean [format %.6f [expr {$srtt_n ? $srtt_sum / $srtt_n : -1}]]"
  append line " rto_mean [format %.6f [expr {$rto_n ? $rto_sum / $rto_n : -1}]] rto_samples $rto_n"
  append line " link_losses [expr {[$lossmon set pdrops_] - $base_llost}] drops $drops"
  if {$opt(queue) eq "red"} {
    append line " red [$q set q_weight_],[$q set thresh_],[$q set maxthresh_]"
  }
  puts $line
  exit 0
}

proc show_defaults {} {
  global ns tcp sink tcpclass sinkclass X Y etfd etfile
  close $etfd
  file delete $etfile
  foreach v {packetSize_ tcpip_base_hdr_size_ window_ windowInit_ maxburst_ overhead_ tcpTick_
             minrto_ maxrto_ rtxcur_init_ numdupacks_ singledup_ bugFix_ syn_ delay_growth_
             timestamps_ rfc2988_ T_SRTT_BITS T_RTTVAR_BITS rttvar_exp_} {
    puts "$tcpclass $v [$tcp(0) set $v]"
  }
  puts "$sinkclass packetSize_ [$sink(0) set packetSize_]"
  set q [[$ns link $X $Y] queue]
  foreach v {limit_ thresh_ maxthresh_ q_weight_ gentle_ queue_in_bytes_ bytes_ mean_pktsize_
             linterm_ targetdelay_} {
    puts "Queue/RED $v [$q set $v]"
  }
  exit 0
}
if {$opt(defaults)} { $ns at 0 "show_defaults" }
$ns at $opt(seconds) "finish"
$ns run
