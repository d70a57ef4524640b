"""The golden tables through the shipped build: every scenario of ``tests/golden/`` run by the
Python extension (the release profile, fat LTO, as users get it), rendered exactly as
``crates/flowshare-core/tests/golden.rs`` renders them, must match its ``.golden`` file byte
for byte.

The Rust test checks the same files with debug assertions and overflow checks on (the
``checked`` profile); this one checks that the optimised build gives the same results. The
rendering is the Rust test's: rounded to six significant digits as Rust's ``{:.5e}`` writes
them, counts exact, per flow the sums of its sampled cwnd and goodput series.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import flowshare

GOLDEN = Path(__file__).resolve().parent / "golden"

FLOW_COLUMNS = (
    "flow name goodput_bps bytes_delivered packets_sent packets_received drops ack_drops "
    "link_losses retransmits fast_retransmits timeouts ecn_marks ecn_reductions misrx_detected "
    "cwnd_mean completion_time_s delay_mean_s delay_p99_s jitter_s loss_rate"
).split()
QUEUE_COLUMNS = (
    "queue link arrivals departures drops early_drops ecn_marks link_losses max_len_pkts "
    "mean_len_pkts utilization mean_sojourn_s"
).split()
FCT_COLUMNS = (
    "group size_bucket transfers unfinished fct_mean_s fct_p50_s fct_p99_s fct_max_s"
).split()


def sig(x: float) -> str:
    """``x`` as Rust's ``{:.5e}`` writes it (``1.23450e6``, ``-5.00000e-3``); ``nan``, ``0``."""
    if math.isnan(x):
        return "nan"
    if x == 0:
        return "0"
    mantissa, exponent = f"{x:.5e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def cell(table: pd.DataFrame, column: str, row: int) -> str:
    value = table[column].iloc[row]
    kind = table[column].dtype.kind
    if kind == "f":
        return sig(float(value))
    if kind in "iu":
        return str(int(value))
    return str(value)


def series_sum(values: pd.Series) -> float:
    """The sum of the non-NaN values in order, one addition at a time (as the Rust test)."""
    total = 0.0
    for x in values.to_numpy():
        if not np.isnan(x):
            total += float(x)
    return total


def render(result: flowshare.RunResult) -> str:
    flows, queues, series, fct = result.flows, result.queues, result.flow_series, result.fct
    out = ["# flows", " ".join(FLOW_COLUMNS)]
    out += [" ".join(cell(flows, c, i) for c in FLOW_COLUMNS) for i in range(len(flows))]
    out += ["# queues", " ".join(QUEUE_COLUMNS)]
    out += [" ".join(cell(queues, c, i) for c in QUEUE_COLUMNS)
            for i in range(len(queues)) if queues["arrivals"].iloc[i] > 0]
    out += ["# series", "flow samples cwnd_sum goodput_sum"]
    for f in range(len(flows)):
        rows = series[series["flow"] == f]
        out.append(f"{f} {len(rows)} {sig(series_sum(rows['cwnd']))} "
                   f"{sig(series_sum(rows['goodput_bps']))}")
    if len(fct) > 0:
        out += ["# fct", " ".join(FCT_COLUMNS)]
        out += [" ".join(cell(fct, c, i) for c in FCT_COLUMNS) for i in range(len(fct))]
    return "\n".join(out) + "\n"


SCENARIOS = sorted(GOLDEN.glob("*.toml"))


def test_the_golden_scenarios_are_there():
    assert len(SCENARIOS) >= 20, f"golden scenarios missing from {GOLDEN}"


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_the_shipped_build_gives_the_golden_tables(path):
    got = render(flowshare.run(str(path))).splitlines()
    expected = path.with_suffix(".golden").read_text().splitlines()
    first = next((k for k, (a, b) in enumerate(zip(got, expected)) if a != b), None)
    assert first is None, f"line {first + 1}:\n  expected {expected[first]}\n  got      {got[first]}"
    assert len(got) == len(expected)


def test_the_rendering_is_rusts():
    assert [sig(x) for x in (1234567.0, -0.005, 1.0, 9.999995e-7, float("nan"), 0.0)] == [
        "1.23457e6", "-5.00000e-3", "1.00000e0", "1.00000e-6", "nan", "0"]
