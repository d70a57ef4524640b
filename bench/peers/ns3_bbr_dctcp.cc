// The signature set-ups of BBR, CUBIC and DCTCP (scenarios/bbr-deep-buffer.toml and
// scenarios/dctcp-marking.toml) in ns-3, for the side-by-side figures of docs/validation.md.
// usage: ns3_bbr_dctcp deep TCPTYPE SIMTIME   one flow (TcpBbr or TcpCubic), 50 Mbit/s, 18 ms
//                                              bottleneck, 1 Gbps / 1 ms access, 670-packet
//                                              DropTail device queue, no queue discipline
//        ns3_bbr_dctcp dctcp SIMTIME          four TcpDctcp flows 100 ms apart, 100 Mbit/s,
//                                              500 us bottleneck, 1 Gbps / 250 us access, RED
//                                              queue disc marking at K = 20 packets (MinTh =
//                                              MaxTh = 20, QW = 1, no hard drop), 200 packets
// prints: mean_queue_pkts Q goodput_mbps G drops D marks M
//   Q: the bottleneck's packets (device queue plus queue disc) sampled every 10 ms from 3 s
//   (deep) or 1 s (dctcp) on; G: payload received by the sinks over the whole run.
// As in ns3_dumbbell.cc, TCP timestamps are off so that 1460-byte segments fit the MTU.
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"
#include <cstdio>
using namespace ns3;
static Ptr<QueueDisc> g_qdisc;
static Ptr<Queue<Packet>> g_devq;
static double g_qsum = 0;
static uint64_t g_qn = 0;
static void Sample(double from) {
  if (Simulator::Now().GetSeconds() >= from) {
    uint32_t n = g_devq->GetNPackets() + (g_qdisc ? g_qdisc->GetNPackets() : 0);
    g_qsum += n;
    g_qn++;
  }
  Simulator::Schedule(MilliSeconds(10), &Sample, from);
}
int main(int argc, char** argv) {
  std::string mode = argv[1];
  bool deep = mode == "deep";
  std::string tcp = deep ? argv[2] : "TcpDctcp";
  double simtime = atof(deep ? argv[3] : argv[2]);
  uint32_t n = deep ? 1 : 4;
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::" + tcp));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 26));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 26));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  if (deep) {
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    if (tcp == "TcpBbr") Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));
  } else {
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(10)));
  }
  NodeContainer routers; routers.Create(2);
  NodeContainer senders; senders.Create(n);
  NodeContainer receivers; receivers.Create(n);
  InternetStackHelper stack; stack.InstallAll();
  PointToPointHelper bott;
  bott.SetDeviceAttribute("DataRate", StringValue(deep ? "50Mbps" : "100Mbps"));
  bott.SetChannelAttribute("Delay", StringValue(deep ? "18ms" : "500us"));
  bott.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue(deep ? "670p" : "1p"));
  PointToPointHelper acc; acc.SetDeviceAttribute("DataRate", StringValue("1000Mbps"));
  acc.SetChannelAttribute("Delay", StringValue(deep ? "1ms" : "250us"));
  acc.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("100000p"));
  Ipv4AddressHelper addr;
  NetDeviceContainer bd = bott.Install(routers.Get(0), routers.Get(1));
  addr.SetBase("10.0.0.0", "255.255.255.0"); addr.Assign(bd);
  TrafficControlHelper tch;
  tch.Uninstall(bd);
  if (!deep) {
    TrafficControlHelper red;
    red.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", QueueSizeValue(QueueSize("200p")), "MinTh",
                         DoubleValue(20), "MaxTh", DoubleValue(20), "QW", DoubleValue(1), "UseEcn",
                         BooleanValue(true), "UseHardDrop", BooleanValue(false), "MeanPktSize",
                         UintegerValue(1500), "LinkBandwidth", StringValue("100Mbps"), "LinkDelay",
                         StringValue("500us"));
    QueueDiscContainer qd = red.Install(bd.Get(0));
    g_qdisc = qd.Get(0);
  }
  std::vector<Ipv4Address> dst;
  for (uint32_t i = 0; i < n; i++) {
    NetDeviceContainer a = acc.Install(senders.Get(i), routers.Get(0));
    char base[32]; snprintf(base, 32, "10.1.%u.0", i); addr.SetBase(base, "255.255.255.0"); addr.Assign(a); tch.Uninstall(a);
    NetDeviceContainer b = acc.Install(routers.Get(1), receivers.Get(i));
    snprintf(base, 32, "10.2.%u.0", i); addr.SetBase(base, "255.255.255.0");
    Ipv4InterfaceContainer bi = addr.Assign(b); tch.Uninstall(b); dst.push_back(bi.GetAddress(1));
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  std::vector<Ptr<PacketSink>> sinks;
  for (uint32_t i = 0; i < n; i++) {
    BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(dst[i], 9000));
    src.SetAttribute("MaxBytes", UintegerValue(0)); src.SetAttribute("SendSize", UintegerValue(1460));
    ApplicationContainer sa = src.Install(senders.Get(i)); sa.Start(Seconds(deep ? 0 : 0.1 * i)); sa.Stop(Seconds(simtime));
    PacketSinkHelper sk("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9000));
    ApplicationContainer ka = sk.Install(receivers.Get(i)); ka.Start(Seconds(0));
    sinks.push_back(DynamicCast<PacketSink>(ka.Get(0)));
  }
  Ptr<PointToPointNetDevice> bdev = DynamicCast<PointToPointNetDevice>(bd.Get(0));
  g_devq = bdev->GetQueue();
  Simulator::Schedule(MilliSeconds(10), &Sample, deep ? 3.0 : 1.0);
  Simulator::Stop(Seconds(simtime)); Simulator::Run();
  uint64_t tot = 0; for (auto& s : sinks) tot += s->GetTotalRx();
  uint64_t drops = g_devq->GetTotalDroppedPackets(), marks = 0;
  if (g_qdisc) {
    QueueDisc::Stats st = g_qdisc->GetStats();
    drops += st.nTotalDroppedPackets;
    marks = st.nTotalMarkedPackets;
  }
  printf("mean_queue_pkts %f goodput_mbps %f drops %lu marks %lu\n", g_qn ? g_qsum / g_qn : 0.0,
         tot * 8.0 / simtime / 1e6, (unsigned long)drops, (unsigned long)marks);
  Simulator::Destroy(); return 0;
}
