# Print the ns-2 Tcl defaults that matter for matching ns-2's TCP and queue semantics.
# usage: ns ns2_defaults.tcl
proc show {cls var} {
  if {[catch {set v [$cls set $var]}]} { set v "(not a variable of this class)" }
  puts [format "%-20s %-26s %s" $cls $var $v]
}
foreach v {windowInit_ windowInitOption_ delay_growth_ window_ maxcwnd_ packetSize_ tcpip_base_hdr_size_ ts_option_size_
           syn_ tcpTick_ minrto_ maxrto_ rtxcur_init_ srtt_init_ rttvar_init_ T_SRTT_BITS
           T_RTTVAR_BITS rttvar_exp_ rfc2988_ timerfix_ maxburst_ ssthresh_ max_ssthresh_
           numdupacks_ singledup_ bugFix_ lessCareful_ precisionReduce_ windowOption_
           increase_num_ decrease_num_ slow_start_restart_ timestamps_ ecn_ overhead_
           useHeaders_ frto_enabled_} {
  show Agent/TCP $v
}
foreach v {newreno_changes_ newreno_changes1_ partial_window_deflation_ exit_recovery_fix_} {
  show Agent/TCP/Newreno $v
}
foreach v {packetSize_ maxSackBlocks_ ts_echo_bugfix_ RFC2581_immediate_ack_} {
  show Agent/TCPSink $v
}
show Agent/TCPSink/DelAck interval_
foreach v {limit_ blocked_ unblock_on_resume_} { show Queue $v }
foreach v {drop_front_ summarystats_ queue_in_bytes_ mean_pktsize_} { show Queue/DropTail $v }
foreach v {bandwidth_ delay_} { show DelayLink $v }
exit 0
