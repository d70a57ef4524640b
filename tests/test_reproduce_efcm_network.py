"""The network and workload of the EFCM study's cases (Savorić and Karl, TKN-04-007, 2004,
§3), built and run for a short simulated time: physical facts, not the report's numbers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import flowshare
from flowshare import ConfigError
from flowshare.reproduce import efcm_metrics as m
from flowshare.reproduce import efcm_network as n

DURATION_S = 3000.0


def test_cases_and_options_are_checked() -> None:
    assert len(n.CASES) == 16 and len(set(n.CASES)) == 16
    assert n.Case(500, True, True).label == "rtt500-unreliable-efcm"
    with pytest.raises(ConfigError, match=r"case.min_rtt_ms: expected one of 20, 60, 100, 500"):
        n.Case(30)
    with pytest.raises(ConfigError, match=r"options.br1: expected one of router2, receiver_lan"):
        n.Options(br1="router1")


def test_the_core_link_sets_the_minimum_rtt() -> None:
    # 100 ms: 50 ms one way less the two LANs' 0.5 µs (resolution efcm:A3).
    assert n.core_delay_s(n.Case(100)) == pytest.approx(0.049999)
    assert n.core_delay_s(n.Case(20), n.Options(core_delay="half_rtt")) == pytest.approx(0.01)


def test_scenario_fields() -> None:
    s = n.scenario(n.Case(60, unreliable=True, efcm=True))
    flows = {f["name"]: f for f in s["flows"]}
    assert [f["arrivals"]["process"] for f in s["flows"]] == ["sessions"] * 3 + ["closed_loop"] * 2
    assert flows["S2"]["dst"] == "R2" and flows["S2"]["tcp"]["ensemble"]["controller"] == "efcm"
    assert "ensemble" not in flows["BS1"]["tcp"]
    assert s["topology"]["lans"][1]["loss"] == {"model": "bernoulli", "p": 0.05}
    plain = n.scenario(n.Case(60), n.Options(br1="receiver_lan", background="bulk"))
    assert "loss" not in plain["topology"]["lans"][1]
    assert "BR1" in plain["topology"]["lans"][1]["nodes"]
    assert all("ensemble" not in f["tcp"] and "arrivals" not in f
               for f in plain["flows"] if f["name"].startswith("BS"))


def _run(case: n.Case, options: n.Options = n.OPTIONS) -> flowshare.RunResult:
    return flowshare.run(n.scenario(case, options, duration_s=DURATION_S, sample_interval_s=0.01,
                                    seed=3))


def _last_hop_loss(result: flowshare.RunResult) -> float:
    q = result.queues
    lan = q[(q["link"] == "receiver_lan") & (q["from"] == "router2")].iloc[0]
    return float(lan["link_losses"] / lan["departures"])


def _www_series(result: flowshare.RunResult, conns: pd.DataFrame) -> pd.DataFrame:
    series = result.flow_series
    return series[series["flow"].isin(conns["transfer"])]


def test_unreliable_case_runs_and_measures() -> None:
    result = _run(n.Case(100, unreliable=True))
    conns = m.connections(result.transfers)
    # Three sequential sources: each has at most one transfer open at the end.
    assert len(conns) > 50
    assert np.isinf(conns["end_s"]).sum() <= 3
    assert _last_hop_loss(result) == pytest.approx(0.05, abs=0.01)
    table = m.new_connection_measures(conns)
    assert table["capable"].sum() > 0
    measured = table[table["capable"] > 0]
    assert np.isfinite(measured[["t1", "t2"]].to_numpy()).all()
    assert (measured[["t1", "t2"]].to_numpy() > 0).all()
    periods = m.concurrency_periods(conns)
    assert len(periods) > 0
    assert (periods["end_s"] > periods["start_s"]).all()
    assert periods["members"].map(len).min() >= 2


def test_reliable_last_hop_loses_nothing_and_rtt_is_the_cases() -> None:
    # Every ACK timed with a 1 ms clock, so a lone connection's first SRTT is one RTT sample.
    result = _run(n.Case(100), n.Options(tcp_timers="rfc6298"))
    assert _last_hop_loss(result) == 0.0
    srtt = _www_series(result, m.connections(result.transfers))["srtt_s"]
    floor = srtt[srtt > 0].min()
    assert 0.100 <= floor < 0.110  # the propagation RTT plus a 1500-byte packet at 10 Mbit/s


def _shared_fraction(result: flowshare.RunResult) -> tuple[float, float, int]:
    """Of the sampling instants with two or more WWW connections open: the fraction with
    equal cwnd, with equal ssthresh, and their number."""
    www = _www_series(result, m.connections(result.transfers))
    g = www.groupby("time_s").agg(n=("cwnd", "size"), cw_lo=("cwnd", "min"),
                                  cw_hi=("cwnd", "max"), ss_lo=("ssthresh", "min"),
                                  ss_hi=("ssthresh", "max"))
    g = g[g["n"] >= 2]
    equal_cwnd = np.isclose(g["cw_lo"], g["cw_hi"], rtol=0, atol=1e-9).mean()
    equal_ss = np.isclose(g["ss_lo"], g["ss_hi"], rtol=0, atol=1e-9).mean()
    return float(equal_cwnd), float(equal_ss), len(g)


def test_efcm_members_share_their_windows() -> None:
    efcm_cwnd, efcm_ss, samples = _shared_fraction(_run(n.Case(100, efcm=True)))
    assert samples > 50
    # ssthresh is shared at every instant; cwnd too except for the private inflation of a
    # member in fast recovery (resolution efcm:A17).
    assert efcm_ss == 1.0
    assert efcm_cwnd > 0.8
    plain_cwnd, _, plain_samples = _shared_fraction(_run(n.Case(100)))
    assert plain_samples > 50
    assert plain_cwnd < 0.5
    assert not math.isclose(efcm_cwnd, plain_cwnd)


def _with_concurrency(case: n.Case) -> flowshare.RunResult:
    s = n.scenario(case, duration_s=300.0, seed=3)
    s["trace"] = {"concurrency": list(n.WWW_GROUPS)}
    return flowshare.run(s, progress=False)


def test_www_connections_record_what_they_start_with() -> None:
    """A WWW connection opening while no other is open starts from the study's settings
    (initial window 3, ssthresh 44, no RTT estimate); with EFCM one joining open ones starts
    from the re-shared window and the ensemble's SRTT and RTTVAR. The concurrency table holds a
    snapshot at every opening and completion of a WWW connection."""
    for efcm in (False, True):
        result = _with_concurrency(n.Case(100, unreliable=True, efcm=efcm))
        t = result.transfers
        www = t[t["name"].isin(n.WWW_GROUPS)]
        end = www["start_s"] + www["completion_time_s"].fillna(np.inf)
        starts = www["start_s"].to_numpy()
        # Others open at each opening (closed intervals: a tie counts as open).
        others = [int(((www["start_s"] <= s) & (end >= s)).sum()) - 1 for s in starts]
        www = www.assign(others=others)
        alone = www[www["others"] == 0]
        assert len(alone) > 5
        assert (alone["initial_cwnd"] == 3.0).all() and (alone["initial_ssthresh"] == 44.0).all()
        assert alone["initial_srtt_s"].isna().all() and alone["initial_rttvar_s"].isna().all()
        inherited = www[www["initial_srtt_s"].notna()]
        if efcm:
            assert len(inherited) > 0 and (inherited["others"] > 0).all()
            # SRTT_agg is made of samples of the 100 ms path.
            assert (inherited["initial_srtt_s"] > 0.1).all()
            assert (inherited["initial_cwnd"] != 3.0).any()
        else:
            assert inherited.empty and (www["initial_cwnd"] == 3.0).all()
        assert (www["rtt_min_s"] > 0.1).all()
        done = www[www["completion_time_s"].notna()]
        assert (done["sent_bytes"] == done["size_bytes"]).all()
        c = result.concurrency
        assert c is not None and set(c["transfer"]) == set(www["transfer"])
        # Two snapshots per connection at least: its opening and its completion.
        assert len(c) >= len(www) + len(done)


def test_the_delayed_sink_acknowledges_every_second_segment() -> None:
    # ns-2's TCPSink/DelAck (resolution efcm:A15): R1 sends about one ACK per two data
    # packets it receives, where the per-segment sink sends one per packet.
    def ack_ratio(options: n.Options) -> float:
        result = flowshare.run(n.scenario(n.Case(100), options, duration_s=600.0, seed=2))
        q = result.queues
        acks = q[(q["link"] == "receiver_lan") & (q["from"] == "R1")]["arrivals"].sum()
        s1 = result.transfers[result.transfers["name"] == "S1"]
        return float(acks / (s1["packets_sent"] - s1["drops"]).sum())

    assert n.scenario(n.Case(100), n.Options(sink="delayed"))["flows"][0]["tcp"][
        "delack_timeout"] == "100ms"
    assert ack_ratio(n.OPTIONS) == pytest.approx(1.0, abs=0.02)
    assert 0.5 <= ack_ratio(n.Options(sink="delayed")) < 0.65
