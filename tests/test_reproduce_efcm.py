"""``flowshare reproduce efcm``: the published tables as transcribed, the targets, the
evaluation of synthetic runs, and a tiny reproduction end to end."""

from __future__ import annotations

import csv
import math

import numpy as np
import pandas as pd
import pytest

from flowshare import ConfigError
from flowshare.reproduce import efcm, efcm_metrics, efcm_tables, reproduce
from flowshare.reproduce.efcm_network import CASES, MIN_RTTS_MS, Options
from flowshare.reproduce.targets import COLUMNS

# ---------------------------------------------------------------------------------------------
# The published numbers


def test_appendix_b_intervals_agree_with_the_tables_they_test():
    # Each interval of (no EFCM − EFCM) is centred on the tables' difference and gives their Δ:
    # a transcription error in either shows here.
    for case, cells in efcm_tables.APPENDIX_B.items():
        new, conc = efcm_tables.NEW[case], efcm_tables.CONCURRENT[case]
        for measure, (level, low, high) in cells.items():
            if measure.startswith(("t1_new", "t2_new")):
                name, _, k = measure.split("_")
                no, yes, signs = getattr(new, name)
                diff, sign = no[int(k) - 1] - yes[int(k) - 1], signs[int(k) - 1]
            else:
                no, yes, sign = {"t1_conc": conc.t1, "t2_conc": conc.t2,
                                 "fairness": conc.fairness}[measure]
                diff = no - yes
            assert level in efcm_metrics.LEVELS
            assert abs((low + high) / 2 - diff) <= 0.05, (case, measure)
            assert efcm_metrics.sign(low, high) == sign, (case, measure)


def test_table_5_17_agrees_with_the_rows_it_summarises():
    # Table 5.17's sign of a measure is that of the majority of its rows in every case.
    for (rtt, unreliable), new in efcm_tables.NEW.items():
        i = MIN_RTTS_MS.index(rtt)
        conc = efcm_tables.CONCURRENT[(rtt, unreliable)]
        rows = {"t1_new": new.t1[2], "t2_new": new.t2[2], "t1_conc": conc.t1[2],
                "t2_conc": conc.t2[2], "fairness": conc.fairness[2]}
        for measure, signs in rows.items():
            majority = max(set(signs), key=signs.count)
            assert efcm_tables.SUMMARY[measure][unreliable][i] == majority, (rtt, measure)


# ---------------------------------------------------------------------------------------------
# Targets


def test_every_table_number_is_a_target_once():
    targets = efcm.targets()
    ids = [t.id for t in targets]
    assert len(ids) == len(set(ids))
    numbers = [t for t in targets if t.id.startswith("T5.") and not t.id.endswith(".delta")
               and not t.id.startswith("T5.17.")]
    # 8 new-connection tables × (T̄1, T̄2 × 3 sources × 2 + cwnd, ssthresh × 3 × 2 + SRTT,
    # RTTVAR × 3) and 8 concurrent tables × 6.
    assert len(numbers) == 8 * (12 + 12 + 6) + 8 * 6 == 288
    assert sum(t.id.endswith(".delta") for t in targets) == 8 * 6 + 8 * 3
    assert sum(t.id.startswith("T5.17.") for t in targets) == 5 * 8
    for t in targets:
        assert math.isfinite(t.published) and t.tolerance >= 0 and t.description


def _synthetic_rows(values_for, runs=4, spread=0.01, seed=1):
    """Runs of every case whose measures scatter around ``values_for(case)``."""
    rng = np.random.default_rng(seed)
    out = []
    for case in CASES:
        for rep in range(runs):
            row = {"min_rtt_ms": case.min_rtt_ms, "unreliable": case.unreliable,
                   "efcm": case.efcm, "replication": rep, "duration_s": 250_000.0,
                   "periods": 10, "bg1_mbps": 5.0, "bg2_mbps": 3.0}
            for column, value in values_for(case).items():
                row[column] = value * (1 + spread * rng.standard_normal())
            out.append(row)
    return pd.DataFrame(out)


def _published_values(case):
    new = efcm_tables.NEW[(case.min_rtt_ms, case.unreliable)]
    conc = efcm_tables.CONCURRENT[(case.min_rtt_ms, case.unreliable)]
    i = 1 if case.efcm else 0
    v = {"t1_conc": conc.t1[i], "t2_conc": conc.t2[i], "fairness": conc.fairness[i],
         "connections": 21000.0 if not case.unreliable else 20500.0,
         "capable_share": {(100, False): 0.085, (100, True): 0.139, (500, False): 0.18,
                           (500, True): 0.311}.get((case.min_rtt_ms, case.unreliable), 0.1)}
    for k in range(3):
        v[f"t1_new_{k + 1}"] = new.t1[i][k]
        v[f"t2_new_{k + 1}"] = new.t2[i][k]
        v[f"cwnd0_{k + 1}"] = new.cwnd[k] if case.efcm else 3.0
        v[f"ssthresh0_{k + 1}"] = new.ssthresh[k] if case.efcm else 44.0
        v[f"srtt0_{k + 1}"] = new.srtt[k] if case.efcm else math.nan
        v[f"rttvar0_{k + 1}"] = new.rttvar[k] if case.efcm else math.nan
    return v


def test_runs_at_the_published_values_pass_every_number_target():
    rows = _synthetic_rows(_published_values, spread=0.00005)
    for t in efcm.evaluate(rows):
        if t.id.endswith(".delta") or t.id.startswith("T5.17."):
            continue  # tiny spreads make every difference significant
        assert t.passed, (t.id, t.measured, t.note)


def test_runs_off_by_a_tenth_fail_with_a_note_and_signs_follow_the_t_test():
    def off(case):
        v = _published_values(case)
        return {k: x * (1.1 if k.startswith("t1") else 1) for k, x in v.items()}

    targets = {t.id: t for t in efcm.evaluate(_synthetic_rows(off, spread=0.001))}
    miss = targets["T5.9.t1.tcp1.newreno"]
    assert not miss.passed and "differs from published" in miss.note
    # 100 ms reliable: EFCM's T̄1 is 12 % above NewReno's in the runs, so Δ is '+' (1).
    assert targets["T5.9.t1.tcp1.delta"].measured == 1.0
    # 20 ms reliable, concurrent T̄1: 39.97 against 38.86, EFCM significantly worse (−1).
    assert targets["T5.2.t1.delta"].measured == -1.0


def test_identical_runs_give_no_sign_with_the_reason():
    rows = _synthetic_rows(_published_values, spread=0.0)
    t = {x.id: x for x in efcm.evaluate(rows)}["T5.1.t1.tcp1.delta"]
    assert not t.passed and "no t-test" in t.note


def test_a_bad_choice_is_refused_naming_the_option():
    with pytest.raises(ConfigError, match="options.background: expected one of restart, bulk"):
        Options(background="none")


# ---------------------------------------------------------------------------------------------
# A tiny reproduction


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro") / "efcm"
    first = reproduce("efcm", out, scale="tiny", workers=1, progress=False)
    return out, first


def test_tiny_reproduction_writes_every_target_and_measures_the_runs(tiny):
    out, first = tiny
    assert first.runs == len(CASES) * efcm.plan("tiny").replications
    assert first.failed == 0
    with open(out / "targets.csv", newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        rows = list(reader)
    assert [r["id"] for r in rows] == [t.id for t in efcm.targets()]
    for r in rows:
        assert r["passed"] in ("true", "false")
        if r["passed"] == "false":
            assert r["note"]
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == first.runs
    # NewReno's connections start with the configured window and threshold; EFCM's joiners
    # with shares of the ensemble's.
    newreno = runs[~runs["efcm"]]
    assert np.allclose(newreno[["cwnd0_1", "cwnd0_2", "cwnd0_3"]].stack().dropna(), 3.0)
    assert np.allclose(newreno[["ssthresh0_1", "ssthresh0_2", "ssthresh0_3"]].stack().dropna(),
                       44.0)
    assert runs["connections"].min() > 0
    assert (runs["fairness"].dropna().between(0.0, 1.0)).all()
    assert runs["periods"].sum() > 0
    report = (out / "report.html").read_text(encoding="utf-8")
    assert report.index("<h2>Numeric targets") < report.index("<h2>Table 5.17")
    assert "<link" not in report and 'src="http' not in report


def test_tiny_reproduction_resumes_without_running_again(tiny):
    out, first = tiny
    again = reproduce("efcm", out, scale="tiny", workers=1, progress=False)
    assert again.ran == 0
    assert [t.row() for t in again.targets] == [t.row() for t in first.targets]
