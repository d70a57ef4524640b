# Congestion-control cross-check dumbbell (docs/validation.md, "Congestion-control algorithms").
# The network is bench/peers/ns2_dumbbell.tcl's: NFLOWS flows, each with its own 1000 Mb / 1 ms
# access links, over a BW_MBPS / DELAY_MS bottleneck with a DropTail queue of QPKTS packets,
# flows starting 10 ms apart, `packetSize_ 1460`, `window_ 100000`.
#
# usage: ns ns2_algorithms.tcl NFLOWS SIMTIME BW_MBPS DELAY_MS QPKTS AGENT [CA]
#   AGENT  an ns-2 agent: Vegas, Newreno, ... (native, with Agent/TCPSink), or Linux
#   CA     with AGENT = Linux: the TCP-Linux algorithm for `select_ca` (reno, vegas, bic,
#          cubic, highspeed, scalable, htcp, compound, ...). TCP-Linux runs as its authors
#          recommend: `timestamps_ true`, an `Agent/TCPSink/Sack1` sink with
#          `ts_echo_rfc1323_ true`, the Heap scheduler.
# prints, one line per flow, then one summary line:
#   flow I acked_pkts N cwnd_mean W
#   acked_pkts N goodput_mbps X drops D queue_mean Q utilization U data_bytes B
# N: the sender's `ack_` (1460-byte data packets delivered in order); W: cwnd_ sampled every
# 10 ms from the flow's start, averaged; D: packets dropped by the bottleneck queue r0 -> r1;
# Q: time-averaged number of packets waiting in that queue (not counting the one being
# transmitted); U: the bottleneck's busy fraction; B: bytes of the first data packet seen
# on the bottleneck (the wire size of a data segment).
if {[llength $argv] < 6} {
  puts stderr "usage: ns ns2_algorithms.tcl NFLOWS SIMTIME BW_MBPS DELAY_MS QPKTS AGENT \[CA\]"
  exit 2
}
set nflows [lindex $argv 0]
set simtime [lindex $argv 1]
set bw [lindex $argv 2]
set delay [lindex $argv 3]
set qlim [lindex $argv 4]
set agent [lindex $argv 5]
set ca [lindex $argv 6]
set linux [expr {$agent eq "Linux"}]
if {$linux && $ca eq ""} {
  puts stderr "AGENT Linux needs a CA name"
  exit 2
}
set ns [new Simulator]
if {$linux} { $ns use-scheduler Heap }
set r0 [$ns node]
set r1 [$ns node]
$ns duplex-link $r0 $r1 ${bw}Mb ${delay}ms DropTail
$ns queue-limit $r0 $r1 $qlim
set qmon [$ns monitor-queue $r0 $r1 ""]
set qint [$qmon get-pkts-integrator]
for {set i 0} {$i < $nflows} {incr i} {
  set s($i) [$ns node]
  set d($i) [$ns node]
  $ns duplex-link $s($i) $r0 1000Mb 1ms DropTail
  $ns duplex-link $r1 $d($i) 1000Mb 1ms DropTail
  $ns queue-limit $s($i) $r0 100000
  set tcp($i) [new Agent/TCP/$agent]
  $tcp($i) set packetSize_ 1460
  $tcp($i) set window_ 100000
  if {$linux} {
    $tcp($i) set timestamps_ true
    set sink($i) [new Agent/TCPSink/Sack1]
    $sink($i) set ts_echo_rfc1323_ true
  } else {
    set sink($i) [new Agent/TCPSink]
  }
  $ns attach-agent $s($i) $tcp($i)
  $ns attach-agent $d($i) $sink($i)
  $ns connect $tcp($i) $sink($i)
  if {$linux} { $ns at 0 "$tcp($i) select_ca $ca" }
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  set start($i) [expr 0.01 * $i]
  $ns at $start($i) "$ftp($i) start"
  set wsum($i) 0.0
  set wn($i) 0
}
# Time-averaged cwnd: sample every 10 ms, each flow from its start.
set tick 0.01
proc sample {} {
  global ns nflows tcp start wsum wn tick
  set now [$ns now]
  for {set i 0} {$i < $nflows} {incr i} {
    if {$now >= $start($i)} {
      set wsum($i) [expr {$wsum($i) + [$tcp($i) set cwnd_]}]
      incr wn($i)
    }
  }
  $ns at [expr {$now + $tick}] "sample"
}
$ns at 0 "sample"
proc finish {} {
  global nflows tcp ns simtime qmon qint wsum wn bw
  set tot 0
  for {set i 0} {$i < $nflows} {incr i} {
    set a [$tcp($i) set ack_]
    set tot [expr $tot + $a]
    set w [expr {$wn($i) > 0 ? $wsum($i) / $wn($i) : 0}]
    puts "flow $i acked_pkts $a cwnd_mean $w"
  }
  set qmean [expr {[$qint set sum_] / $simtime}]
  set util [expr {[$qmon set bdepartures_] * 8.0 / ($bw * 1e6) / $simtime}]
  set pk [expr {[$qmon set parrivals_] > 0 ? [$qmon set barrivals_] / double([$qmon set parrivals_]) : 0}]
  puts "acked_pkts $tot goodput_mbps [expr $tot * 1460.0 * 8 / $simtime / 1e6] drops [$qmon set pdrops_] queue_mean $qmean utilization $util mean_pkt_bytes $pk"
  exit 0
}
$ns at $simtime "finish"
$ns run
