"""The three-tier network of Mills et al. (2010), NIST SP 500-282 ch. 8: its tiers and speeds
(Table 8-8), buffers (Table 8-18) and round-trip propagation delays (Table 8-17), checked on
the links of the built topology with routes found independently of the fit, and in a short
run of the simulator."""

from __future__ import annotations

from collections import Counter, deque

import numpy as np
import pytest

from flowshare import sim
from flowshare.reproduce import nist_network as nn
from flowshare.reproduce import nist_population as npop
from flowshare.reproduce import nist_scenario as ns


def tier(link: nn.Link, topo: nn.Topology) -> str:
    """The router class a link's rate belongs to: an access router's class, else POP or
    backbone."""
    for end in (link.a, link.b):
        if end in topo.access:
            return topo.access[end]
    return "pop" if link.a.startswith("pop") or link.b.startswith("pop") else "backbone"


def test_three_tiers_with_the_fitted_access_routers():
    topo = nn.topology(800, 1, 1)
    assert Counter(topo.access.values()) == {"direct": 18, "fast": 84, "normal": 313}
    assert sum(n.startswith("bb-") for n in topo.nodes) == 11
    assert sum(n.startswith("pop") for n in topo.nodes) == 22
    assert len(topo.nodes) == len(set(topo.nodes)) == 11 + 22 + 415
    # A tree of POPs and access routers under a meshed backbone: one uplink per POP and access router.
    assert len(topo.links) == len(nn.BACKBONE_LINKS) + 22 + 415
    table = topo.table()
    assert table["kind"] == "graph" and len(table["links"]) == len(topo.links)


@pytest.mark.parametrize("x1", nn.BASE_SPEEDS)
def test_link_speeds_are_table_8_8s_router_speeds(x1):
    topo = nn.topology(x1, 1, 1)
    expected = {"backbone": 2 * x1, "pop": x1 / 4, "normal": x1 / 40, "fast": x1 / 20, "direct": x1 / 4}
    for link in topo.links:
        assert link.rate == expected[tier(link, topo)]



def test_a_smaller_network_keeps_its_access_routers_as_they_are():
    """At scale 0.25: a quarter of the access routers of each class at their full speeds and
    delays, the backbone at the share of sources kept, POP uplinks at their share of a
    full-scale POP's routers."""
    full, small = nn.topology(800, 1, 1), nn.topology(800, 1, 1, scale=0.25)
    assert Counter(small.access.values()) == {"direct": 4, "fast": 21, "normal": 78}
    share = nn.source_share(nn.AccessRouters(4, 21, 78))
    assert share == pytest.approx(0.248, abs=0.001)
    rates = {tier(k, small): set() for k in small.links}
    for k in small.links:
        rates[tier(k, small)].add(k.rate)
    assert rates["backbone"] == {1600 * share}
    assert rates["normal"] == {20} and rates["fast"] == {40} and rates["direct"] == {200}
    assert max(rates["pop"]) <= 200
    # Every access router is as far from its parent as in the full network.
    delay = {tier(k, full): k.delay_us for k in full.links if k.a in full.access}
    assert all(k.delay_us == delay[tier(k, small)] for k in small.links if k.a in small.access)
    # Fewer routers than places: spread over the continent, not the first sites.
    tiny = nn.topology(800, 1, 1, scale=0.02)
    sites = {name.split("-")[1] for name in tiny.access}
    assert len(sites) >= 5


@pytest.mark.parametrize("x3, published", [
    (1.0, {"backbone": (65_105, 146_487, 260_422), "pop": (8_138, 18_311, 32_553),
           "access": (1_294, 2_912, 5_176)}),
    (0.5, {"backbone": (32_553, 73_244, 130_211), "pop": (4_069, 9_155, 16_276),
           "access": (647, 1_456, 2_588)}),
])
def test_link_buffers_reproduce_table_8_18(x3, published):
    """Over the four (x1, x2) pairs: the backbone and POP buffers, and the mean buffer of the
    access routers (the access row is one figure per condition)."""
    per_condition: dict[str, list[float]] = {"backbone": [], "pop": [], "access": []}
    for x1 in nn.BASE_SPEEDS:
        for x2 in nn.DELAY_MULTIPLIERS:
            topo = nn.topology(x1, x2, x3)
            by_tier: dict[str, list[int]] = {"backbone": [], "pop": [], "access": []}
            for link in topo.links:
                t = tier(link, topo)
                by_tier[t if t in ("backbone", "pop") else "access"].append(link.queue)
            for t, queues in by_tier.items():
                assert t == "access" or len(set(queues)) == 1
                per_condition[t].append(float(np.mean(queues)))
    for t, (lo, avg, hi) in published.items():
        got = per_condition[t]
        tol = 0.002 if t != "access" else 0.01
        assert min(got) == pytest.approx(lo, rel=tol), t
        assert np.mean(got) == pytest.approx(avg, rel=tol), t
        assert max(got) == pytest.approx(hi, rel=tol), t


@pytest.mark.parametrize("router_speed, share", [("split", 0.5), ("per_direction", 1.0)])
def test_a_routers_speed_and_buffer_serve_both_directions_of_its_link(router_speed, share):
    """nist:A21: the links keep their router's Table 8-8 speed and Table 8-18 buffer; the
    scenario gives each direction half of both (the router forwards at most its speed up and
    down together) or, read per direction, all of both."""
    topo = nn.topology(800, 1, 0.5, router_speed=router_speed)
    assert topo.router_speed == router_speed
    table = topo.table()["links"]
    assert len(table) == len(topo.links)
    for link, row in zip(topo.links, table, strict=True):
        assert row["rate"] == f"{round(link.rate * share * 12_000_000)}bps"
        assert row["queue"] == {"limit": max(1, round(link.queue * share))}
    # A POP at x1 = 800, x3 = 0.5: 200 packets/ms and 4,069 packets of buffer as a router
    # (Table 8-18's smallest); split, each direction of its uplink carries 100 packets/ms
    # (1.2 Gbit/s) with 2,034 packets.
    pop = next(row for row in table if row["from"].startswith("pop"))
    assert pop["rate"] == ("1200000000bps" if share == 0.5 else "2400000000bps")
    assert pop["queue"]["limit"] == (2_034 if share == 0.5 else 4_069)
    with pytest.raises(ValueError, match="router_speed: expected one of split, per_direction"):
        nn.topology(800, 1, 1, router_speed="shared")


def round_trips(topo: nn.Topology) -> tuple[list[str], np.ndarray]:
    """Round-trip propagation delay (ms) between every pair of access routers, by breadth-first
    search over the topology's own links, each node's links in declaration order (as the
    simulator routes): independent of the fit's composition of uplinks and backbone routes."""
    adj: dict[str, list[tuple[str, float]]] = {n: [] for n in topo.nodes}
    for k in topo.links:
        adj[k.a].append((k.b, k.delay_us / 1000))
        adj[k.b].append((k.a, k.delay_us / 1000))
    names = list(topo.access)
    index = {n: i for i, n in enumerate(names)}
    one_way = np.zeros((len(names), len(names)))
    for src in names:
        dist = {src: 0.0}
        frontier = deque([src])
        while frontier:
            u = frontier.popleft()
            for v, d in adj[u]:
                if v not in dist:
                    dist[v] = dist[u] + d
                    frontier.append(v)
        for dst in names:
            one_way[index[src], index[dst]] = dist[dst]
    return names, one_way + one_way.T


def flow_weights(topo: nn.Topology, names: list[str]) -> np.ndarray:
    """P(a flow goes from access router i to j): a source in proportion to the sources under a
    router, a receiver to the receivers under another one (the population's draw)."""
    order = sorted(names, key=lambda n: (("direct", "fast", "normal").index(topo.access[n]), n))
    classes = Counter(topo.access.values())
    routers = nn.AccessRouters(classes["direct"], classes["fast"], classes["normal"])
    src, dst = (np.asarray(v, dtype=float) for v in npop.hosts_per_router(3, routers))
    pos = [order.index(n) for n in names]
    src, dst = src[pos], dst[pos]
    w = np.outer(src, dst)
    np.fill_diagonal(w, 0)
    return w / w.sum(axis=1, keepdims=True) * (src / src.sum())[:, None]


@pytest.mark.parametrize("x2", nn.DELAY_MULTIPLIERS)
def test_round_trips_of_flows_reproduce_table_8_17(x2):
    topo = nn.topology(800, x2, 1)
    names, rtt = round_trips(topo)
    w = flow_weights(topo, names)
    off = ~np.eye(len(names), dtype=bool)
    assert rtt[off].min() == pytest.approx(6 * x2, abs=0.01)
    assert (w * rtt).sum() == pytest.approx(nn.RTT_MS * x2, abs=0.01)
    assert rtt[off].max() == pytest.approx(100 * x2, abs=0.01)


def test_the_fit_refuses_routers_it_cannot_fit():
    with pytest.raises(ValueError, match="no delays fit Table 8-17"):
        nn.fit_delays(nn.AccessRouters(direct=11, fast=22, normal=22), pop_ms=20)


@pytest.mark.parametrize("bad, match", [
    ({"scale": 0}, "scale: a fraction"), ({"scale": 1.5}, "scale: a fraction"),
])
def test_bad_scale_is_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        nn.topology(800, 1, 1, **bad)


@pytest.mark.parametrize("k, x2", [(1, 1), (32, 2)])
def test_a_short_run_sees_the_propagation_round_trips(k, x2):
    """Two simulated seconds on a twentieth of the network: every flow's smallest RTT is at
    least the propagation delay of the smallest round trip, and their mean is at least the
    flows' mean propagation delay on this network and not far above it (queueing and
    serialisation add; short flows sample few RTTs)."""
    assert ns.condition(k)["x2"] == x2
    s = ns.scenario(k, "BIC", "HIGH", duration_s=2, seed=3, scale=0.05)
    topo = nn.topology(*(ns.condition(k)[f] for f in ("x1", "x2", "x3")), scale=0.05)
    names, rtt = round_trips(topo)
    expected = float((flow_weights(topo, names) * rtt).sum())
    off = ~np.eye(len(names), dtype=bool)
    t = sim.run(s).transfers
    rtt_ms = t.rtt_min_s.dropna() * 1000
    assert len(rtt_ms) > 300
    assert rtt[off].min() <= rtt_ms.min() < rtt[off].min() * 1.1
    assert expected <= rtt_ms.mean() < expected * 1.25
    assert rtt_ms.quantile(0.95) < rtt[off].max()
