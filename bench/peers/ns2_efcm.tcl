# The network of the EFCM study without EFCM (docs/validation.md, "The EFCM study network
# against ns-2.35"), driven by bench/peers/crosscheck_efcm.py.
#
# M. Savoric and H. Karl, "Performance Evaluation of an Improved Common Congestion Controller
# for WWW-based TCP Connections", Technical Report TKN-04-007, TU Berlin, 2004, section 3.1
# (network) and 3.2 (WWW workload), simulated there with ns-2.1b9. The same choices as
# flowshare's python/flowshare/reproduce/efcm_network.py (its default Options):
#
#   server (S1, S2, S3), BS1, router1  -- sender LAN, 100 Mbit/s, 0.5 us
#   BS2 - router1                        100 Mbit/s, 0.25 ms duplex link
#   router1 - router2                    100 Mbit/s, one-way RTT_MS/2 - 1 us (the two LANs'
#                                        0.5 us each), so the WWW paths' propagation RTT is RTT_MS
#   router2 - BR1                        100 Mbit/s, 0.25 ms duplex link
#   router2, R1, R2, R3, BR2           -- receiver LAN, 10 Mbit/s, 0.5 us
#
# Queues: 20 packets on every router interface (links and LAN interfaces), 50 on hosts. DropTail.
# The LANs (lan=KIND):
#   802_3  `$ns make-lan` with LL, Queue/DropTail, Mac/802_3 (CSMA/CD with binary exponential
#          backoff), Channel: the report's "Ethernet-type shared medium"
#   mac    `$ns make-lan` with the plain Mac: every station sends at its MAC's bandwidth_ (see
#          macbw) without carrier sense or collisions, so the stations do not share the
#          capacity
#   link   a hub node with a duplex point-to-point link per station: the router's link to the
#          hub at the LAN's rate (its queue: 20 at the router, 50 at the hub), each host's link
#          to the hub at 100 x the LAN's rate (queue 50 at the host), so the data towards the
#          hosts share one FIFO of the LAN's rate at the router, and the ACKs one at the hub
# unreliable=1: each packet a station of the receiver LAN receives from it (data at R1-R3 and
# BR2, ACKs at router2) is lost with probability 0.05 (ErrorModel, unit pkt, between the station's
# MAC and LL; for lan=link after the router-hub link, both directions, `$ns link-lossmodel`).
#
# TCP: Agent/TCP/Newreno -> Agent/TCPSink (one ACK per data packet), one connection per page
# from a pool of 4 agent pairs per sender, each reset before it is used again (`$tcp reset`,
# `$sink reset`), so that every page starts afresh: packetSize_ 1460, tcpip_base_hdr_size_ 40,
# windowInit_ 3, ssthresh_ 44 (after the agent's reset, which sets it to window_),
# window_ WINDOW, and ns-2.1b9-like defaults: tcpTick_ 0.1, rtxcur_init_ 6.0, syn_ false (no
# SYN packet before the data, as in ns-2.1b9), delay_growth_ false, maxburst_ 0; everything
# else ns-2.35's default (minrto_ 0.2, rfc2988_ true, maxrto_ 60). A page of B bytes is
# `advanceby ceil(B/1460)`: that many full-size segments.
#
# Workload: WWW=FILE, written by crosscheck_efcm.py with Table 3.1's distributions, holds
# for each WWW source S1, S2, S3 (S_i -> R_i, each one sequential source):
#   S1 start T               the source's first page opens at T s
#   S1 page BYTES GAP        the next page: BYTES bytes; the page after it opens GAP s after
#                            this one completes (a reading time, or the session gap after the
#                            session's last page)
# Background BS1 -> BR1, BS2 -> BR2: background=restart, one connection at a time, each of a
# Pareto number of bytes (ns-2's RandomVariable/Pareto, shape 1.7584, mean 70619 B, i.e. scale
# 30458 B), reopened the instant it completes; background=bulk, one FTP each.
#
# usage: ns ns2_efcm.tcl www=FILE key=value ...
#   www=FILE        the WWW workload (required)
#   rtt_ms=MS       minimum RTT of the WWW paths: 20, 60, 100, 500 (100)
#   unreliable=0|1  5 % loss on the receiver LAN (0)
#   lan=KIND        802_3, mac or link (802_3)
#   window=W        the agents' window_ (receiver window), segments (20)
#   background=K    restart or bulk (restart)
#   seconds=S       simulated seconds (2000)
#   seed=K          seed ns-2's default RNG with K, then one `next-substream` (as the other
#                   cross-checks); the losses, the background sizes and the 802.3 backoff draw
#                   from it
#   loss=P          the unreliable LAN's loss probability (0.05)
#   send_mbps=R     the sender LAN's rate (100)
#   recv_mbps=R     the receiver LAN's rate (10)
#   macbw=K         lan: set every LAN MAC's bandwidth_ to the LAN's rate; default: leave it at
#                   ns-2's default (Mac set bandwidth_ 2Mb), as `$ns make-lan` does, which only
#                   sets the physical layer's bandwidth_. The plain Mac times its frames with
#                   its own bandwidth_; Mac/802_3 does not depend on it (lan)
#   pagestats=1     append to each page line the data packets the page's agent retransmitted
#                   (`nrexmitpack_`) and its retransmission timeouts (`nrexmit_`) (0)
#
# Output (stdout):
#   page SRC START END BYTES     one line per WWW page: END is when the ACK of its last byte
#                                reached the sender, -1 when still open at the end (with
#                                pagestats=1 and END > 0, then REXMITS TIMEOUTS)
#   result k v k v ...           one line: seconds; bg_BS1, bg_BS2: segments the background
#                                senders had acknowledged (completed pages plus the open
#                                connection's ACKed segments); drops: per queue, comma-separated
#                                NAME:COUNT (router queues r1_r2, r2_r1, r1_bs2, r2_br1, the LAN
#                                interfaces' queues lan_<station> (lan=link: lan_<station> from
#                                the station to the hub, lan_hub_<station> back), and with
#                                lan=802_3 mac_<station> for drops by the MAC/LL, e.g. after 16
#                                failed attempts to send a frame); lan_losses:
#                                packets the loss model dropped; pages: WWW pages opened
set opt(www) ""
set opt(rtt_ms) 100
set opt(unreliable) 0
set opt(lan) 802_3
set opt(window) 20
set opt(background) restart
set opt(seconds) 2000
set opt(seed) ""
set opt(loss) 0.05
set opt(macbw) lan
set opt(send_mbps) 100
set opt(recv_mbps) 10
set opt(pagestats) 0
foreach a $argv {
  set kv [split $a =]
  if {[llength $kv] != 2 || ![info exists opt([lindex $kv 0])]} {
    puts stderr "bad argument $a; keys: [lsort [array names opt]]"
    exit 2
  }
  set opt([lindex $kv 0]) [lindex $kv 1]
}
if {$opt(www) eq "" || ![file readable $opt(www)]} {
  puts stderr "www=FILE: a readable workload file is required"
  exit 2
}
if {[lsearch {802_3 mac link} $opt(lan)] < 0} {
  puts stderr "lan=$opt(lan): must be 802_3, mac or link"; exit 2
}
if {[lsearch {restart bulk} $opt(background)] < 0} {
  puts stderr "background=$opt(background): must be restart or bulk"; exit 2
}

set PAYLOAD 1460
Agent/TCP set packetSize_ $PAYLOAD
Agent/TCP set tcpip_base_hdr_size_ 40
Agent/TCP set windowInit_ 3
Agent/TCP set window_ $opt(window)
Agent/TCP set tcpTick_ 0.1
Agent/TCP set rtxcur_init_ 6.0
Agent/TCP set syn_ false
Agent/TCP set delay_growth_ false
Agent/TCP set maxburst_ 0
Agent/TCPSink set packetSize_ 40
Queue set limit_ 50
LanRouter set debug_ 0

set ns [new Simulator]
if {$opt(seed) ne ""} {
  $defaultRNG seed $opt(seed)
  $defaultRNG next-substream
}
set null [$ns set nullAgent_]

foreach n {server BS1 BS2 router1 router2 R1 R2 R3 BR1 BR2} { set node($n) [$ns node] }

# Drop counters: one QueueMonitor per named queue, fed by a SnoopQueue/Drop.
set dropnames {}
proc dropcounter {name} {
  global dropmon dropnames null
  set m [new QueueMonitor]
  set s [new SnoopQueue/Drop]
  $s set-monitor $m
  $s target $null
  set dropmon($name) $m
  lappend dropnames $name
  return $s
}
proc link_drops {name a b} {
  global ns node
  [[$ns link $node($a) $node($b)] set drophead_] target [dropcounter $name]
}
set lossmon [new QueueMonitor]
set losssnoop [new SnoopQueue/Drop]
$losssnoop set-monitor $lossmon
$losssnoop target $null
proc lossmodel {} {
  global opt defaultRNG losssnoop
  set em [new ErrorModel]
  $em unit pkt
  $em set rate_ $opt(loss)
  set u [new RandomVariable/Uniform]
  $u use-rng $defaultRNG
  $em ranvar $u
  $em drop-target $losssnoop
  return $em
}

# A LAN of STATIONS at BW Mbit/s; ROUTER's interface queues 20 packets, the others 50; LOSSY:
# the stations lose received packets with probability loss.
proc lan {tag stations router bw lossy} {
  global ns node opt losssnoop
  set nodes {}
  foreach s $stations { lappend nodes $node($s) }
  if {$opt(lan) eq "link"} {
    set hub [$ns node]
    foreach s $stations {
      set rate [expr {$s eq $router ? $bw : 100 * $bw}]
      $ns duplex-link $node($s) $hub ${rate}Mb 0.5us DropTail
      $ns queue-limit $node($s) $hub [expr {$s eq $router ? 20 : 50}]
      $ns queue-limit $hub $node($s) 50
      [[$ns link $node($s) $hub] set drophead_] target [dropcounter lan_$s]
      [[$ns link $hub $node($s)] set drophead_] target [dropcounter lan_hub_$s]
    }
    if {$lossy} {
      foreach {a b} [list $node($router) $hub $hub $node($router)] {
        set em [lossmodel]
        $ns link-lossmodel $em $a $b
        $em drop-target $losssnoop
      }
    }
    return
  }
  set mac [expr {$opt(lan) eq "802_3" ? "Mac/802_3" : "Mac"}]
  set l [$ns make-lan $nodes ${bw}Mb 0.5us LL Queue/DropTail $mac Channel]
  foreach s $stations {
    set nif [$l set lanIface_($node($s))]
    if {$opt(macbw) eq "lan"} { [$nif set mac_] set bandwidth_ ${bw}Mb }
    set ifq [$nif set ifq_]
    $ifq set limit_ [expr {$s eq $router ? 20 : 50}]
    $ifq drop-target [dropcounter lan_$s]
    if {$opt(lan) eq "802_3"} {
      # The plain Mac drops the frames addressed to other stations there too: not counted.
      [$nif set drophead_] target [dropcounter mac_$s]
    }
    if {$lossy} {
      set em [lossmodel]
      $em target [$nif set ll_]
      [$nif set mac_] up-target $em
    }
  }
}

lan send {server BS1 router1} router1 $opt(send_mbps) 0
lan recv {router2 R1 R2 R3 BR2} router2 $opt(recv_mbps) $opt(unreliable)
set core [expr {$opt(rtt_ms) / 2000.0 - 1e-6}]
$ns duplex-link $node(router1) $node(router2) 100Mb ${core}s DropTail
$ns queue-limit $node(router1) $node(router2) 20
$ns queue-limit $node(router2) $node(router1) 20
link_drops r1_r2 router1 router2
link_drops r2_r1 router2 router1
$ns duplex-link $node(BS2) $node(router1) 100Mb 0.25ms DropTail
$ns queue-limit $node(BS2) $node(router1) 50
$ns queue-limit $node(router1) $node(BS2) 20
link_drops r1_bs2 router1 BS2
$ns duplex-link $node(router2) $node(BR1) 100Mb 0.25ms DropTail
$ns queue-limit $node(router2) $node(BR1) 20
$ns queue-limit $node(BR1) $node(router2) 50
link_drops r2_br1 router2 BR1
$ns rtproto Static

# One connection: the next agent pair of SRC's pool of POOL pairs, reset, so that every page
# starts afresh (cwnd windowInit_, ssthresh 44, no RTT sample, initial RTO rtxcur_init_). A pair
# is used again only POOL - 1 connections later, when nothing of its last connection is still
# in flight. CALLBACK is evaluated with the agent when the last byte is acknowledged.
set POOL 4
proc open_conn {src dst bytes callback} {
  global ns node PAYLOAD POOL pool poolnext
  if {![info exists pool($src)]} {
    set pool($src) {}
    for {set i 0} {$i < $POOL} {incr i} {
      set tcp [new Agent/TCP/Newreno]
      set sink [new Agent/TCPSink]
      $ns attach-agent $node($src) $tcp
      $ns attach-agent $node($dst) $sink
      $ns connect $tcp $sink
      lappend pool($src) [list $tcp $sink]
    }
    set poolnext($src) 0
  }
  lassign [lindex $pool($src) $poolnext($src)] tcp sink
  set poolnext($src) [expr {($poolnext($src) + 1) % $POOL}]
  $tcp reset
  $sink reset
  $tcp set ssthresh_ 44
  $tcp set cb_ $callback
  $tcp set base_ [list [$tcp set nrexmitpack_] [$tcp set nrexmit_]]
  $tcp advanceby [expr {($bytes + $PAYLOAD - 1) / $PAYLOAD}]
  return $tcp
}
Agent/TCP/Newreno instproc done {} {
  $self instvar cb_
  if {[info exists cb_]} { eval $cb_ $self }
}

# WWW sources.
array set first {}
set fd [open $opt(www) r]
while {[gets $fd line] >= 0} {
  set w [split [string trim $line]]
  if {[llength $w] == 0 || [string index $line 0] eq "#"} { continue }
  set src [lindex $w 0]
  switch -- [lindex $w 1] {
    start { set first($src) [lindex $w 2]; set pages($src) {}; set next($src) 0 }
    page { lappend pages($src) [list [lindex $w 2] [lindex $w 3]] }
    default { puts stderr "bad line in $opt(www): $line"; exit 2 }
  }
}
close $fd
set opened 0
proc www_page {src} {
  global ns pages next cur opened
  set i $next($src)
  if {$i >= [llength $pages($src)]} {
    puts stderr "www: $src has no page $i; the workload file is too short"
    exit 3
  }
  incr next($src)
  set bytes [lindex $pages($src) $i 0]
  set dst R[string index $src end]
  set cur($src) [list [$ns now] $bytes [lindex $pages($src) $i 1]]
  incr opened
  open_conn $src $dst $bytes [list www_done $src]
}
proc www_done {src tcp} {
  global ns cur opt
  lassign $cur($src) start bytes gap
  set line "page $src [format %.6f $start] [format %.6f [$ns now]] $bytes"
  if {$opt(pagestats)} {
    lassign [$tcp set base_] rx to
    append line " [expr {[$tcp set nrexmitpack_] - $rx}] [expr {[$tcp set nrexmit_] - $to}]"
  }
  puts $line
  unset cur($src)
  $ns at [expr {[$ns now] + $gap}] [list www_page $src]
}
foreach src {S1 S2 S3} {
  if {![info exists first($src)]} { puts stderr "www: no start for $src"; exit 2 }
  set node($src) $node(server)
  $ns at $first($src) [list www_page $src]
}

# Background.
set bgsize [new RandomVariable/Pareto]
$bgsize set avg_ 70619.0
$bgsize set shape_ 1.7584
$bgsize use-rng $defaultRNG
set bgdone(BS1) 0
set bgdone(BS2) 0
proc bg_open {src} {
  global bgsize bgcur PAYLOAD
  set bytes [expr {max(1, round([$bgsize value]))}]
  set dst [string map {BS BR} $src]
  set segs [expr {($bytes + $PAYLOAD - 1) / $PAYLOAD}]
  set bgcur($src) [open_conn $src $dst $bytes [list bg_done $src $segs]]
}
proc bg_done {src segs tcp} {
  global bgdone
  incr bgdone($src) $segs
  bg_open $src
}
foreach src {BS1 BS2} {
  if {$opt(background) eq "restart"} {
    $ns at 0 [list bg_open $src]
  } else {
    set tcp [new Agent/TCP/Newreno]
    $tcp set ssthresh_ 44
    set sink [new Agent/TCPSink]
    $ns attach-agent $node($src) $tcp
    $ns attach-agent $node([string map {BS BR} $src]) $sink
    $ns connect $tcp $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    set bgcur($src) $tcp
    $ns at 0 "$ftp start"
  }
}

proc finish {} {
  global ns opt cur bgcur bgdone dropmon dropnames lossmon opened
  foreach src {S1 S2 S3} {
    if {[info exists cur($src)]} {
      lassign $cur($src) start bytes gap
      puts "page $src [format %.6f $start] -1 $bytes"
    }
  }
  set line "result seconds $opt(seconds)"
  foreach src {BS1 BS2} {
    set acked [expr {[$bgcur($src) set ack_] + 1}]
    append line " bg_$src [expr {$bgdone($src) + max(0, $acked)}]"
  }
  set d {}
  foreach n $dropnames { lappend d "$n:[$dropmon($n) set pdrops_]" }
  append line " drops [join $d ,] lan_losses [$lossmon set pdrops_] pages $opened"
  puts $line
  flush stdout
  exit 0
}
$ns at $opt(seconds) "finish"
$ns run
