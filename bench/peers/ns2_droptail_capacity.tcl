# How many packets does an ns-2 DropTail queue with `queue-limit Q` hold?
# A burst of 20 back-to-back packets (1 Gbps access) meets an idle 1 Mbps link whose queue
# limit is Q; the burst is much faster than the link, so the number that gets through is the
# number the link can hold at once (the packet in transmission plus the waiting ones).
# usage: ns ns2_droptail_capacity.tcl Q   ->  qlim Q arrivals 20 departures D drops 20-D
set Q [lindex $argv 0]
set ns [new Simulator]
set a [$ns node]; set b [$ns node]; set c [$ns node]
$ns duplex-link $a $b 1000Mb 0ms DropTail
$ns queue-limit $a $b 100000
$ns duplex-link $b $c 1Mb 0ms DropTail
$ns queue-limit $b $c $Q
set qm [$ns monitor-queue $b $c ""]
set u [new Agent/UDP]; $u set packetSize_ 1500
$ns attach-agent $a $u
set n [new Agent/Null]; $ns attach-agent $c $n
$ns connect $u $n
set cbr [new Application/Traffic/CBR]
$cbr attach-agent $u
$cbr set packetSize_ 1500
$cbr set interval_ 0.00001
$cbr set maxpkts_ 20
$ns at 0.0 "$cbr start"
proc finish {} {
  global qm Q
  puts "qlim $Q arrivals [$qm set parrivals_] departures [$qm set pdepartures_] drops [$qm set pdrops_]"
  exit 0
}
$ns at 10 finish
$ns run
