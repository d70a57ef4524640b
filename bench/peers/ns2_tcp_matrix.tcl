# Extended TCP cross-check network (docs/validation.md, "TCP against ns-2.35: the extended
# cross-check"), driven by bench/peers/crosscheck_tcp.py.
#
# A chain of ROUTERS routers r0 - r1 - ... joined by identical duplex links (BW_MBPS / DELAY_MS,
# DropTail or RED, a queue limit of QPKTS in both directions): ROUTERS = 2 is the dumbbell of
# ns2_dumbbell.tcl / ns2_algorithms.tcl / ns2_red.tcl, ROUTERS > 2 a parking lot. Every flow has
# its own sender and receiver hosts: s_i - r_FROM (ACCESS_MBPS, the flow's own delay, queue
# 100000) and r_TO - d_i (ACCESS_MBPS, 1 ms). `packetSize_ 1460`, `window_ 100000`, one ACK
# per data packet. Flow i starts at 0.01 * i s plus a uniform random time in [0, JITTER] s.
#
# usage: ns ns2_tcp_matrix.tcl key=value ...
#   seed=K        seed ns-2's default RNG with K (then one `next-substream`: with the raw small
#                 seeds 1, 2, 3 ... MRG32k3a's first draws are nearly proportional to the seed).
#                 Start times, RED's drop decisions, the loss model and each agent's RTT-clock
#                 phase (boot_time_) all draw from it. Omitted: ns-2's default seed (the runs of
#                 ns2_algorithms.tcl / ns2_red.tcl are reproduced with jitter=0).
#   time=S        simulated seconds (60)
#   bw=MBPS delay=MS q=PKTS          the router-to-router links (10, 20, 50)
#   aqm=droptail|red                 red: Queue/RED with every ns-2.35 default (automatic q_weight_
#                                    and thresholds, byte mode, mean_pktsize_ 500: the hard limit
#                                    is QPKTS x 500 bytes)
#   routers=N     routers in the chain (2)
#   flows=SPEC    one FROM:TO:DELAY_MS per flow, comma-separated (0:1:1): the routers the flow
#                 enters and leaves at and its sender's access delay
#   access=MBPS   access link rate (1000)
#   jitter=S      start-time jitter bound (0)
#   loss=P        uniform random loss with probability P on r0 -> r1 (ErrorModel, unit pkt, after
#                 the queue and the link: `$ns link-lossmodel`); its losses are counted apart
#                 from the queue drops (0 = none)
#   agent=A       Tahoe (Agent/TCP), Reno, Newreno, Sack1, Vegas (Agent/TCP/A, with Agent/TCPSink,
#                 Agent/TCPSink/Sack1 for Sack1), or Linux (Agent/TCP/Linux + select_ca CA, run as
#                 its authors recommend: timestamps_ true, Agent/TCPSink/Sack1 with
#                 ts_echo_rfc1323_ true, the Heap scheduler)
#   ca=NAME       with agent=Linux: the TCP-Linux algorithm (reno, cubic, bic, highspeed, htcp,
#                 scalable, vegas, compound, ...)
# prints one line per flow, then one summary line:
#   flow I start S acked_pkts N cwnd_mean W timeouts T rexmit_pkts R
#   drops D link_losses L
# N: the sender's `ack_` (1460-byte data packets delivered in order); W: `cwnd_` sampled every
# 10 ms from the flow's start, averaged; T: `nrexmit_`, the retransmission timeouts (every
# agent here increments it in its timeout handler only); R: `nrexmitpack_`, the retransmitted
# packets; D: packets dropped by the queues of the router-to-router links, both
# directions, RED's early drops included (drop-path snoops only); L: packets the loss model
# dropped.
set opt(seed) ""
set opt(time) 60
set opt(bw) 10
set opt(delay) 20
set opt(q) 50
set opt(aqm) droptail
set opt(routers) 2
set opt(flows) 0:1:1
set opt(access) 1000
set opt(jitter) 0
set opt(loss) 0
set opt(agent) Newreno
set opt(ca) ""
foreach a $argv {
  set kv [split $a =]
  if {[llength $kv] != 2 || ![info exists opt([lindex $kv 0])]} {
    puts stderr "bad argument $a; keys: [lsort [array names opt]]"
    exit 2
  }
  set opt([lindex $kv 0]) [lindex $kv 1]
}
set linux [expr {$opt(agent) eq "Linux"}]
if {$linux && $opt(ca) eq ""} {
  puts stderr "agent=Linux needs ca=NAME"
  exit 2
}
switch -- $opt(aqm) {
  droptail { set qtype DropTail }
  red { set qtype RED }
  default { puts stderr "aqm must be droptail or red"; exit 2 }
}
set ns [new Simulator]
if {$linux} { $ns use-scheduler Heap }
if {$opt(seed) ne ""} {
  $defaultRNG seed $opt(seed)
  $defaultRNG next-substream
}
set simtime $opt(time)
for {set k 0} {$k < $opt(routers)} {incr k} { set r($k) [$ns node] }
# Drops on the router-to-router links, both directions, counted on each link's drop path.
set dropmons {}
proc dropmon {a b} {
  global ns dropmons
  set m [new QueueMonitor]
  set snoop [new SnoopQueue/Drop]
  $snoop set-monitor $m
  $snoop target [$ns set nullAgent_]
  [[$ns link $a $b] set drophead_] target $snoop
  lappend dropmons $m
}
for {set k 1} {$k < $opt(routers)} {incr k} {
  set a $r([expr {$k - 1}])
  $ns duplex-link $a $r($k) ${opt(bw)}Mb ${opt(delay)}ms $qtype
  $ns queue-limit $a $r($k) $opt(q)
  $ns queue-limit $r($k) $a $opt(q)
  dropmon $a $r($k)
  dropmon $r($k) $a
}
set lossmon ""
if {$opt(loss) > 0} {
  set em [new ErrorModel]
  $em unit pkt
  $em set rate_ $opt(loss)
  set u [new RandomVariable/Uniform]
  $u use-rng $defaultRNG
  $em ranvar $u
  $ns link-lossmodel $em $r(0) $r(1)
  # link-lossmodel sends the losses to the link's drop head; count them apart instead.
  set lossmon [new QueueMonitor]
  set lsnoop [new SnoopQueue/Drop]
  $lsnoop set-monitor $lossmon
  $lsnoop target [$ns set nullAgent_]
  $em drop-target $lsnoop
}
set startrv [new RandomVariable/Uniform]
$startrv use-rng $defaultRNG
set nflows 0
foreach spec [split $opt(flows) ,] {
  lassign [split $spec :] from to adelay
  set i $nflows
  incr nflows
  set s($i) [$ns node]
  set d($i) [$ns node]
  $ns duplex-link $s($i) $r($from) ${opt(access)}Mb ${adelay}ms DropTail
  $ns duplex-link $r($to) $d($i) ${opt(access)}Mb 1ms DropTail
  $ns queue-limit $s($i) $r($from) 100000
  if {$opt(agent) eq "Tahoe"} {
    set tcp($i) [new Agent/TCP]
  } else {
    set tcp($i) [new Agent/TCP/$opt(agent)]
  }
  $tcp($i) set packetSize_ 1460
  $tcp($i) set window_ 100000
  if {$linux} {
    $tcp($i) set timestamps_ true
    set sink($i) [new Agent/TCPSink/Sack1]
    $sink($i) set ts_echo_rfc1323_ true
  } elseif {$opt(agent) eq "Sack1"} {
    set sink($i) [new Agent/TCPSink/Sack1]
  } else {
    set sink($i) [new Agent/TCPSink]
  }
  $ns attach-agent $s($i) $tcp($i)
  $ns attach-agent $d($i) $sink($i)
  $ns connect $tcp($i) $sink($i)
  if {$linux} { $ns at 0 "$tcp($i) select_ca $opt(ca)" }
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  set start($i) [expr {0.01 * $i + ($opt(jitter) > 0 ? $opt(jitter) * [$startrv value] : 0)}]
  $ns at $start($i) "$ftp($i) start"
  set wsum($i) 0.0
  set wn($i) 0
}
# Time-averaged cwnd: each flow's cwnd_ sampled every 10 ms from its start.
proc sample {i} {
  global ns tcp wsum wn
  set wsum($i) [expr {$wsum($i) + [$tcp($i) set cwnd_]}]
  incr wn($i)
  $ns at [expr {[$ns now] + 0.01}] "sample $i"
}
for {set i 0} {$i < $nflows} {incr i} { $ns at $start($i) "sample $i" }
proc finish {} {
  global nflows tcp start wsum wn dropmons lossmon
  for {set i 0} {$i < $nflows} {incr i} {
    set w [expr {$wn($i) > 0 ? $wsum($i) / $wn($i) : 0}]
    puts "flow $i start $start($i) acked_pkts [$tcp($i) set ack_] cwnd_mean $w timeouts [$tcp($i) set nrexmit_] rexmit_pkts [$tcp($i) set nrexmitpack_]"
  }
  set drops 0
  foreach m $dropmons { incr drops [$m set pdrops_] }
  set lost [expr {$lossmon eq "" ? 0 : [$lossmon set pdrops_]}]
  puts "drops $drops link_losses $lost"
  exit 0
}
$ns at $simtime "finish"
$ns run
