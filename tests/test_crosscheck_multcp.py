"""bench/peers/crosscheck_multcp.py without ns-2: its cases, the parsing of ns2_multcp.tcl's
result line, the figures, the flowshare mirror of the network, and the tables."""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

import pytest

PEERS = Path(__file__).resolve().parents[1] / "bench" / "peers"


@pytest.fixture(scope="module")
def cm():
    sys.path.insert(0, str(PEERS))  # the script imports its sibling scripts by name
    try:
        yield importlib.import_module("crosscheck_multcp")
    finally:
        sys.path.remove(str(PEERS))


# MulTCP(2) and two TCP flows.
RESULT = ("result starts 6.068459,3.815927,8.066109 acked 30000,10000,8000 "
          "sent 30300,10100,8100 recoveries 20,30,28 timeouts 1,2,0 cuts 21,32,28 "
          "drops 300 limit 3333 bins 10,30,20,20")


def test_cases(cm):
    keys = [c.key for c in cm.CASES]
    assert len(keys) == len(set(keys)) == 22
    assert {c.n for c in cm.CASES} == {2, 5, 10, 15, 20, 25, 30}
    assert {(c.n, c.mbps) for c in cm.CASES if c.overhead} == {
        (n, mbps) for n in (2, 10, 20, 30) for mbps in (200.0, 400.0)}
    assert all(c.n + c.m == 200 for c in cm.CASES)
    assert {c.mbps: c.limit for c in cm.CASES} == {200.0: 1667, 400.0: 3333}
    assert cm.select("n2-*mbps") == [cm.Case(2, 200.0), cm.Case(2, 400.0)]
    assert cm.Case(25, 400.0).label == "400 Mbit/s, N = 25"
    assert cm.Case(2, 400.0, overhead=True).key == "n2-400mbps-overhead"


def test_ns2_args(cm):
    assert cm.ns2_args(cm.Case(20, 400.0), 3, 150, 50) == [
        "n=20", "m=180", "bw=400", "delay_ms=50", "limit=3333", "access_ms=0.1", "size=1460",
        "hdr=40", "seconds=150", "warmup=50", "jitter=10", "seed=3"]
    assert cm.ns2_args(cm.Case(2, 200.0, overhead=True), 1)[-2:] == ["seed=1", "overhead=-1"]


def test_parse_ns2(cm):
    r = cm.parse_ns2("ns-2 chatter\n" + RESULT + "\n")
    assert r["acked"] == [30000, 10000, 8000] and r["timeouts"] == [1, 2, 0]
    assert r["starts"][0] == 6.068459 and (r["drops"], r["limit"]) == (300, 3333)
    assert r["bins"] == [10, 30, 20, 20]
    # ns2_multcp.tcl's cuts (every slowdown) are its recoveries plus its timeouts.
    assert [a + b for a, b in zip(r["recoveries"], r["timeouts"])] == r["cuts"]
    with pytest.raises(RuntimeError, match="no result line"):
        cm.parse_ns2("nothing here\n")
    with pytest.raises(RuntimeError, match="no recoveries"):
        cm.parse_ns2(RESULT.replace(" recoveries 20,30,28", ""))
    with pytest.raises(RuntimeError, match="no bins"):
        cm.parse_ns2(RESULT.replace(" bins 10,30,20,20", ""))
    with pytest.raises(RuntimeError, match="differ in length"):
        cm.parse_ns2(RESULT.replace("sent 30300,10100,8100", "sent 30300,10100"))


def test_figures(cm):
    f = cm.figures(cm.Case(2, 400.0), cm.flow_counts(cm.parse_ns2(RESULT)), seconds=400, warmup=100)
    assert f["fi"] == pytest.approx((30000 / 2) / 9000)
    assert f["multcp"] == pytest.approx(30000 * 1460 * 8 / 300 / 1e6)
    assert f["tcp"] == pytest.approx(9000 * 1460 * 8 / 300 / 1e6)
    assert f["p_multcp"] == pytest.approx(21 / 30300)
    assert f["p_tcp"] == pytest.approx(60 / 18200)
    assert (f["to_multcp"], f["to_tcp"]) == (1.0, 1.0)
    assert f["events"] == pytest.approx(21 / 30)
    # Bins 10, 30, 20, 20: mean 20, population standard deviation √50.
    assert f["cov"] == pytest.approx(math.sqrt(50) / 20)
    s = cm.summarize([f, {**f, "fi": math.nan}])
    assert s["fi"]["runs"] == [f["fi"]] and s["p_tcp"]["mean"] == pytest.approx(60 / 18200)


def test_flowshare_mirror(cm):
    case = cm.Case(20, 200.0)
    sc = cm.scenario(case, "ns2", 4, 400, 100)
    assert sc["simulation"] == {"duration": "400s", "seed": 4, "sample_interval": "0.1s", "warmup": "100s"}
    # The twin stopped at the warm-up needs no time series.
    assert cm.scenario(case, "ns2", 4, 400, 100, prefix=True)["simulation"]["sample_interval"] == "0s"
    b, a = sc["topology"]["bottleneck"], sc["topology"]["access"]
    assert (b["rate"], b["delay"], b["queue"]) == ("200Mbps", "50ms", {"limit": 1667})
    assert (a["rate"], a["delay"]) == ("2000Mbps", "0.1ms")
    multcp, tcp = sc["flows"]
    assert (multcp["count"], tcp["count"]) == (1, 180)
    assert multcp["start_jitter"] == tcp["start_jitter"] == "10s"
    assert multcp["tcp"]["cc"] == {"algo": "multcp", "n": 20, "loss_policy": "ns2"}
    assert tcp["tcp"]["cc"] == "reno"
    for t in (multcp["tcp"], tcp["tcp"]):
        assert (t["recovery"], t["mss"], t["header"], t["ack_size"]) == ("sack", "1460B", "40B", "40B")
        assert (t["initial_window"], t["rwnd"], t["delayed_ack"]) == (2, 100000, False)
        assert (t["timer_tick"], t["rto_min"], t["rto_initial"]) == ("10ms", "200ms", "3s")
    early = cm.scenario(case, "multcp", 4, 400, 100, prefix=True)
    assert early["simulation"] == {"duration": "100s", "seed": 4, "sample_interval": "0s"}
    assert early["flows"][0]["tcp"]["cc"]["loss_policy"] == "multcp"
    assert "send_jitter" not in tcp["tcp"]
    # ns-2's overhead=-1: one 1500-byte packet at 200 Mbit/s, 60 us, for every sender.
    jittered = cm.scenario(cm.Case(20, 200.0, overhead=True), "ns2", 1)
    assert {g["tcp"]["send_jitter"] for g in jittered["flows"]} == {"60000ns"}


def test_flowshare_accepts_the_mirror(cm):
    flowshare = pytest.importorskip("flowshare")
    flowshare.validate(cm.scenario(cm.Case(10, 400.0), "ns2", 1))


def test_table_agreement_and_crossings(cm):
    def fig(mean, lo, hi):
        return {"mean": mean, "min": lo, "max": hi, "runs": [lo, mean, hi]}

    ns = {"fi": fig(1.2, 1.1, 1.3), "multcp": fig(20.0, 19.0, 21.0), "tcp": fig(1.0, 0.9, 1.1),
          "p_multcp": fig(0.001, 0.0009, 0.0011), "p_tcp": fig(0.01, 0.009, 0.011),
          "events": fig(1.0, 0.9, 1.1),
          "to_multcp": fig(3.0, 2.0, 4.0), "to_tcp": fig(0.5, 0.4, 0.6)}
    fs = {**ns, "fi": fig(1.5, 1.5, 1.5), "to_multcp": fig(8.0, 8.0, 8.0)}
    rows = [{"label": "400 Mbit/s, N = 2", "n": 2, "mbps": 400.0, "ns2": ns, "fs-ns2": fs},
            {"label": "400 Mbit/s, N = 30", "n": 30, "mbps": 400.0,
             "ns2": {**ns, "fi": fig(0.8, 0.7, 0.9)}, "fs-ns2": ns}]
    text, score = cm.table(rows, ["ns2", "fs-ns2"])
    # fi 1.5 is outside [1.1, 1.3] and 25 % off; 8 timeouts are within a factor 3 of 3.
    assert score == {("fs-ns2", False): (6, 8)}
    assert "| 400 Mbit/s, N = 2 | ns-2 | 1.20 [1.10–1.30] |" in text
    assert "| | flowshare `ns2` | 1.50 [1.50–1.50] ✗ |" in text.replace("|  |", "| |")
    assert cm.crossings(rows, "ns2") == "400 Mbit/s: FI > 1 at N = 2; FI ≤ 1 at N = 30"
    assert cm.crossings(rows, "ns2", overhead=True) == ""
