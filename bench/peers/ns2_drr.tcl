# DRR cross-check dumbbell (docs/validation.md, "DRR").
# The network is bench/peers/ns2_red.tcl's (Agent/TCP/Newreno, `packetSize_ 1460`,
# `window_ 100000`, one ACK per packet, flows starting 10 ms apart) with one flow per given
# access delay: flow i's sender reaches r0 over a 1000 Mb link of ACCESS_MS(i) ms, its receiver
# hangs off r1 over 1000 Mb / 1 ms. The bottleneck queue r0 -> r1 is Queue/DRR: `blimit_`
# BLIMIT bytes shared by all flows (when exceeded, DRR drops from the head of the flow holding
# the most bytes), `quantum_` QUANTUM bytes for every flow, `buckets_` 64, `mask_` 0 (a queue
# per source node, so per flow).
#
# usage: ns ns2_drr.tcl SIMTIME BW_MBPS DELAY_MS BLIMIT QUANTUM ACCESS_MS...
# prints one line per flow and a total line:
#   flow I acked_pkts N goodput_mbps X drops D retransmits R
#   total acked_pkts N goodput_mbps X drops D utilization U
# N: the sender's `ack_` (1460-byte segments delivered in order); D: the flow's packets dropped
# at the bottleneck (flow monitor, by fid); R: the sender's `nrexmitpack_`; U: the bottleneck's
# busy fraction.
if {[llength $argv] < 6} {
  puts stderr "usage: ns ns2_drr.tcl SIMTIME BW_MBPS DELAY_MS BLIMIT QUANTUM ACCESS_MS..."
  exit 2
}
set simtime [lindex $argv 0]
set bw [lindex $argv 1]
set delay [lindex $argv 2]
set blimit [lindex $argv 3]
set quantum [lindex $argv 4]
set access [lrange $argv 5 end]
set nflows [llength $access]
Queue/DRR set blimit_ $blimit
Queue/DRR set quantum_ $quantum
Queue/DRR set buckets_ 64
Queue/DRR set mask_ 0
set ns [new Simulator]
set r0 [$ns node]
set r1 [$ns node]
$ns duplex-link $r0 $r1 ${bw}Mb ${delay}ms DRR
set fmon [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $r0 $r1] $fmon
for {set i 0} {$i < $nflows} {incr i} {
  set s($i) [$ns node]
  set d($i) [$ns node]
  $ns duplex-link $s($i) $r0 1000Mb [lindex $access $i]ms DropTail
  $ns duplex-link $r1 $d($i) 1000Mb 1ms DropTail
  $ns queue-limit $s($i) $r0 100000
  $ns queue-limit $r1 $d($i) 100000
  set tcp($i) [new Agent/TCP/Newreno]
  $tcp($i) set packetSize_ 1460
  $tcp($i) set window_ 100000
  $tcp($i) set fid_ [expr {$i + 1}]
  set sink($i) [new Agent/TCPSink]
  $ns attach-agent $s($i) $tcp($i)
  $ns attach-agent $d($i) $sink($i)
  $ns connect $tcp($i) $sink($i)
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  $ns at [expr 0.01 * $i] "$ftp($i) start"
}
proc finish {} {
  global nflows tcp simtime fmon bw
  set drops {}
  for {set i 0} {$i < $nflows} {incr i} {
    set dropped($i) 0
  }
  foreach f [$fmon flows] {
    set i [expr {[$f set flowid_] - 1}]
    if {$i >= 0 && $i < $nflows} {
      set dropped($i) [$f set pdrops_]
    }
  }
  set tot 0
  set totdrops 0
  for {set i 0} {$i < $nflows} {incr i} {
    set a [$tcp($i) set ack_]
    set tot [expr {$tot + $a}]
    set totdrops [expr {$totdrops + $dropped($i)}]
    puts "flow $i acked_pkts $a goodput_mbps [expr {$a * 1460.0 * 8 / $simtime / 1e6}] drops $dropped($i) retransmits [$tcp($i) set nrexmitpack_]"
  }
  set util [expr {[$fmon set bdepartures_] * 8.0 / ($bw * 1e6) / $simtime}]
  puts "total acked_pkts $tot goodput_mbps [expr {$tot * 1460.0 * 8 / $simtime / 1e6}] drops [$fmon set pdrops_] utilization $util"
  exit 0
}
$ns at $simtime "finish"
$ns run
