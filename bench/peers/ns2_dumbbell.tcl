# Reference dumbbell for side-by-side speed/result comparison.
# usage: ns dumbbell.tcl NFLOWS SIMTIME BW_MBPS DELAY_MS QPKTS TCPTYPE
# prints: acked_pkts N goodput_mbps X drops D
#   (D = packets dropped by the bottleneck queue r0 -> r1; counted by a monitor on the
#    link's drop path only, so packets that are not dropped pass no extra object)
set nflows [lindex $argv 0]
set simtime [lindex $argv 1]
set bw [lindex $argv 2]
set delay [lindex $argv 3]
set qlim [lindex $argv 4]
set tcptype [lindex $argv 5]
set ns [new Simulator]
set r0 [$ns node]
set r1 [$ns node]
$ns duplex-link $r0 $r1 ${bw}Mb ${delay}ms DropTail
$ns queue-limit $r0 $r1 $qlim
set dropmon [new QueueMonitor]
set dropsnoop [new SnoopQueue/Drop]
$dropsnoop set-monitor $dropmon
$dropsnoop target [$ns set nullAgent_]
[[$ns link $r0 $r1] set drophead_] target $dropsnoop
set sinks {}
for {set i 0} {$i < $nflows} {incr i} {
  set s($i) [$ns node]
  set d($i) [$ns node]
  $ns duplex-link $s($i) $r0 1000Mb 1ms DropTail
  $ns duplex-link $r1 $d($i) 1000Mb 1ms DropTail
  $ns queue-limit $s($i) $r0 100000
  set tcp($i) [new Agent/TCP/$tcptype]
  $tcp($i) set packetSize_ 1460
  $tcp($i) set window_ 100000
  $ns attach-agent $s($i) $tcp($i)
  set sink($i) [new Agent/TCPSink]
  $ns attach-agent $d($i) $sink($i)
  $ns connect $tcp($i) $sink($i)
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  $ns at [expr 0.01 * $i] "$ftp($i) start"
}
proc finish {} {
  global nflows tcp ns simtime dropmon
  set tot 0
  for {set i 0} {$i < $nflows} {incr i} {
    set a [$tcp($i) set ack_]
    set tot [expr $tot + $a]
  }
  puts "acked_pkts $tot goodput_mbps [expr $tot * 1460.0 * 8 / $simtime / 1e6] drops [$dropmon set pdrops_]"
  exit 0
}
$ns at $simtime "finish"
$ns run
