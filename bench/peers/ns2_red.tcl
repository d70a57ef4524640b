# RED cross-check dumbbell (docs/validation.md, "RED").
# The network is bench/peers/ns2_dumbbell.tcl's: NFLOWS Agent/TCP/Newreno flows, each with its
# own 1000 Mb / 1 ms access links, over a BW_MBPS / DELAY_MS bottleneck, flows starting 10 ms
# apart, `packetSize_ 1460`, `window_ 100000`, one ACK per packet. The bottleneck queue r0 -> r1
# is Queue/RED with a hard limit of QPKTS packets (`limit_`).
#
# usage: ns ns2_red.tcl NFLOWS SIMTIME BW_MBPS DELAY_MS QPKTS explicit MINTH MAXTH MAXP WQ
#        ns ns2_red.tcl NFLOWS SIMTIME BW_MBPS DELAY_MS QPKTS auto
#   explicit  packet mode (bytes_ false, queue_in_bytes_ false), the given thresh_, maxthresh_,
#             linterm_ = 1/MAXP and q_weight_; everything else ns-2's default (gentle_ true,
#             wait_ true).
#   auto      every Queue/RED default of ns-2.35: q_weight_ -1, thresh_ 0, maxthresh_ 0,
#             byte mode with mean_pktsize_ 500 (so the hard limit is QPKTS x 500 bytes).
# prints one summary line:
#   acked_pkts N goodput_mbps X drops D early_drops E ave_mean A queue_mean Q utilization U
#   w_q W min_th L max_th H
# N: the senders' `ack_` summed (1460-byte data packets delivered in order); D: packets dropped
# by the bottleneck queue; E: of those, RED's unforced (random) drops (QueueMonitor/ED
# `epdrops_`); A: RED's average `ave_` sampled every 10 ms and averaged, in packets (divided by
# mean_pktsize_ in byte mode); Q: time-averaged packets waiting (not counting the one being
# transmitted); U: the bottleneck's busy fraction; W, L, H: the queue's q_weight_, thresh_ and
# maxthresh_ after ns-2 derived them.
if {[llength $argv] < 6} {
  puts stderr "usage: ns ns2_red.tcl NFLOWS SIMTIME BW_MBPS DELAY_MS QPKTS explicit|auto \[MINTH MAXTH MAXP WQ\]"
  exit 2
}
set nflows [lindex $argv 0]
set simtime [lindex $argv 1]
set bw [lindex $argv 2]
set delay [lindex $argv 3]
set qlim [lindex $argv 4]
set mode [lindex $argv 5]
if {$mode eq "explicit"} {
  if {[llength $argv] < 10} {
    puts stderr "explicit needs MINTH MAXTH MAXP WQ"
    exit 2
  }
  Queue/RED set bytes_ false
  Queue/RED set queue_in_bytes_ false
  Queue/RED set mean_pktsize_ 1500
  Queue/RED set thresh_ [lindex $argv 6]
  Queue/RED set maxthresh_ [lindex $argv 7]
  Queue/RED set linterm_ [expr {1.0 / [lindex $argv 8]}]
  Queue/RED set q_weight_ [lindex $argv 9]
} elseif {$mode ne "auto"} {
  puts stderr "mode must be explicit or auto"
  exit 2
}
set ns [new Simulator]
set r0 [$ns node]
set r1 [$ns node]
$ns duplex-link $r0 $r1 ${bw}Mb ${delay}ms RED
$ns queue-limit $r0 $r1 $qlim
set redq [[$ns link $r0 $r1] queue]
# A QueueMonitor/ED on the bottleneck; RED's unforced drops reach it through an EDrop snoop
# (otherwise they would bypass the monitor and its occupancy would drift).
set qmon [new QueueMonitor/ED]
[$ns link $r0 $r1] attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] [new SnoopQueue/Drop] $qmon
set qint [new Integrator]
$qmon set-pkts-integrator $qint
set edrop [new SnoopQueue/EDrop]
$edrop set-monitor $qmon
$edrop target [$ns set nullAgent_]
$redq early-drop-target $edrop
for {set i 0} {$i < $nflows} {incr i} {
  set s($i) [$ns node]
  set d($i) [$ns node]
  $ns duplex-link $s($i) $r0 1000Mb 1ms DropTail
  $ns duplex-link $r1 $d($i) 1000Mb 1ms DropTail
  $ns queue-limit $s($i) $r0 100000
  set tcp($i) [new Agent/TCP/Newreno]
  $tcp($i) set packetSize_ 1460
  $tcp($i) set window_ 100000
  set sink($i) [new Agent/TCPSink]
  $ns attach-agent $s($i) $tcp($i)
  $ns attach-agent $d($i) $sink($i)
  $ns connect $tcp($i) $sink($i)
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  $ns at [expr 0.01 * $i] "$ftp($i) start"
}
set avesum 0.0
set aven 0
set tick 0.01
proc sample {} {
  global ns redq avesum aven tick
  set avesum [expr {$avesum + [$redq set ave_]}]
  incr aven
  $ns at [expr {[$ns now] + $tick}] "sample"
}
$ns at 0 "sample"
proc finish {} {
  global nflows tcp simtime qmon qint bw redq avesum aven
  set tot 0
  for {set i 0} {$i < $nflows} {incr i} {
    set tot [expr $tot + [$tcp($i) set ack_]]
  }
  set unit [expr {[$redq set queue_in_bytes_] ? [$redq set mean_pktsize_] : 1}]
  set ave [expr {$avesum / $aven / $unit}]
  set qmean [expr {[$qint set sum_] / $simtime}]
  set util [expr {[$qmon set bdepartures_] * 8.0 / ($bw * 1e6) / $simtime}]
  puts "acked_pkts $tot goodput_mbps [expr $tot * 1460.0 * 8 / $simtime / 1e6] drops [$qmon set pdrops_] early_drops [$qmon set epdrops_] ave_mean $ave queue_mean $qmean utilization $util w_q [$redq set q_weight_] min_th [$redq set thresh_] max_th [$redq set maxthresh_]"
  exit 0
}
$ns at $simtime "finish"
$ns run
