# TFRC cross-check network (docs/validation.md, "TFRC against ns-2.35"), driven by
# bench/peers/crosscheck_tfrc.py.
#
# A dumbbell r0 - r1 (BW_MBPS / DELAY_MS, DropTail or RED, a queue limit of QPKTS in both
# directions) shared by one TFRC flow (flow 0: Agent/TFRC -> Agent/TFRCSink, RFC 5348's
# equation-based rate control as ns-2.35 implements it) and TCP flows 1..TCP (Agent/TCP/Sack1 ->
# Agent/TCPSink/Sack1, `window_ 100000`, one ACK per data packet). Every flow has its own sender
# and receiver hosts: s_i - r0 (ACCESS_MBPS, 1 ms, queue 100000) and r1 - d_i (ACCESS_MBPS,
# 1 ms). Both transports send SIZE-byte payloads with HDR bytes of header (TCP: `packetSize_`
# plus `tcpip_base_hdr_size_`; TFRC: `packetSize_` plus `headersize_` with `useHeaders_ true`),
# so a TFRC/TCP throughput ratio compares like with like. Flow i starts at 0.01 * i s plus a
# uniform random time in [0, JITTER] s.
#
# usage: ns ns2_tfrc.tcl key=value ...
#   seed=K        seed ns-2's default RNG with K, then one `next-substream` (as ns2_tcp_matrix.tcl:
#                 MRG32k3a's first draws from raw small seeds are nearly proportional to the seed).
#                 Start times, RED's drop decisions and the loss model draw from it; TFRC's own
#                 send-time randomisation is off in ns-2.35 (`overhead_ 0`). Omitted: ns-2's
#                 default seed.
#   time=S        simulated seconds (200)
#   warmup=S      the first S seconds are not measured (20)
#   bw=MBPS delay=MS q=PKTS   the bottleneck r0 <-> r1 (10, 20, 53: one bandwidth-delay product
#                 of 1040-byte packets over the 44 ms base RTT)
#   aqm=droptail|red          red: Queue/RED with every ns-2.35 default (automatic q_weight_ and
#                 thresholds for a 5 ms target delay, gentle, byte mode) except
#                 `mean_pktsize_` = SIZE + HDR, so thresholds and the hard limit (QPKTS x
#                 mean_pktsize_ bytes) are in whole data packets
#   thresh=P maxthresh=P      with aqm=red: RED's thresh_ and maxthresh_ in packets instead of
#                 the automatic ones (0, 0: automatic), e.g. Floyd, Handley, Padhye and Widmer
#                 (2000)'s BDP/10 and BDP/3
#   qweight=W     with aqm=red: RED's q_weight_ instead of the automatic one (0: automatic)
#   tcp=N         TCP SACK flows beside the TFRC flow (0)
#   loss=P        Bernoulli loss with probability P on r0 -> r1 (ErrorModel, unit pkt, after the
#                 queue and the link: `$ns link-lossmodel`) (0 = none)
#   access=MBPS   access link rate (1000)
#   jitter=S      start-time jitter bound (1)
#   size=B hdr=B  payload and header bytes of every data packet (1000, 40)
#   defaults=1    print the variables of the agents (and of RED) that this run would use, one
#                 `CLASS VARIABLE VALUE` line each, and exit without running (0)
#
# Output. The TFRC sink runs with `printLoss_ 1`: each time it computes the loss event rate it
# puts in a feedback report (`est_loss_WALI`, the RFC 5348 average loss interval) it prints
#   time: T loss_rate: P
# (ns-2's C code, stdout; with other `sample` lines). At the end the script prints, after an empty
# line (C and Tcl buffer stdout apart, so a C line may be split around it), one line
#   result k v k v ...
# whose keys are, over the measured window [WARMUP, TIME] unless said otherwise:
#   starts        start time of flow 0 (TFRC), 1, ... (s), comma-separated
#   mbps          throughput of each flow, comma-separated, flow 0 first: payload bytes
#                 delivered at its receiver x 8 / (TIME - WARMUP) / 1e6 (TFRC: packets the sink
#                 received, its `bytes_` / (SIZE + HDR); TCP: the sender's `ack_`, segments
#                 acknowledged in order)
#   tfrc_sent     TFRC data packets sent (the sender's `ndatapack_`)
#   tfrc_lost     TFRC data packets lost on r0 -> r1 (queue drops, RED's early drops and loss-model
#                 losses, from a drop trace of that link)
#   loss_events   loss events of TFRC that began in the window, from the same drop trace by
#                 RFC 5348 section 5.2: a loss starts a new event when it comes more than one RTT
#                 (rtt_mean below) after the first loss of the current event; losses are timed
#                 when they are dropped, all at the same point of the path
#   p_trace       loss_events / tfrc_sent
#   loss_rate     tfrc_lost / tfrc_sent
#   rtt_mean      base RTT plus the bottleneck's mean queueing delay (its time-averaged bytes
#                 waiting x 8 / BW) (s): every flow's mean RTT, TFRC's included, which ns-2 keeps
#                 in no variable Tcl can read
#   true_loss     the sender's `true_loss_rate_`: the sink's packets lost / (received + lost),
#                 since the start, as of its last report
#   drops         packets dropped by the queues of r0 <-> r1 (both directions, all flows)
#   link_losses   packets the loss model dropped (all flows)
#   red           with aqm=red: q_weight_,thresh_,maxthresh_ as ns-2 derived them
set opt(seed) ""
set opt(time) 200
set opt(warmup) 20
set opt(bw) 10
set opt(delay) 20
set opt(q) 53
set opt(aqm) droptail
set opt(tcp) 0
set opt(thresh) 0
set opt(qweight) 0
set opt(maxthresh) 0
set opt(loss) 0
set opt(access) 1000
set opt(jitter) 1
set opt(size) 1000
set opt(hdr) 40
set opt(defaults) 0
foreach a $argv {
  set kv [split $a =]
  if {[llength $kv] != 2 || ![info exists opt([lindex $kv 0])]} {
    puts stderr "bad argument $a; keys: [lsort [array names opt]]"
    exit 2
  }
  set opt([lindex $kv 0]) [lindex $kv 1]
}
if {$opt(warmup) < 0 || $opt(warmup) >= $opt(time)} {
  puts stderr "warmup=$opt(warmup) must be in \[0, time)"
  exit 2
}
set wire [expr {$opt(size) + $opt(hdr)}]
switch -- $opt(aqm) {
  droptail { set qtype DropTail }
  red {
    set qtype RED
    Queue/RED set mean_pktsize_ $wire
    if {$opt(qweight) > 0} { Queue/RED set q_weight_ $opt(qweight) }
    if {$opt(thresh) > 0} { Queue/RED set thresh_ $opt(thresh) }
    if {$opt(maxthresh) > 0} { Queue/RED set maxthresh_ $opt(maxthresh) }
  }
  default { puts stderr "aqm=$opt(aqm): must be droptail or red"; exit 2 }
}
set ns [new Simulator]
if {$opt(seed) ne ""} {
  $defaultRNG seed $opt(seed)
  $defaultRNG next-substream
}
set r0 [$ns node]
set r1 [$ns node]
$ns duplex-link $r0 $r1 $opt(bw)Mb $opt(delay)ms $qtype
$ns queue-limit $r0 $r1 $opt(q)
$ns queue-limit $r1 $r0 $opt(q)
set tracefile [file join [expr {[info exists env(TMPDIR)] ? $env(TMPDIR) : "/tmp"}] "ns2_tfrc.[pid].tr"]
set trfd [open $tracefile w]
# The queue drops of a link (RED's early drops too) go through its drop head: trace them there,
# then count them.
set dropmons {}
proc droppath {a b traced} {
  global ns dropmons trfd
  set m [new QueueMonitor]
  set snoop [new SnoopQueue/Drop]
  $snoop set-monitor $m
  $snoop target [$ns set nullAgent_]
  set head [[$ns link $a $b] set drophead_]
  if {$traced} {
    set t [$ns create-trace Drop $trfd $a $b]
    $t target $snoop
    $head target $t
  } else {
    $head target $snoop
  }
  lappend dropmons $m
}
droppath $r0 $r1 1
droppath $r1 $r0 0
# Time-integral of the bytes waiting at r0 -> r1, for the mean queueing delay.
set qmon [new QueueMonitor]
set qint [new Integrator]
$qmon set-bytes-integrator $qint
set ql [$ns link $r0 $r1]
$ql attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] [new SnoopQueue/Drop] $qmon
set lossmon ""
if {$opt(loss) > 0} {
  set em [new ErrorModel]
  $em unit pkt
  $em set rate_ $opt(loss)
  set u [new RandomVariable/Uniform]
  $u use-rng $defaultRNG
  $em ranvar $u
  $ns link-lossmodel $em $r0 $r1
  set lossmon [new QueueMonitor]
  set lsnoop [new SnoopQueue/Drop]
  $lsnoop set-monitor $lossmon
  $lsnoop target [$ns set nullAgent_]
  set lt [$ns create-trace Drop $trfd $r0 $r1]
  $lt target $lsnoop
  $em drop-target $lt
}
set startrv [new RandomVariable/Uniform]
$startrv use-rng $defaultRNG
set nflows [expr {$opt(tcp) + 1}]
for {set i 0} {$i < $nflows} {incr i} {
  set s($i) [$ns node]
  set d($i) [$ns node]
  $ns duplex-link $s($i) $r0 $opt(access)Mb 1ms DropTail
  $ns duplex-link $r1 $d($i) $opt(access)Mb 1ms DropTail
  $ns queue-limit $s($i) $r0 100000
  if {$i == 0} {
    set snd($i) [new Agent/TFRC]
    $snd($i) set packetSize_ $opt(size)
    $snd($i) set headersize_ $opt(hdr)
    $snd($i) set useHeaders_ true
    set rcv($i) [new Agent/TFRCSink]
    $rcv($i) set printLoss_ 1
  } else {
    set snd($i) [new Agent/TCP/Sack1]
    $snd($i) set packetSize_ $opt(size)
    $snd($i) set tcpip_base_hdr_size_ $opt(hdr)
    $snd($i) set window_ 100000
    set rcv($i) [new Agent/TCPSink/Sack1]
  }
  $snd($i) set fid_ $i
  $ns attach-agent $s($i) $snd($i)
  $ns attach-agent $d($i) $rcv($i)
  $ns connect $snd($i) $rcv($i)
  set start($i) [expr {0.01 * $i + ($opt(jitter) > 0 ? $opt(jitter) * [$startrv value] : 0)}]
  if {$i == 0} {
    $ns at $start($i) "$snd($i) start"
  } else {
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $snd($i)
    $ns at $start($i) "$ftp($i) start"
  }
}
# Packets delivered so far: TFRC from its sink's byte count, TCP from the cumulative ACK.
proc delivered {i} {
  global snd rcv wire
  if {$i == 0} { return [expr {[$rcv(0) set bytes_] / $wire}] }
  set a [$snd($i) set ack_]
  return [expr {$a < 0 ? 0 : $a}]
}
proc mark {} {
  global nflows base_pkts base_sent base_qsum snd qint
  for {set i 0} {$i < $nflows} {incr i} { set base_pkts($i) [delivered $i] }
  set base_sent [$snd(0) set ndatapack_]
  set base_qsum [$qint set sum_]
}
$ns at $opt(warmup) "mark"
# RFC 5348 section 5.2 on the drop trace: TFRC's losses (flow id 0, data packets) grouped into
# events that last one RTT from their first loss; returns {lost events} in [from, to].
proc loss_events {path rtt from to} {
  set fd [open $path r]
  set lost 0
  set events 0
  set evstart -1e9
  while {[gets $fd line] >= 0} {
    set w [split $line " "]
    if {[lindex $w 0] ne "d" || [lindex $w 7] != 0 || [lindex $w 4] ne "tcpFriend"} { continue }
    set t [lindex $w 1]
    set first [expr {$t > $evstart + $rtt}]
    if {$first} { set evstart $t }
    if {$t >= $from && $t <= $to} {
      incr lost
      if {$first} { incr events }
    }
  }
  close $fd
  return [list $lost $events]
}
proc finish {} {
  global ns opt nflows start snd base_pkts base_sent base_qsum qint dropmons lossmon trfd
  global tracefile wire qtype
  set now [$ns now]
  set span [expr {$now - $opt(warmup)}]
  set mbps {}
  for {set i 0} {$i < $nflows} {incr i} {
    set n [expr {[delivered $i] - $base_pkts($i)}]
    lappend mbps [format %.6f [expr {$n * $opt(size) * 8.0 / $span / 1e6}]]
  }
  set sent [expr {[$snd(0) set ndatapack_] - $base_sent}]
  set qbytes [expr {([$qint set sum_] - $base_qsum) / $span}]
  set bw [expr {$opt(bw) * 1e6}]
  set acc [expr {$opt(access) * 1e6}]
  # Two access hops and the bottleneck each way, a data packet out and a 40-byte ACK back.
  set base [expr {2 * (0.002 + $opt(delay) / 1000.0) + $wire * 8.0 * (2 / $acc + 1 / $bw)
                  + 40 * 8.0 * (2 / $acc + 1 / $bw)}]
  set rtt [expr {$base + $qbytes * 8.0 / $bw}]
  close $trfd
  lassign [loss_events $tracefile $rtt $opt(warmup) $now] lost events
  file delete $tracefile
  set drops 0
  foreach m $dropmons { incr drops [$m set pdrops_] }
  set llost [expr {$lossmon eq "" ? 0 : [$lossmon set pdrops_]}]
  set starts {}
  for {set i 0} {$i < $nflows} {incr i} { lappend starts [format %.9f $start($i)] }
  set line "result starts [join $starts ,] mbps [join $mbps ,] tfrc_sent $sent tfrc_lost $lost"
  append line " loss_events $events p_trace [expr {$sent > 0 ? double($events) / $sent : 0}]"
  append line " loss_rate [expr {$sent > 0 ? double($lost) / $sent : 0}] rtt_mean [format %.6f $rtt]"
  append line " rtt_base [format %.6f $base] true_loss [$snd(0) set true_loss_rate_]"
  append line " drops $drops link_losses $llost"
  if {$qtype eq "RED"} {
    set q [[$ns link $::r0 $::r1] queue]
    append line " red [$q set q_weight_],[$q set thresh_],[$q set maxthresh_]"
  }
  puts "\n$line"
  exit 0
}
# The values the agents of this run hold (ns-2's defaults, with the settings above), to record
# what the reference numbers were made with.
proc show_defaults {} {
  global snd rcv nflows qtype ns r0 r1 trfd tracefile
  close $trfd
  file delete $tracefile
  set vars(Agent/TFRC) {packetSize_ headersize_ useHeaders_ df_ tcp_tick_ InitRate_ overhead_
    ssmult_ bval_ ca_ conservative_ minrto_ SndrType_ oldCode_ rate_init_ rate_init_option_
    slow_increase_ idleFix_ maxHeavyRounds_ scmult_ voip_ fsize_ ecn_ srtt_init_ rttvar_init_
    rtxcur_init_ rttvar_exp_ T_SRTT_BITS T_RTTVAR_BITS}
  set vars(Agent/TFRCSink) {packetSize_ InitHistorySize_ NumFeedback_ AdjustHistoryAfterSS_
    printLoss_ algo_ PreciseLoss_ numPkts_ minDiscountRatio_ NumSamples_ discount_ smooth_
    ShortIntervals_ ShortRtts_}
  set vars(Agent/TCP/Sack1) {packetSize_ tcpip_base_hdr_size_ window_ windowInit_ maxburst_
    tcpTick_ minrto_ maxrto_ numdupacks_ singledup_ syn_ delay_growth_ timestamps_}
  set vars(Agent/TCPSink/Sack1) {packetSize_ maxSackBlocks_}
  set objs [list Agent/TFRC $snd(0) Agent/TFRCSink $rcv(0)]
  if {$nflows > 1} { lappend objs Agent/TCP/Sack1 $snd(1) Agent/TCPSink/Sack1 $rcv(1) }
  foreach {cls o} $objs {
    foreach v $vars($cls) { puts "$cls $v [$o set $v]" }
  }
  if {$qtype eq "RED"} {
    set q [[$ns link $r0 $r1] queue]
    foreach v {limit_ thresh_ maxthresh_ q_weight_ gentle_ queue_in_bytes_ bytes_ mean_pktsize_
               linterm_ wait_ targetdelay_ setbit_} {
      puts "Queue/RED $v [$q set $v]"
    }
  }
  exit 0
}
if {$opt(defaults)} { show_defaults }
$ns at $opt(time) "finish"
$ns run
