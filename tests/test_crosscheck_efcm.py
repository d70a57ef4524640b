"""bench/peers/crosscheck_efcm.py without ns-2: the parsing of ns2_efcm.tcl's output, the
measures (efcm_metrics on the pages), the workload file, the flowshare scenarios and the
tables; one short ns-2 run when ns-2 is installed."""

from __future__ import annotations

import importlib
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flowshare.reproduce import efcm_network as en

PEERS = Path(__file__).resolve().parents[1] / "bench" / "peers"


@pytest.fixture(scope="module")
def ce():
    sys.path.insert(0, str(PEERS))  # the script imports its sibling scripts by name
    try:
        yield importlib.import_module("crosscheck_efcm")
    finally:
        sys.path.remove(str(PEERS))


# S1 and S2 overlap (S2 opens while S1 is open), S3 opens alone, S1's second page opens while
# S3 is open, S2's second page is still open at the end.
OUTPUT = """warning: chatter
page S1 0.000000 1.000000 30458
page S2 0.500000 1.500000 40000
page S3 2.000000 3.000000 1460
page S1 2.500000 4.500000 73000
page S2 5.000000 -1 5000
result seconds 10 bg_BS1 100 bg_BS2 50 drops r1_r2:1,lan_router2:7,mac_R1:0 lan_losses 3 pages 5
"""


def test_parse_ns2(ce):
    run = ce.parse_ns2(OUTPUT)
    assert run["pages"][0] == ["S1", 0.0, 1.0, 30458]
    assert run["pages"][4] == ["S2", 5.0, None, 5000]
    res = run["result"]
    assert res["seconds"] == 10 and res["bg_BS1"] == 100 and res["pages"] == 5
    assert res["drops"] == {"r1_r2": 1, "lan_router2": 7, "mac_R1": 0}
    with pytest.raises(RuntimeError, match="no result line"):
        ce.parse_ns2("page S1 0 1 2\n")
    stats = ce.parse_ns2(OUTPUT.replace("page S1 0.000000 1.000000 30458",
                                        "page S1 0.000000 1.000000 30458 4 1"))
    assert stats["pages"][0] == ["S1", 0.0, 1.0, 30458, 4, 1]
    with pytest.raises(RuntimeError, match="no bg_BS2"):
        ce.parse_ns2(OUTPUT.replace(" bg_BS2 50", ""))


def test_measures_of_new_connections(ce):
    f = ce.ns2_figures(ce.parse_ns2(OUTPUT))
    # New connections: S2's first page (28 segments in 1 s) and S1's second (50 in 2 s).
    assert f["new"] == 2
    assert f["t1"] == pytest.approx((25.0 + 28.0) / 2)   # the mean over the sources that have one
    assert f["t2"] == pytest.approx((25.0 + 28.0) / 2)
    assert f["t1_pooled"] == pytest.approx(78 / 3.0)
    assert f["t2_pooled"] == pytest.approx((25.0 + 28.0) / 2)
    assert f["capable"] == pytest.approx(40.0)            # 2 of 5 connections
    assert f["conns"] == pytest.approx(500.0)             # 5 in 10 s
    assert f["bg"] == pytest.approx(15.0)                 # 150 segments in 10 s
    assert f["drops_lan"] == pytest.approx(700.0)
    tr = ce.transfers_frame(ce.parse_ns2(OUTPUT)["pages"])
    assert math.isnan(tr["completion_time_s"].iloc[4])
    assert tr["completion_time_s"].iloc[3] == pytest.approx(2.0)


def test_workload_file(ce):
    text = ce.workload(7, 2000.0)
    assert text == ce.workload(7, 2000.0) and text != ce.workload(8, 2000.0)
    lines = [x.split() for x in text.splitlines()]
    for src in ce.SOURCES:
        mine = [w for w in lines if w[0] == src]
        assert mine[0][1] == "start" and float(mine[0][2]) >= 0
        pages = [w for w in mine[1:]]
        assert pages and all(w[1] == "page" for w in pages)
        assert all(int(w[2]) >= 30458 for w in pages)      # the Pareto's minimum
        assert sum(float(w[3]) for w in pages) >= 2000.0   # the gaps alone fill the run


def test_ns2_args_and_variants(ce):
    v = ce.variant("ns2-802_3-w20-restart")
    assert ce.ns2_args(ce.Case(60, True), v, 2, 3000, "f.www") == [
        "www=f.www", "rtt_ms=60", "unreliable=1", "lan=802_3", "window=20", "background=restart",
        "seconds=3000", "seed=2", "macbw=lan"]
    assert ce.variant("ns2-mac-2mbps-w20-restart").macbw == "default"
    assert ce.ns2_args(ce.Case(20, False), ce.variant("ns2-mac-2mbps-w20-restart"), 1, 10,
                       "w")[-1] == "macbw=default"
    assert ce.ns2_args(ce.Case(20, False), ce.variant("ns2-802_3-2mbps-w20-restart"), 1, 10,
                       "w")[-3:] == ["macbw=lan", "send_mbps=2", "recv_mbps=2"]
    keys = [x.key for x in ce.VARIANTS]
    assert len(keys) == len(set(keys))
    assert [c.key for c in ce.CASES][:2] == ["rtt20-reliable", "rtt20-unreliable"]
    assert ce.REPORT[(20, False)]["t1"] == pytest.approx(42.22, abs=0.01)
    assert ce.REPORT[(100, True)]["capable"] == 13.9


def test_flowshare_side_is_efcm_network_without_efcm(ce):
    case = ce.Case(100, True)
    sc = ce.fs_scenario(case, ce.variant("fs-fifo-w20-restart"), 3, 500)
    assert sc == en.scenario(en.Case(100, True, False), en.Options(rwnd="ns2"),
                             duration_s=500, seed=3)
    bulk = ce.fs_scenario(case, ce.variant("fs-fifo-w1000-bulk"), 3, 500)
    assert bulk == en.scenario(en.Case(100, True, False), en.Options(background="bulk"),
                               duration_s=500, seed=3)
    assert all("ensemble" not in f["tcp"] for f in bulk["flows"])


def test_tables(ce):
    def fig(mean, lo, hi):
        return {"mean": mean, "min": lo, "max": hi, "runs": [lo, mean, hi]}

    v = ce.variant("ns2-802_3-w20-restart")
    rows = [{"label": "20 ms, reliable", "rtt_ms": 20, "unreliable": False,
             "variants": {v.key: {"t1": fig(84.5, 80.0, 90.0), "t2": fig(46.75, 40.0, 50.0)}}}]
    text = ce.throughput_table(rows, [v], "t1")
    assert text.splitlines()[0] == "| configuration | 20 ms r |"
    assert "| report | 42.2 |" in text
    assert "| ns-2: 802.3, w 20, restart | 84.5 [80.0–90.0] |" in text
    # T̄1 twice the report, T̄2 equal: factors 2.00, 1.00 and sqrt(2) for both.
    assert "| 2.00 | 1.00 | 1.41 |" in ce.closeness(rows, [v])


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 is not installed")
@pytest.mark.parametrize("extra", [["lan=802_3"], ["lan=link", "unreliable=1"],
                                   ["lan=mac", "macbw=default", "background=bulk"]])
def test_ns2_short_run(ce, tmp_path, extra):
    www = tmp_path / "w.www"
    www.write_text("S1 start 0.1\nS1 page 30458 0.5\nS1 page 40000 100\n"
                   "S2 start 0.2\nS2 page 30458 100\nS3 start 50\nS3 page 30458 100\n")
    out = subprocess.run(["ns", str(PEERS / "ns2_efcm.tcl"), f"www={www}", "seconds=10",
                          "rtt_ms=20", "seed=1", *extra], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    run = ce.parse_ns2(out.stdout)
    assert [p[0] for p in run["pages"]] == ["S1", "S2", "S1"] or sorted(
        p[0] for p in run["pages"]) == ["S1", "S1", "S2"]
    assert all(p[2] is not None and p[2] > p[1] for p in run["pages"])
    assert run["result"]["bg_BS1"] > 0 and run["result"]["bg_BS2"] > 0


def test_ratio_table(ce):
    def fig(mean):
        return {"mean": mean, "min": mean, "max": mean, "runs": [mean]}

    fs, ns = ce.variant("fs-fifo-w20-restart"), ce.variant("ns2-link-w20-restart")
    rows = [{"label": "100 ms, unreliable", "rtt_ms": 100, "unreliable": True,
             "variants": {fs.key: {"t1": fig(30.0), "t2": fig(40.0)},
                          ns.key: {"t1": fig(20.0), "t2": fig(40.0)}}}]
    text = ce.ratio_table(rows, [ns, fs, ce.variant("ns2-802_3-w20-restart")])
    assert "| w 20, restart: FIFO / links | 1.50, 1.00 |" in text
    assert "| w 20, restart: FIFO / 802.3 | –, – |" in text


def test_retransmission_shares(ce):
    pages = ce.parse_ns2(OUTPUT)["pages"]
    # Of the four completed pages, two retransmitted; the new ones (S2's first, 28 segments,
    # 2 retransmissions; S1's second, 50 segments, none) resent 2 of 78 segments.
    share, per_segment = ce.retransmission_shares(pages, [0, 2, 3, 0, 9])
    assert share == pytest.approx(50.0)
    assert per_segment == pytest.approx(2 / 78)
