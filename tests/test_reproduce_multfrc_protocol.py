"""The MulTFRC part of ``flowshare reproduce multfrc``: scenarios, measures and targets.

D. Damjanović, Parallel TCP Data Transfers: A Practical Model and its Application, PhD thesis,
University of Innsbruck, 2010, chapter 4.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import flowshare
from flowshare.reproduce import multfrc, multfrc_protocol as mp


def _plan() -> mp.Plan:
    plan = multfrc.plan("quick").protocol
    assert plan is not None
    return plan


def test_every_scenario_of_every_scale_validates():
    for scale in multfrc.SCALES:
        p = multfrc.plan(scale)
        kinds = {type(x).__name__ for x in multfrc.points(p)}
        assert kinds == {"Point", "ProtocolPoint"}
        for point in {x for x in multfrc.points(p) if isinstance(x, mp.ProtocolPoint)}:
            flowshare.validate(mp.scenario(point, p.protocol))


def test_multfrc_above_six_raises_both_caps():
    s = mp.scenario(mp.ProtocolPoint("S8", "red", 20, 32.0, 70), _plan())
    assert s["simulation"]["multfrc_max_total_n"] == 70
    assert s["flows"][0]["tfrc"]["max_n"] == 70
    assert s["flows"][1]["count"] == 70


def test_the_s8_red_queue_is_floyd_et_al_2000s():
    # 32 Mbit/s, RTT 2 × (20 + 2 + 1) ms: BDP = 177 packets of 1040 B.
    q = mp.scenario(mp.ProtocolPoint("S8", "red", 20, 32.0, 10), _plan())["topology"][
        "bottleneck"]["queue"]
    assert q["limit"] == 3 * 177
    assert q["min_th"] == pytest.approx(17.7) and q["max_th"] == pytest.approx(59.0)
    # ns-2's automatic weight, counted in data packets (multfrc:A27) unless asked otherwise.
    assert q["w_q"] == "auto" and q["mean_pktsize"] == "1040B"
    point = mp.ProtocolPoint("S9", "red", 20, 8.0, 0.5)
    other = multfrc._any_scenario(point, multfrc.plan("quick"),
                                  multfrc.Options(red_mean_pktsize="ns2_default"))
    assert other["topology"]["bottleneck"]["queue"]["mean_pktsize"] == "500B"
    with pytest.raises(flowshare.ConfigError, match="options.red_mean_pktsize"):
        multfrc.Options(red_mean_pktsize="1040B")


def test_s9_runs_draw_from_their_own_streams():
    a = mp.scenario(mp.ProtocolPoint("S9", "red", 20, 8.0, 0.5, rep=0), _plan())
    b = mp.scenario(mp.ProtocolPoint("S9", "red", 20, 8.0, 0.5, rep=1), _plan())
    assert [f["name"] for f in a["flows"]] != [f["name"] for f in b["flows"]]


def test_response_time_needs_two_samples_at_the_new_rate():
    t = np.arange(8.0, 12.0, 0.5)
    rate = pd.Series([15e6, 15e6, 9e6, 5.4e6, 7e6, 5.2e6, 5.0e6, 5.0e6], index=t)
    # 5.4 Mbit/s at 9.5 s is within 10% of 5 Mbit/s, but 7 follows it; 10.5 s and 11 s hold.
    assert mp.response_time(rate, start_s=9.0, share_mbps=5.0) == pytest.approx(1.5)
    assert math.isnan(mp.response_time(rate * 3, start_s=9.0, share_mbps=5.0))


def test_isolation_gaps_pair_multfrc_with_tcp_of_the_same_condition():
    protocol = pd.DataFrame([
        {"setup": "I1", "queue": "red", "delay_ms": 30, "n": 5.0, "loss": 0.001, "j": "old",
         "throughput": 970.0},
        {"setup": "I1", "queue": "red", "delay_ms": 30, "n": 5.0, "loss": 0.01, "j": "old",
         "throughput": 400.0},
    ])
    model = pd.DataFrame([
        {"setup": "S1", "queue": "red", "delay_ms": 30, "n": 5, "loss": 0.001,
         "throughput": 1000.0, "p_r": 0.001},
        {"setup": "S2", "queue": "red", "delay_ms": 30, "n": 5, "loss": 0.0,
         "throughput": 1.0, "p_r": 0.0},
    ])
    gaps = mp.isolation_gaps(protocol, model)
    assert len(gaps) == 1
    assert gaps["gap"].iloc[0] == pytest.approx(3.0)  # 3% below TCP
    targets = {t.id: t for t in mp.evaluate(protocol, model)}
    assert targets["M.S1.30ms.0.1pct.n5"].measured == pytest.approx(3.0)
    assert targets["M.S1.30ms.0.1pct.n5"].passed
    assert targets["M.S1.30ms.0.1pct.n10"].note.endswith("at this scale")


def test_a_gap_at_low_loss_is_split_into_each_side_against_model_b():
    protocol = pd.DataFrame([{"setup": "I1", "queue": "red", "delay_ms": 30, "n": 5.0,
                              "loss": 0.001, "j": "old", "throughput": 1010.0}])
    model = pd.DataFrame([{"setup": "S1", "queue": "red", "delay_ms": 30, "n": 5, "loss": 0.001,
                           "throughput": 990.0, "p_r": 0.001, "model_b": 1000.0}])
    miss = {t.id: t for t in mp.evaluate(protocol, model)}["M.S1.30ms.0.1pct.n5"]
    assert not miss.passed   # MulTFRC 2.0 % above TCP where the thesis has it 2.7 % below
    assert "MulTFRC sent +1.0 % from Model B" in miss.note
    assert "(1000 pkt/s; the thesis: +2 %) and the TCP flows -1.0 %" in miss.note


def test_every_target_is_evaluated_once_and_explains_a_miss():
    targets = mp.evaluate(pd.DataFrame(columns=["setup"]), pd.DataFrame(columns=["setup"]))
    assert [t.id for t in targets] == [t.id for t in mp.TARGETS]
    assert all(t.note and not t.passed for t in targets)


def test_each_comparator_is_one_aggregate_of_n_against_n_sack_flows():
    p = _plan()
    for sender in ("cp", "multcp", "stochastic"):
        s = mp.scenario(mp.ProtocolPoint("C", "red", 20, 32.0, 5.0, sender=sender, rep=2), p)
        agg, tcp = s["flows"]
        assert agg["name"] == "aggr2" and tcp["count"] == 5 and tcp["tcp"]["recovery"] == "sack"
        if sender == "cp":
            assert agg["tfrc"]["equation"] == "cp" and agg["tfrc"]["n"] == 5.0
        else:
            assert agg["tcp"]["cc"] == {"algo": sender, "n": 5.0}
            assert agg["tcp"]["recovery"] == "sack"


def test_the_t_rto_choice_reaches_every_equation_based_sender():
    p = _plan()
    for sender in ("multfrc", "cp"):
        point = mp.ProtocolPoint("C", "red", 20, 32.0, 4.0, sender=sender)
        tfrc = mp.scenario(point, p)["flows"][0]["tfrc"]
        assert (tfrc["t_rto"], tfrc["rate_rule"]) == ("4r", "rfc5348")
        assert "t_rto" not in mp.scenario(point, p, "ns2")["flows"][0]["tfrc"]
        tfrc = mp.scenario(point, p, "tcp", "ns2")["flows"][0]["tfrc"]
        assert (tfrc["t_rto"], tfrc["min_rto"], tfrc["clock_tick"]) == ("tcp", "200ms", "10ms")
        assert tfrc["rate_rule"] == "ns2"
    s = mp.scenario(mp.ProtocolPoint("S6", "droptail", 20, 15.0, 4, sender="tfrc"), p, "tcp")
    assert s["flows"][0]["tfrc"]["t_rto"] == "tcp"


def _comparator_rows(cov_cp: float, errors: dict[float, float]) -> pd.DataFrame:
    rows = [{"setup": "C", "sender": "multfrc", "n": 4.0, "cov": 0.1, "tcp_over_agg": 1.0}]
    rows += [{"setup": "C", "sender": "cp", "n": n, "cov": cov_cp, "tcp_over_agg": 1 + e}
             for n, e in errors.items()]
    return pd.DataFrame(rows)


def test_the_comparator_targets_follow_the_runs():
    def pick(targets, id):
        return next(t for t in targets if t.id == id)
    empty = pd.DataFrame(columns=["setup"])
    good = mp.evaluate(_comparator_rows(0.3, {4.0: 0.05, 10.0: 0.2, 20.0: -0.5}), empty)
    assert pick(good, "M.F430.cp_fluctuates_more").measured == pytest.approx(3.0)
    assert pick(good, "M.F430.cp_fluctuates_more").passed
    assert pick(good, "M.F431.cp_error_grows_with_n").measured == pytest.approx(1.0)
    bad = mp.evaluate(_comparator_rows(0.05, {4.0: 0.5, 10.0: 0.2, 20.0: 0.1}), empty)
    assert not pick(bad, "M.F430.cp_fluctuates_more").passed
    assert pick(bad, "M.F431.cp_error_grows_with_n").measured == pytest.approx(-1.0)
    assert not pick(bad, "M.F431.cp_error_grows_with_n").passed


def test_chapter_3_misses_say_where_they_lie():
    def s1(queue, n, loss, err, thr):
        return {"setup": "S1", "queue": queue, "delay_ms": 30, "n": n, "loss": loss,
                "capacity_mbps": 1000.0, "p_r": loss, "err_a": err, "throughput": thr,
                "part": "model", "burst": 0, "timeout_share": 0.1, "rtt": 0.064, "rto": 0.2,
                **dict.fromkeys(["err_b", "p_e", "j_measured", "j_old", "j_improved",
                                 "err_b_old", "err_b_measured", "err_b_improved", "model_b_old",
                                 "model_b_measured", "model_b_improved"], math.nan)}

    rows = pd.DataFrame([s1("red", 100, 1e-4, -0.7, 103303.0), s1("droptail", 100, 1e-4, -4.6, 120196.0),
                         s1("red", 5, 1e-3, -1.0, 3000.0), s1("droptail", 5, 1e-3, -1.5, 3010.0)])
    miss = {t.id: t for t in multfrc.evaluate(rows)}["A.S1.30ms.droptail_vs_red"]
    assert not miss.passed and miss.measured == pytest.approx(3.9)
    assert ("the largest difference is at n = 100 and 0.01% loss, where the flows carry 103303 "
            "pkt/s behind RED and 120196 behind DropTail: the 1 Gbit/s link (120192 packets/s) "
            "is full there" in miss.note)
    assert miss.note.endswith("every other condition differs by at most 0.50 points")


def test_the_s2_red_miss_gives_the_time_out_share_of_the_run_it_reads():
    # The lowest-loss run (p_e 0.001) is read; its flows time out in 40 % of loss events.
    def s2(p_e, share):
        return {"setup": "S2", "queue": "red", "delay_ms": 30, "n": 5, "capacity_mbps": 256.0,
                "p_e": p_e, "throughput": 22000.0 - 1e6 * p_e, "timeout_share": share}

    measure = multfrc._measurements(pd.DataFrame([s2(0.002, 0.1), s2(0.001, 0.4)]))
    assert measure["B.S2.red.n5.lowest.throughput"](None) == (
        21000.0, "the 5 flows time out in 40% of their loss events in this run")


def test_the_gap_note_says_which_side_is_further_from_the_model_as_measured():
    note = mp._against_model
    # MulTFRC 1 % and the TCP flows 1 % above the model: the thesis has +2 and about +5, so the
    # TCP side differs more from the thesis.
    gaps = pd.DataFrame({"tcp_model_b": [1000.0], "throughput": [1010.0], "tcp_throughput": [1010.0]})
    assert note(gaps, 5).endswith("lies mostly in how far the model is from the TCP flows, not "
                                  "in MulTFRC's following it")
    # MulTFRC 10 % above, the TCP flows 5 % above: MulTFRC is the side that differs.
    gaps = pd.DataFrame({"tcp_model_b": [1000.0], "throughput": [1100.0], "tcp_throughput": [1050.0]})
    assert note(gaps, 5).endswith("lies mostly in how far MulTFRC is from the model")
    # Without the thesis's figures: the larger of the two distances from the model.
    gaps = pd.DataFrame({"tcp_model_b": [345.0], "throughput": [320.0], "tcp_throughput": [274.0]})
    assert note(gaps, 10, thesis=False).endswith("the larger part of the gap lies between Model B "
                                                 "and the TCP flows")
    gaps = pd.DataFrame({"tcp_model_b": [345.0], "throughput": [274.0], "tcp_throughput": [320.0]})
    assert note(gaps, 10, thesis=False).endswith("lies between MulTFRC and Model B")
