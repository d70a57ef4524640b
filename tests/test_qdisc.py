"""Scheduled queue disciplines from Python: the builders, enhanced RED's p_i from the model
library, and runs."""

from __future__ import annotations

import pytest

import flowshare
from flowshare import ConfigError
from flowshare import scenario as sc
from flowshare.models.hasegawa import enhanced_red_probabilities

TCP = {"recovery": "reno", "mss": "2008B", "header": "40B", "rwnd": 64}
BW = {"bw64": 64e3, "bw128": 128e3, "bw256": 256e3, "bw512": 512e3}


def ch6(queue: dict, duration: str = "60s") -> dict:
    """Hasegawa (2000) ch. 6: four Reno flows with 64-512 kbps access links on an 800 kbps link."""
    return sc.dumbbell(
        bottleneck=sc.link(rate="800kbps", delay="98ms", queue=queue),
        access=sc.link(rate="10Mbps", delay="1ms", queue=sc.droptail(limit=1000)),
        flows=[
            sc.flows(name=name, src_access={"rate": f"{int(rate / 1e3)}kbps"}, tcp=TCP)
            for name, rate in BW.items()
        ],
        duration=duration,
    )


def test_builders_give_scenarios_the_loader_accepts():
    queues = [
        sc.priority([sc.qclass("bw512", limit=20), sc.qclass("bw64", "bw128", "bw256", limit=20)], limit=40),
        sc.drr(limit=60, quantum=1, mean_pktsize="2048B"),
        sc.drr(
            limit=60,
            queues=[sc.qclass("bw64", "bw128", quantum=1, limit=15), sc.qclass("bw256", "bw512", quantum=4, limit=15)],
            mean_pktsize="2048B",
            aqm="enhanced_red",
            min_th=3,
            max_th=8,
        ),
        sc.drr(limit="60000B", overflow="push_out_longest", aqm="red", min_th=5, max_th=15, mode="packets"),
        sc.enhanced_red(limit=30, flow_p={"bw64": 0.1}),
        sc.fq_codel(limit=1000, buckets=8, quantum="1514B", target="5ms", interval="100ms"),
    ]
    for q in queues:
        loaded = sc.load_scenario(ch6(q))
        assert loaded["topology"]["bottleneck"]["queue"]["kind"] == q["kind"]


def test_enhanced_red_for_puts_the_model_probabilities_into_the_queue():
    q = sc.enhanced_red_for(BW, 800e3)
    expected = enhanced_red_probabilities(list(BW.values()), 800e3).p
    assert list(q["flow_p"]) == list(BW)
    assert list(q["flow_p"].values()) == pytest.approx(list(expected))
    # Smaller input capacity, larger drop probability (the thesis's proportional fairness).
    p = list(q["flow_p"].values())
    assert p == sorted(p, reverse=True)
    drr = sc.enhanced_red_for(BW, 800e3, queue=sc.drr(limit=60, aqm="enhanced_red"))
    assert drr["kind"] == "drr" and drr["flow_p"] == q["flow_p"]
    with pytest.raises(ValueError, match="aqm='enhanced_red'"):
        sc.enhanced_red_for(BW, 800e3, queue=sc.drr(limit=60))
    with pytest.raises(ValueError, match="kind must be"):
        sc.enhanced_red_for(BW, 800e3, queue=sc.droptail(limit=30))


def test_enhanced_red_queue_runs_and_drops_the_slow_flows_more():
    r = flowshare.run(ch6(sc.enhanced_red_for(BW, 800e3, queue=sc.enhanced_red(limit=30))))
    f = r.flows.set_index("name")
    loss = f.drops / f.packets_sent
    assert loss["bw64"] > loss["bw512"]
    q = r.queues.iloc[0]
    assert q.early_drops > 0 and q.arrivals == q.departures + q.drops + q.len_end_pkts


def test_drr_quanta_give_shares_in_proportion_to_the_access_rates():
    queue = sc.drr(
        limit=120,
        mean_pktsize="2048B",
        queues=[sc.qclass(name, quantum=int(rate / 64e3), limit=30) for name, rate in BW.items()],
    )
    r = flowshare.run(ch6(queue, duration="200s"))
    g = r.flows.set_index("name").goodput_bps
    rel = g / g.sum()
    ideal = {name: rate / sum(BW.values()) for name, rate in BW.items()}
    for name, share in ideal.items():
        assert rel[name] == pytest.approx(share, rel=0.1), (name, rel[name], share)


def test_bad_scheduled_queue_is_a_one_line_config_error():
    with pytest.raises(ConfigError, match=r"^topology.bottleneck.queue.classes\[0\].flows\[0\]: no flow group"):
        sc.load_scenario(ch6(sc.priority([sc.qclass("nope")])))
    with pytest.raises(ConfigError, match="is not a field of kind \"fq_codel\""):
        sc.load_scenario(ch6({"kind": "fq_codel", "flow_p": {"bw64": 0.1}}))
