"""The reproduction of Hasegawa (2000): the physics of short runs of its scenarios, the tiny
reproduction end to end, and its input errors."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import flowshare
from flowshare._core import ConfigError
from flowshare.reproduce import hasegawa, hasegawa_ch2, hasegawa_ch3, hasegawa_ch6, reproduce
from flowshare.reproduce.hasegawa_runs import SERIES_PREFIX, jain
from flowshare.reproduce.targets import read_targets


def _run(chapter, point, options, tmp_path):
    out = tmp_path / "run"
    flowshare.run(chapter.scenario(point, options), seed=7).write(out)
    return chapter.measure(out, point, options)


# ---------------------------------------------------------------------------------------------
# Chapter 3, Experiment 1: the mis-retransmission's timeline (Fig 3.1)


@pytest.fixture(scope="module")
def exp1(tmp_path_factory):
    options = hasegawa_ch3.Options()
    return {v: _run(hasegawa_ch3, hasegawa_ch3.Point("exp1", v, 1.0), options,
                    tmp_path_factory.mktemp(v))
            for v in hasegawa_ch3.VARIANTS}


def test_experiment_1_times_out_on_packet_503_and_fast_retransmits_519(exp1):
    r = exp1["original"]
    assert r["timeouts"] == 1
    assert abs(r["misrx_ms"] - 128.5) <= 0.02 * 128.5          # C3-1a's tolerance
    assert r["dup_ack_packet"] == 518 and r["fast_rtx_packet"] == 519
    # Slow start back to ssthresh = 8 in about 2 ms, duplicate ACKs one window later (4 ms).
    assert abs(r["ca_start_ms"] - r["misrx_ms"] - 2.0) <= 0.5
    assert abs(r["t1_ms"] - r["misrx_ms"] - 4.0) <= 0.5
    # t2, the end of the fast retransmission: its ACK, one rtt after the duplicate ACKs began.
    assert abs(r["t2_ms"] - r["misrx_ms"] - 8.0) <= 0.5
    assert r["t2_ms"] - r["fast_rtx_ms"] == pytest.approx(3.4, abs=0.2)


def test_experiment_1_costs_about_6_ms_and_the_detection_recovers_it(exp1):
    ideal, original, enhanced = (exp1[v] for v in ("no_timeout", "original", "enhanced"))
    assert ideal["timeouts"] == 0 and ideal["retransmits"] == 0
    assert abs(original["completion_ms"] - ideal["completion_ms"] - 6.0) <= 1.0
    assert enhanced["misrx_detected"] == 1 and enhanced["retransmits"] == 1
    assert enhanced["completion_ms"] - ideal["completion_ms"] < 0.5


def test_the_forced_timer_choice_moves_the_go_back_n(tmp_path):
    # Expiring 1 ms after packet 503 was sent, the timer finds 492 the oldest unacknowledged
    # packet: the go-back-N starts there and the duplicate ACKs are for 507, not 518.
    options = hasegawa_ch3.Options(force_after="1ms")
    r = _run(hasegawa_ch3, hasegawa_ch3.Point("exp1", "original", 1.0), options, tmp_path)
    assert (r["dup_ack_packet"], r["fast_rtx_packet"]) == (507, 508)


def test_experiment_2_rtt_is_the_windows_transmission_time_and_doubles_with_the_share(tmp_path):
    r = _run(hasegawa_ch3, hasegawa_ch3.Point("exp2", "no_timeout", 0.01), hasegawa_ch3.Options(),
             tmp_path)
    assert r["rtt_before_ms"] == pytest.approx(3.86, rel=0.01)   # 64 Kbyte at 48/53 of 150 Mbit/s
    assert r["rtt_late_ms"] == pytest.approx(2 * r["rtt_before_ms"], rel=0.02)


def test_experiment_2_mis_retransmits_after_the_join_only_with_a_timer_per_packet(tmp_path):
    # hasegawa:A60: the timer runs from the oldest packet's send on a 0.1-ms clock, so the RTO
    # of the constant RTT is 4.0 ms and the first packet whose RTT outgrows it (1 ms after the
    # join) times out; restarted by every ACK of new data, the timer never expires.
    point = hasegawa_ch3.Point("exp2", "original", 0.01)
    r = _run(hasegawa_ch3, point, hasegawa_ch3.Options(), tmp_path / "per_packet")
    assert r["rto_before_ms"] == pytest.approx(4.0)
    assert 500.0 < r["misrx_ms"] <= 502.0
    restart = _run(hasegawa_ch3, point, hasegawa_ch3.Options(timer="restart"),
                   tmp_path / "restart")
    assert restart["timeouts"] == 0 and math.isnan(restart["misrx_ms"])


# ---------------------------------------------------------------------------------------------
# Chapter 6: Vegas behind FIFO, RED's loss rates, DRR's proportional shares


def _ch6(tcp, scheduler, tmp_path, bw=400):
    point = hasegawa_ch6.Point(tcp, "forward", scheduler, bw, 600.0)
    return _run(hasegawa_ch6, point, hasegawa_ch6.Options(), tmp_path)


def test_vegas_behind_fifo_loses_nothing_and_small_connections_get_their_capacity(tmp_path):
    r = _ch6("vegas", "fifo", tmp_path)
    assert r["lost_total"] == 0
    assert r["rel_bw64"] == pytest.approx(1.0, abs=0.05)
    assert r["rel_bw512"] < 0.5 * r["rel_bw64"]   # unfair: the largest gets far less


def test_red_at_small_bandwidth_gives_nearly_equal_loss_rates(tmp_path):
    r = _ch6("reno", "red", tmp_path)
    losses = [r[f"loss_{n}"] for n in hasegawa_ch6.NAMES]
    assert min(losses) > 0.01
    assert max(losses) / min(losses) < 1.5


def test_drr_shares_the_link_in_proportion_to_the_input_capacities(tmp_path):
    r = _ch6("reno", "drr", tmp_path)
    assert r["jain_rel"] > 0.99
    assert r["throughput_total"] == pytest.approx(400e3, rel=0.05)


def test_misses_at_400_kbps_name_what_the_64_kbps_link_carries():
    def row(scheduler, thr):
        out = {"tcp": "reno", "direction": "forward", "scheduler": scheduler, "bw_kbps": 400,
               "jain_rel": 0.9}
        for name, value in zip(hasegawa_ch6.NAMES, thr, strict=True):
            out[f"thr_{name}"], out[f"loss_{name}"] = value, 0.03
        return out

    rows = pd.DataFrame([row("red", (49.9e3, 85.6e3, 117.7e3, 122.2e3)),
                         row("fifo", (53.2e3, 103.0e3, 165.7e3, 65.1e3))])
    done = {t.id: t for t in hasegawa_ch6.evaluate(rows)}
    equal, smaller_more = done["C6-1a"], done["C6-2"]
    assert not equal.passed and not smaller_more.passed
    # 64 kbit/s of 2,048-byte packets with 40 bytes of header: 62.75 kbit/s of payload.
    assert "(62.8 kbit/s of payload; it got 49.9)" in equal.note
    assert "largest over smallest 1.43" in equal.note
    assert "(65.1 kbit/s, below the 128 and 256 kbit/s connections' 103.0 and 165.7)" \
        in smaller_more.note


def test_enhanced_red_queue_gets_the_iterations_probabilities():
    point = hasegawa_ch6.Point("reno", "forward", "ered", 800, 100.0)
    queue = hasegawa_ch6.scenario(point, hasegawa_ch6.Options())["topology"]["bottleneck"]["queue"]
    assert queue["kind"] == "enhanced_red"
    p = queue["flow_p"]
    assert p["bw64"] > p["bw128"] > p["bw256"] > p["bw512"]   # smaller input, more drops
    assert p["bw64"] == pytest.approx(0.1791, abs=1e-3)


# ---------------------------------------------------------------------------------------------
# Chapter 2: Vegas converges, Tahoe oscillates


def test_vegas_converges_with_the_queue_in_its_range_and_tahoe_oscillates(tmp_path):
    options = hasegawa_ch2.Options()
    vegas = _run(hasegawa_ch2, hasegawa_ch2.Point("homogeneous", "vegas", 0, 3.0), options,
                 tmp_path / "v")
    tahoe = _run(hasegawa_ch2, hasegawa_ch2.Point("homogeneous", "tahoe", 0, 3.0), options,
                 tmp_path / "t")
    assert vegas["cv1"] < 0.02 and vegas["cv2"] < 0.02
    assert 5.236 - 0.5 <= vegas["queue_mean"] <= 10.472 + 0.5
    assert vegas["utilisation"] > 0.9
    assert tahoe["cv1"] > 0.2 and tahoe["utilisation"] < vegas["utilisation"]


def test_a_scenario_and_a_seed_give_identical_measures(tmp_path):
    point = hasegawa_ch2.Point("homogeneous", "vegas", 3, 2.5)
    a = _run(hasegawa_ch2, point, hasegawa_ch2.Options(), tmp_path / "a")
    b = _run(hasegawa_ch2, point, hasegawa_ch2.Options(), tmp_path / "b")
    assert {k: v for k, v in a.items() if not k.startswith(SERIES_PREFIX)} == \
        {k: v for k, v in b.items() if not k.startswith(SERIES_PREFIX)}


# ---------------------------------------------------------------------------------------------
# The tiny reproduction, end to end


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("hasegawa") / "tiny"
    done = reproduce("hasegawa", out, scale="tiny", workers=2, progress=False)
    return out, done


def test_targets_csv_lists_every_target_of_chapters_2_to_6(tiny):
    out, done = tiny
    rows = read_targets(out / "targets.csv")
    ids = [r["id"] for r in rows]
    assert ids == [t.id for t in hasegawa.targets()]
    for prefix, count in (("C2-", 13), ("C3-", 15), ("C4-", 34), ("C5-", 6), ("C6-", 9)):
        assert sum(i.startswith(prefix) for i in ids) == count, prefix
    assert done.failed == 0
    for r in rows:
        if r["passed"] != "true":
            assert r["note"], r["id"]
    # The runs of the tiny scale answer every target of the simulated chapters.
    simulated = [r for r in rows if r["id"].startswith(("C2-", "C3-1", "C5-", "C6-"))]
    assert all(r["measured"] != "" for r in simulated)


def test_tiny_report_and_runs(tiny):
    out, done = tiny
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.count("<img") >= 8 and "Figs 3.1 and 3.9" in html and "Fig 6.14" in html
    assert "Fig 5.3" in html and "Fig 5.6" in html
    runs = pd.read_csv(out / "runs.csv")
    assert set(runs["chapter"]) == {"ch2", "ch3", "ch4", "ch5", "ch6"}
    assert len(runs) == done.runs
    assert not any(c.startswith(SERIES_PREFIX) for c in runs.columns)


def test_the_same_command_resumes_from_its_own_directory(tiny):
    # Its options hold a tuple (chapter 4's multihop layout), which DIR/reproduce.json gives
    # back as a list: the same command must still find the directory its own.
    out, done = tiny
    again = reproduce("hasegawa", out, scale="tiny", workers=2, progress=False)
    assert again.runs == done.runs and again.ran == 0
    assert [t.passed for t in again.targets] == [t.passed for t in done.targets]


# ---------------------------------------------------------------------------------------------
# Input errors


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda: hasegawa_ch3.Options(er_delay="later"), "options.ch3.er_delay"),
        (lambda: hasegawa_ch3.Options(force_after="2ms"), "options.ch3.force_after"),
        (lambda: hasegawa_ch3.Options(timer="bsd"), "options.ch3.timer"),
        (lambda: hasegawa_ch2.Options(settle_s=0), "options.ch2.settle_s"),
        (lambda: hasegawa_ch2.Options(send_jitter_us=-1), "options.ch2.send_jitter_us"),
        (lambda: hasegawa_ch6.Options(warmup_s="100s"), "options.ch6.warmup_s"),
        (lambda: hasegawa_ch6.Options(rwnd=6.5), "options.ch6.rwnd"),
        (lambda: hasegawa.Options(ch3=hasegawa_ch2.Options()), "options.ch3"),
    ],
)
def test_a_bad_choice_is_a_one_line_error_naming_the_field(make, needle):
    with pytest.raises(ConfigError) as caught:
        make()
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def test_a_bad_scale_or_options_object_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="scale: expected one of full, quick, tiny"):
        reproduce("hasegawa", tmp_path / "x", scale="huge")
    with pytest.raises(ConfigError, match="options: expected a flowshare.reproduce.hasegawa.Op"):
        reproduce("hasegawa", tmp_path / "x", scale="tiny", options=hasegawa_ch2.Options())
    # Another study's choices are named by their type, not printed whole.
    with pytest.raises(ConfigError) as caught:
        reproduce("multfrc", tmp_path / "x", scale="quick", options=hasegawa.Options())
    assert str(caught.value) == ("options: expected a flowshare.reproduce.multfrc.Options, got a "
                                 "flowshare.reproduce.hasegawa.Options")
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("out", [5, "", None])
def test_an_output_that_is_not_a_path_is_refused(out, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # "" would otherwise be the working directory
    with pytest.raises(ConfigError) as caught:
        reproduce("hasegawa", out, scale="tiny")
    assert str(caught.value) == f"out: expected a directory path, got {out!r}"
    assert list(tmp_path.iterdir()) == []


def test_jain_index():
    assert jain([1, 1, 1, 1]) == 1.0
    assert jain([1, 0, 0, 0]) == 0.25
    assert math.isnan(jain([]))
