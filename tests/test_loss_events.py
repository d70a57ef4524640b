"""Loss events: ``flowshare.analysis`` and the Rust core group losses by the same rule.

The reference below is the rule read directly (a loss starts a new event unless it comes
within one RTT, inclusive, of the first loss of the current event); the analysis functions
and the core's batch functions must agree with it on random losses, many of them exactly
one RTT after an event's first loss.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from flowshare import _core, analysis


def reference_events(times: np.ndarray, rtt: float) -> np.ndarray:
    event = np.empty(len(times), dtype=np.int64)
    current, start = -1, -np.inf
    for i, x in enumerate(np.sort(times)):
        if x > start + rtt:
            current += 1
            start = x
        event[i] = current
    return event


def random_losses(rng: np.random.Generator, n: int, rtt: float) -> np.ndarray:
    """Times on a grid of rtt/4 (exact in binary for the rtts used), some repeated, and some
    built as ``start + rtt`` in float from an arbitrary start, in random order."""
    grid = np.cumsum(rng.integers(0, 5, size=n)) * (rtt / 4)
    starts = rng.uniform(0, 50, size=n // 4)
    boundary = np.concatenate([starts, starts + rtt, starts + rtt + rng.choice([0.0, 1e-9], size=len(starts))])
    times = np.concatenate([grid, boundary])
    return rng.permutation(times)


@pytest.mark.parametrize("seed", range(20))
def test_python_and_rust_agree_on_random_losses(seed):
    rng = np.random.default_rng(seed)
    rtt = float(rng.choice([0.25, 0.5, 1.0, 0.1, 0.3]))
    times = random_losses(rng, int(rng.integers(0, 400)), rtt)
    flows = rng.integers(0, 4, size=len(times))
    expected = reference_events(times, rtt)
    got = analysis.loss_events(times, rtt)
    assert got.dtype == np.int64 and got.tolist() == expected.tolist()
    assert analysis.loss_events(times.tolist(), rtt).tolist() == expected.tolist()

    order = np.argsort(times, kind="stable")
    t, f = times[order], flows[order]
    dtype, data = _core.loss_event_index(t, rtt)
    assert np.frombuffer(data, np.dtype(dtype)).tolist() == expected.tolist()
    if not len(t):
        return
    # The cumulative events: start, losses and distinct flows of each event.
    table = _core.cumulative_loss_events(t, f, rtt)
    cum = {k: np.frombuffer(d, np.dtype(dt)) for k, (dt, d) in table.items()}
    frame = pd.DataFrame({"event": expected, "time_s": t, "flow": f}).groupby("event")
    assert cum["start_s"].tolist() == frame["time_s"].min().tolist()
    assert cum["losses"].tolist() == frame.size().tolist()
    assert cum["flows"].tolist() == frame["flow"].nunique().tolist()
    # Flow by flow, each flow with its own RTT.
    ids = np.arange(5, dtype=np.int64)
    rtts = rtt * (1 + ids / 4)
    dtype, data = _core.flow_loss_events(t, f, ids, rtts)
    counts = np.frombuffer(data, np.dtype(dtype)).tolist()
    assert counts == [int(reference_events(t[f == k], rtts[k])[-1] + 1) if (f == k).any() else 0 for k in ids]


def test_the_boundary_is_inclusive():
    assert analysis.loss_events([1.0, 1.5, 1.5 + 1e-12], 0.5).tolist() == [0, 0, 1]
    # The boundary is the float sum: 0.1 + 0.2 = 0.30000000000000004.
    assert analysis.loss_events([0.1, 0.1 + 0.2], 0.2).tolist() == [0, 0]
    assert analysis.loss_events([0.1, np.nextafter(0.1 + 0.2, 1.0)], 0.2).tolist() == [0, 1]
    assert analysis.loss_events([], float("nan")).tolist() == []


def test_loss_measures_agree_with_the_rule_on_a_random_trace():
    rng = np.random.default_rng(7)
    rtt = {0: 0.25, 1: 0.5, 2: 0.125}
    rows = [(float(k) * 0.001, "send", f, "data", k, 0, 0) for f in rtt for k in range(2000)]
    drops = []
    for f in rtt:
        times = random_losses(rng, 300, rtt[f])
        drops += [(float(x), f) for x in times]
    rows += [(x, "drop", f, "data", 0, 0, 0) for x, f in drops]
    ev = pd.DataFrame(rows, columns=["time_s", "kind", "flow", "packet", "seq", "retx", "acked"])
    ev = ev.sort_values("time_s", kind="stable").reset_index(drop=True)
    m = analysis.loss_measures(ev, rtt=rtt)
    t = np.array([x for x, _ in drops])
    fl = np.array([f for _, f in drops])
    per_flow = [int(reference_events(t[fl == f], rtt[f])[-1] + 1) for f in rtt]
    assert m.per_flow["loss_events"].tolist() == per_flow
    cum = reference_events(t, float(np.mean(list(rtt.values()))))
    assert m.cumulative_loss_events == int(cum[-1] + 1)
    order = np.argsort(t, kind="stable")
    hit = pd.DataFrame({"event": cum, "flow": fl[order]}).groupby("event")["flow"].nunique()
    assert m.j_measured == pytest.approx(hit.mean(), rel=1e-15)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="NaN"):
        analysis.loss_events([1.0, 2.0], float("nan"))
    with pytest.raises(ValueError, match="NaN"):
        analysis.loss_events([1.0, float("nan")], 0.1)
    with pytest.raises(ValueError, match="not sorted"):
        _core.loss_event_index(np.array([2.0, 1.0]), 0.1)
    with pytest.raises(ValueError, match="not in ids"):
        _core.flow_loss_events(np.array([1.0]), np.array([3]), np.array([1]), np.array([0.1]))
    with pytest.raises(ValueError, match="flows"):
        _core.cumulative_loss_events(np.array([1.0, 2.0]), np.array([3]), 0.1)
