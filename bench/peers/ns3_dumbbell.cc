// Reference dumbbell for side-by-side speed/result comparison (ns-3).
// usage: dumbbell NFLOWS SIMTIME BW_MBPS DELAY_MS QPKTS TCPTYPE(e.g. TcpNewReno)
// prints: acked_pkts N goodput_mbps X drops D
//   (D = packets dropped at router r0: its traffic-control layer drops a packet when the
//    device queue of the bottleneck is full and stopped; device-queue drops are added too)
// Differences from the usual ns-3 dumbbell example: TCP timestamps are off, so a
// 1460-byte segment plus 40 bytes of headers fits the 1500-byte MTU (with the 12-byte
// timestamp option every segment was fragmented into two IP packets); the drop count.
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"
#include <cstdio>
using namespace ns3;
static uint64_t g_r0Drops = 0;
static void CountDrop(Ptr<const Packet>) { g_r0Drops++; }
int main(int argc, char** argv) {
  uint32_t n = atoi(argv[1]); double simtime = atof(argv[2]);
  double bw = atof(argv[3]); double delay = atof(argv[4]); uint32_t q = atoi(argv[5]);
  std::string tcp = argv[6];
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::" + tcp));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 26));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 26));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  NodeContainer routers; routers.Create(2);
  NodeContainer senders; senders.Create(n);
  NodeContainer receivers; receivers.Create(n);
  InternetStackHelper stack; stack.InstallAll();
  PointToPointHelper bott; bott.SetDeviceAttribute("DataRate", StringValue(std::to_string(bw) + "Mbps"));
  bott.SetChannelAttribute("Delay", StringValue(std::to_string(delay) + "ms"));
  bott.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue(std::to_string(q) + "p"));
  PointToPointHelper acc; acc.SetDeviceAttribute("DataRate", StringValue("1000Mbps"));
  acc.SetChannelAttribute("Delay", StringValue("1ms"));
  acc.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("100000p"));
  Ipv4AddressHelper addr;
  NetDeviceContainer bd = bott.Install(routers.Get(0), routers.Get(1));
  addr.SetBase("10.0.0.0", "255.255.255.0"); addr.Assign(bd);
  TrafficControlHelper tch; tch.Uninstall(bd);
  std::vector<Ipv4Address> dst;
  for (uint32_t i = 0; i < n; i++) {
    NetDeviceContainer a = acc.Install(senders.Get(i), routers.Get(0));
    char base[32]; snprintf(base, 32, "10.1.%u.0", i); addr.SetBase(base, "255.255.255.0"); addr.Assign(a); tch.Uninstall(a);
    NetDeviceContainer b = acc.Install(routers.Get(1), receivers.Get(i));
    snprintf(base, 32, "10.2.%u.0", i); addr.SetBase(base, "255.255.255.0");
    Ipv4InterfaceContainer bi = addr.Assign(b); tch.Uninstall(b); dst.push_back(bi.GetAddress(1));
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  // no traffic-control layer qdisc on devices: plain device DropTail queues, like ns-2
  std::vector<Ptr<PacketSink>> sinks;
  for (uint32_t i = 0; i < n; i++) {
    BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(dst[i], 9000));
    src.SetAttribute("MaxBytes", UintegerValue(0)); src.SetAttribute("SendSize", UintegerValue(1460));
    ApplicationContainer sa = src.Install(senders.Get(i)); sa.Start(Seconds(0.01 * i)); sa.Stop(Seconds(simtime));
    PacketSinkHelper sk("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9000));
    ApplicationContainer ka = sk.Install(receivers.Get(i)); ka.Start(Seconds(0));
    sinks.push_back(DynamicCast<PacketSink>(ka.Get(0)));
  }
  Config::ConnectWithoutContext("/NodeList/" + std::to_string(routers.Get(0)->GetId()) +
                                "/$ns3::TrafficControlLayer/TcDrop", MakeCallback(&CountDrop));
  Simulator::Stop(Seconds(simtime)); Simulator::Run();
  uint64_t tot = 0; for (auto& s : sinks) tot += s->GetTotalRx();
  Ptr<PointToPointNetDevice> bdev = DynamicCast<PointToPointNetDevice>(bd.Get(0));
  uint64_t drops = g_r0Drops + bdev->GetQueue()->GetTotalDroppedPackets();
  printf("acked_pkts %lu goodput_mbps %f drops %lu\n", (unsigned long)(tot / 1460), tot * 8.0 / simtime / 1e6,
         (unsigned long)drops);
  Simulator::Destroy(); return 0;
}
