"""Reproduction of Kuo and Fu (2008): PA-MulTCP against MulTCP and MPAT.

F.-C. Kuo and X. Fu, *Probe-Aided MulTCP: An Aggregate Congestion Control Mechanism*, ACM
SIGCOMM Computer Communication Review 38(1), 2008. The paper's ns-2.29 simulations, on one
drop-tail dumbbell (:mod:`~flowshare.reproduce.pamultcp_network`):

- the throughput model of §3 (eqs. 1-2) against one AIMD loop under random loss;
- Fig. 2: the loss-event rates of MulTCP(2), MulTCP(20) and 200 TCP flows at 400 Mbit/s;
- Figs. 4 and 5: the fairness index and the CoV of an aggregate of weight N against
  200 − N TCP flows at 200 and 400 Mbit/s, and MulTCP's timeouts;
- Figs. 6 and 7: the aggregate's throughput around a CBR flow on [300, 600] s at 120 Mbit/s;
- Figs. 8 and 9: the completion time of a transfer joining a PA-MulTCP(4) or MPAT(4)
  aggregate at 5 Mbit/s.

The measures are :mod:`~flowshare.reproduce.pamultcp_metrics`. The paper's figures carry no
numbers; the targets are the numbers and the orderings its text states (its §5 and
conclusion), one or more rows per claim.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..models import aimd_rate
from . import pamultcp_metrics as metrics
from .pamultcp_network import (CHOICES, OPTIONS, PACKET_B, PAYLOAD_B, RTT_S, Case, Options, Timing,
                               scenario)
from .report import Section, figure_html, run_cost, table_html
from .targets import Target

__all__ = ["CHOICES", "KEY", "OPTIONS", "SCALES", "Options", "Plan", "cases", "evaluate",
           "measure", "plan", "rows_from_store", "sections", "sweep_document", "targets"]

KEY = "pamultcp"
TITLE = ("Kuo and Fu (2008): Probe-Aided MulTCP, an aggregate congestion control mechanism, "
         "against MulTCP and MPAT")
SCALES = ("full", "quick", "tiny")
"""``full``: the paper's (20 runs per condition, 400 s runs, 900 s for §5.2); ``quick``: a
coarser N grid, shorter runs and 2 runs per condition (under three minutes on 2 cores);
``tiny``: seconds of simulated time, for tests."""

SAMPLE_S = 0.1
"""The bins of eq. (12) and of Figs. 6 and 7 (``pamultcp:A5``, ``A29``)."""

N_GRID = (2, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30)
"""The weights of Figs. 4 and 5 (``pamultcp:A22``)."""
SIZES_KB = (10, 20, 30, 50, 100, 200, 300, 400)
"""Fig. 8's transfer sizes (``pamultcp:A20``)."""
SSTHRESH_KB = (4, 8, 16, 32, 64)
"""Fig. 9's initial ssthresh values."""


@dataclass(frozen=True)
class Plan:
    """The conditions and times of one scale."""

    replications: int
    model_loss: tuple[float, ...]
    model_n: tuple[int, ...]
    model: Timing
    s3: Timing
    fair_bandwidths: tuple[float, ...]
    fair_n: tuple[int, ...]
    fair: Timing
    transient: Timing
    short_sizes: tuple[int, ...]
    short_ssthresh: tuple[int, ...]
    short_fig9_sizes: tuple[int, ...]
    short: Timing
    short_default_ssthresh: int = 32
    transient_n: int = 10
    short_n: int = 4
    schemes: tuple[str, ...] = ("multcp", "pamultcp")
    notes: tuple[str, ...] = field(default_factory=tuple)


PLANS = {
    "full": Plan(
        replications=20, model_loss=(0.001, 0.003, 0.01), model_n=(4, 10),
        model=Timing(400.0, 50.0), s3=Timing(400.0, 100.0),
        fair_bandwidths=(200.0, 400.0), fair_n=N_GRID, fair=Timing(400.0, 100.0),
        transient=Timing(900.0, 0.0, 300.0, 600.0),
        short_sizes=SIZES_KB, short_ssthresh=SSTHRESH_KB, short_fig9_sizes=(30, 400),
        short=Timing(350.0, 0.0, 50.0)),
    "quick": Plan(
        replications=2, model_loss=(0.001, 0.01), model_n=(4,),
        model=Timing(100.0, 20.0), s3=Timing(60.0, 20.0),
        fair_bandwidths=(200.0, 400.0), fair_n=(2, 10, 20, 30), fair=Timing(60.0, 30.0),
        transient=Timing(130.0, 0.0, 50.0, 90.0),
        short_sizes=(10, 30, 100, 400), short_ssthresh=(4, 16, 64), short_fig9_sizes=(30, 400),
        short=Timing(120.0, 0.0, 50.0)),
    "tiny": Plan(
        replications=1, model_loss=(0.01,), model_n=(4,),
        model=Timing(20.0, 5.0), s3=Timing(6.0, 3.0),
        fair_bandwidths=(200.0, 400.0), fair_n=(2, 30), fair=Timing(6.0, 3.0),
        transient=Timing(9.0, 0.0, 3.0, 6.0),
        short_sizes=(10, 400), short_ssthresh=(4, 64), short_fig9_sizes=(400,),
        short=Timing(15.0, 0.0, 5.0)),
}


def plan(scale: str) -> Plan:
    """The plan of ``scale``, one of :data:`SCALES`."""
    return PLANS[scale]


def cases(p: Plan, options: Options = OPTIONS) -> list[Case]:
    """Every condition of ``p``."""
    out = [Case("model", "tcp", 1000.0, 1, loss=x) for x in p.model_loss]
    out += [Case("model", scheme, 1000.0, n, loss=x) for scheme in ("aimd", "multcp")
            for n in p.model_n for x in p.model_loss]
    if options.s3_runs == "together":
        out.append(Case("s3", "multcp", 400.0, multcp_n=(2, 20)))
    else:
        out += [Case("s3", "multcp", 400.0, multcp_n=(n,)) for n in (2, 20)]
    out += [Case("fair", s, bw, n) for s in p.schemes for bw in p.fair_bandwidths
            for n in p.fair_n]
    out += [Case("transient", s, 120.0, p.transient_n) for s in p.schemes]
    sizes = {(size, p.short_default_ssthresh) for size in p.short_sizes}
    sizes |= {(size, th) for size in p.short_fig9_sizes for th in p.short_ssthresh}
    out += [Case("short", s, 5.0, p.short_n, size_kb=size, ssthresh_kb=th)
            for s in ("pamultcp", "mpat") for size, th in sorted(sizes)]
    return out


def runnable(p: Plan, options: Options = OPTIONS) -> list[Case]:
    """The conditions of ``p``: the sweep's arms, in order."""
    return cases(p, options)


def timing(case: Case, p: Plan) -> Timing:
    """The times of ``case``'s experiment at plan ``p``."""
    return {"model": p.model, "s3": p.s3, "fair": p.fair, "transient": p.transient,
            "short": p.short}[case.experiment]


def run_scenario(case: Case, p: Plan, options: Options = OPTIONS) -> dict[str, Any]:
    """``case``'s scenario as the reproduction runs it: time series (0.1 s) only where a
    measure needs them (§5.1's CoV, §5.2's traces)."""
    sample = SAMPLE_S if case.experiment in ("fair", "transient") else 0.0
    return scenario(case, timing(case, p), options, sample_interval_s=sample)


SWEPT = ("simulation.duration", "simulation.warmup", "simulation.sample_interval", "topology",
         "flows")
"""The scenario keys every arm sets."""


def _value(s: dict[str, Any], key: str) -> Any:
    for part in key.split("."):
        s = s[part]
    return s


def sweep_document(p: Plan, options: Options = OPTIONS) -> dict[str, Any]:
    """The sweep of every runnable condition: one arm per case, in :func:`runnable` order."""
    scenarios = [run_scenario(c, p, options) for c in runnable(p, options)]
    return {
        "base": scenarios[0],
        "replications": p.replications,
        "root_seed": 2008,
        "points": [{key: _value(s, key) for key in SWEPT} for s in scenarios],
    }


# ---------------------------------------------------------------------------------------------
# Measurement


LOOP_COLUMNS = ("probe_cwnd", "adjust_cwnd", "w_max", "p_probe")
"""PA-MulTCP's series of its two loops (a MulTCP flow has none)."""


def _flow_series(run_dir: Path, flow: int) -> pd.DataFrame:
    """The time series of one flow (``time_s``, ``send_rate_bps``, ``goodput_bps`` and, for a
    PA-MulTCP flow, :data:`LOOP_COLUMNS`), read without the other
    flows' rows."""
    path = run_dir / "timeseries.parquet"
    columns = ["time_s", "send_rate_bps", "goodput_bps"]
    if not path.is_file():
        return pd.DataFrame(columns=columns)
    import pyarrow.parquet as pq

    names = set(pq.read_schema(path).names)
    columns += [c for c in LOOP_COLUMNS if c in names]
    s = pd.read_parquet(path, columns=["kind", "id", *columns],
                        filters=[("kind", "==", "flow"), ("id", "==", flow)])
    return s[columns].sort_values("time_s").reset_index(drop=True)


def _members(run_dir: Path) -> pd.DataFrame:
    """The members table of a short-transfer run (every such run has joins, so it has one)."""
    for name in ("members.parquet", "members.csv"):
        path = run_dir / name
        if path.is_file():
            return pd.read_parquet(path) if name.endswith(".parquet") else pd.read_csv(path)
    raise FileNotFoundError(f"{run_dir}: a short-transfer run without its members table")


def fair_share_levels(p: Plan, options: Options = OPTIONS) -> tuple[float, float]:
    """§5.2's aggregate fair share with and without the CBR flow, in bit/s: N/(N + m) of what
    the CBR flow leaves (its packets on the wire), and of the whole bottleneck."""
    n, m, capacity = p.transient_n, 20, 120e6
    cbr_wire = options.cbr_mbps * 1e6 * PACKET_B / (PACKET_B - 28)
    share = n / (n + m)
    return share * (capacity - cbr_wire), share * capacity


def measure(run_dir: Path, case: Case, p: Plan, options: Options = OPTIONS) -> dict[str, Any]:
    """The per-run values of ``case``'s measures, from one run's directory."""
    flows = pd.read_csv(run_dir / "flows.csv")
    t = timing(case, p)
    row: dict[str, Any] = {
        "experiment": case.experiment, "scheme": case.scheme, "bandwidth_mbps":
        case.bandwidth_mbps, "n": case.n, "size_kb": case.size_kb,
        "ssthresh_kb": case.ssthresh_kb, "loss": case.loss, "label": case.label,
        "packets": int(flows["packets_sent"].sum()),
    }
    rate = metrics.loss_event_rate(flows)
    if case.experiment == "model":
        f = flows.iloc[0]
        span = t.duration_s
        throughput = float(f["packets_sent"]) / span        # pkt/s, retransmissions included
        p_e = float(rate.iloc[0])
        rtt = float(f["rtt_mean_s"])
        a, b = {"tcp": (1.0, 0.5), "multcp": (float(case.n), 1 / (2 * case.n)),
                "aimd": (math.sqrt(case.n), 2 / (1 + 3 * case.n ** 1.5))}[case.scheme]
        model = float(aimd_rate(a, b, p_e, rtt)) if 0 < p_e < 1 and rtt > 0 else math.nan
        row.update(throughput_pps=throughput, p_e=p_e, rtt_s=rtt, model_pps=model,
                   model_ratio=throughput / model if model > 0 else math.nan,
                   timeouts=int(f["timeouts"]),
                   timeout_share=(float(f["timeouts"]) / (float(f["timeouts"])
                                                          + float(f["fast_retransmits"]))
                                  if float(f["timeouts"]) + float(f["fast_retransmits"]) > 0
                                  else math.nan),
                   # T·sqrt(p): eq. (2) makes it the same for all p; its ratio to TCP's is the
                   # weight at equal loss.
                   t_sqrt_p=throughput * math.sqrt(p_e) if p_e > 0 else math.nan)
        return row
    if case.experiment == "s3":
        names = flows["name"].astype(str)
        row["p_tcp"] = float(rate[names == "tcp"].mean())
        for n in (2, 20):
            sel = rate[names == f"multcp{n}"]
            row[f"p_multcp{n}"] = float(sel.mean()) if len(sel) else math.nan
        return row
    agg = flows[flows["name"].astype(str) == "agg"].iloc[0]
    tcp = flows[flows["name"].astype(str) == "tcp"]
    row["agg_timeouts"] = int(agg["timeouts"])
    row["agg_fast_retransmits"] = int(agg["fast_retransmits"])
    if case.experiment == "fair":
        row["agg_goodput_mbps"] = float(agg["goodput_bps"]) / 1e6
        row["tcp_goodput_mbps"] = float(tcp["goodput_bps"].mean()) / 1e6
        row["fi"] = metrics.fairness_index(float(agg["goodput_bps"]), case.n,
                                           tcp["goodput_bps"].to_numpy(dtype=np.float64))
        mine = _flow_series(run_dir, int(agg["flow"]))
        steady = metrics.bins_in(mine, t.warmup_s, t.duration_s, SAMPLE_S)
        row["cov"] = metrics.cov(steady["send_rate_bps"].to_numpy(dtype=np.float64))
        row["p_agg"] = float(rate[agg.name])
        row["p_tcp"] = float(rate[tcp.index].mean())
        # TCP's goodput over eq. (2)'s rate at each flow's own loss-event rate and mean RTT:
        # PA-MulTCP's cap W_max(p) assumes TCP reaches eq. (2).
        model = [aimd_rate(1.0, 0.5, float(pe), float(r)) * PAYLOAD_B * 8
                 for pe, r in zip(rate[tcp.index], tcp["rtt_mean_s"], strict=True)
                 if 0 < pe < 1 and r > 0]
        row["tcp_over_model"] = (float(tcp["goodput_bps"].mean()) / float(np.mean(model))
                                 if model else math.nan)
        if "adjust_cwnd" in steady and "w_max" in steady:
            cap = steady["w_max"].to_numpy(dtype=np.float64)
            row["adjust_over_cap"] = (float(np.nanmean(steady["adjust_cwnd"])) / float(np.nanmean(cap))
                                      if np.isfinite(cap).any() else math.nan)
        return row
    if case.experiment == "transient":
        mine = _flow_series(run_dir, int(agg["flow"]))
        column = "send_rate_bps" if options.trace_rate == "sending" else "goodput_bps"
        times = mine["time_s"].to_numpy(dtype=np.float64)
        rates = mine[column].to_numpy(dtype=np.float64)
        congested, free = fair_share_levels(p, options)
        row["response_rtt"] = metrics.response_time(times, rates, t.on_s, congested, RTT_S)
        row["recovery_rtt"] = metrics.response_time(times, rates, t.off_s, free, RTT_S, "up")
        dip = metrics.bins_in(mine, t.on_s, t.on_s + 5.0, SAMPLE_S)[column]
        row["dip_share"] = float(dip.min()) / congested if len(dip) else math.nan
        during = metrics.bins_in(mine, t.on_s + 10.0, t.off_s, SAMPLE_S)[column]
        row["cov_congested"] = metrics.cov(during.to_numpy(dtype=np.float64))
        row["mean_congested_mbps"] = float(during.mean()) / 1e6 if len(during) else math.nan
        row["trace_t"] = json.dumps([round(x, 3) for x in times.tolist()])
        row["trace_mbps"] = json.dumps([round(x / 1e6, 4) for x in rates.tolist()])
        loops = {c: mine[c].to_numpy(dtype=np.float64) for c in LOOP_COLUMNS if c in mine}
        if loops and np.isfinite(np.concatenate(list(loops.values()))).any():
            row["trace_loops"] = json.dumps({c: [None if not math.isfinite(v) else round(v, 6)
                                                 for v in x.tolist()]
                                             for c, x in loops.items()})
        return row
    # short
    members = _members(run_dir)
    row["completion_s"] = metrics.completion_time(members, t.on_s)
    return row


def rows_from_store(store: Path, p: Plan, options: Options = OPTIONS) -> pd.DataFrame:
    """One measured row per finished run of the store."""
    catalog = pd.read_parquet(store / "catalog.parquet")
    arms = runnable(p, options)
    out = []
    for _, r in catalog.iterrows():
        if r["status"] != "done":
            continue
        case = arms[int(r["arm"])]
        row = measure(store / "runs" / str(r["run_id"]), case, p, options)
        row["replication"] = int(r["replication"])
        row["run_id"] = str(r["run_id"])
        row["wall_s"] = float(r["wall_s"])
        out.append(row)
    rows = pd.DataFrame(out)
    if len(rows):
        rows = rows.sort_values(["experiment", "scheme", "bandwidth_mbps", "n", "size_kb",
                                 "ssthresh_kb", "loss", "replication"],
                                kind="stable").reset_index(drop=True)
    rows.attrs["plan"] = p
    rows.attrs["options"] = options
    return rows


def write_rows(rows: pd.DataFrame, path: Path) -> None:
    """The measured runs as CSV (``runs.csv``), without the §5.2 traces."""
    rows.drop(columns=[c for c in ("trace_t", "trace_mbps", "trace_loops") if c in rows],
              errors="ignore").to_csv(path, index=False, float_format="%.6g")


# ---------------------------------------------------------------------------------------------
# Targets

Measure = Callable[[pd.DataFrame], tuple[float | None, str]]

@dataclass(frozen=True)
class _Spec:
    target: Target
    measure: Measure
    item: int


def _t(id: str, description: str, published: float, tolerance: float,
       comparison: str = "close", kind: str = "absolute") -> Target:
    return Target(id, description, published, tolerance, comparison, kind)


def _select(rows: pd.DataFrame, **where: Any) -> pd.DataFrame:
    if rows.empty:
        return rows
    sel = rows
    for key, value in where.items():
        if key not in sel:
            return sel.iloc[0:0]
        sel = sel[sel[key] == value]
    return sel


def _means(rows: pd.DataFrame, by: str, column: str, **where: Any) -> pd.Series:
    """Mean of ``column`` over runs per value of ``by`` (finite values only)."""
    sel = _select(rows, **where)
    if sel.empty or column not in sel:
        return pd.Series(dtype=np.float64)
    sel = sel[np.isfinite(sel[column].astype(np.float64))]
    return sel.groupby(by)[column].mean().sort_index()


def _mean(rows: pd.DataFrame, column: str, **where: Any) -> tuple[float | None, str]:
    sel = _select(rows, **where)
    if sel.empty or column not in sel:
        return None, "no run of this condition at this scale"
    values = sel[column].to_numpy(dtype=np.float64)
    values = values[np.isfinite(values)]
    if not values.size:
        return None, f"no run measured {column}"
    return float(values.mean()), ""


def recovery_rtt_factor(p: float) -> float:
    """eq. (2)'s rate for AIMD(1, 1/2) corrected for one round trip per loss event spent in
    fast recovery at W/2 without growth, over eq. (2)'s own: a cycle then carries
    3W²/8 + W/2 packets in W/2 + 1 round trips.

    >>> round(recovery_rtt_factor(0.01), 3)
    0.924
    """
    # 3W²/8 + W/2 = 1/p, for W > 0.
    w = (-0.5 + math.sqrt(0.25 + 1.5 / p)) / 0.75
    return (1 / p) / (w / 2 + 1) / math.sqrt(1.5 / p)


def _model_ratio(loss: float) -> Measure:
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        value, why = _mean(rows, "model_ratio", experiment="model", scheme="tcp", loss=loss)
        share, _ = _mean(rows, "timeout_share", experiment="model", scheme="tcp", loss=loss)
        p_e, _ = _mean(rows, "p_e", experiment="model", scheme="tcp", loss=loss)
        if value is not None and p_e is not None and 0 < p_e < 1:
            why = ("eqs. (1)-(2) assume a deterministic saw-tooth: one round trip per loss "
                   "event in fast recovery without growth alone gives "
                   f"{recovery_rtt_factor(p_e):.3g} of eq. (2) at p = {p_e:.3g}"
                   + (f", and {share:.0%} of the loss events were timeouts (minimum RTO 1 s)"
                      if share else ""))
        return value, why
    return m


def _weighted(n: int, scheme: str = "aimd") -> Measure:
    """T·√p of AIMD(√N, 2/(1+3N^1.5)) over TCP's, over N: 1 when the loop is worth N flows at
    equal loss. For MulTCP(N), over N times its model factor √((2 − 1/(2N))/1.5) (eq. 2 with
    AIMD(N, 1/(2N)))."""
    factor = 1.0 if scheme == "aimd" else math.sqrt((2 - 1 / (2 * n)) / 1.5)

    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        a = _means(rows, "loss", "t_sqrt_p", experiment="model", scheme=scheme, n=n)
        b = _means(rows, "loss", "t_sqrt_p", experiment="model", scheme="tcp")
        if a.empty:
            return None, f"no run of this N = {n} loop at this scale"
        common = a.index.intersection(b.index)
        if not len(common):
            return None, "no runs of this loop and of Reno at the same loss"
        why = ""
        own, _ = _mean(rows, "model_ratio", experiment="model", scheme=scheme, n=n)
        tcp, _ = _mean(rows, "model_ratio", experiment="model", scheme="tcp")
        share, _ = _mean(rows, "timeout_share", experiment="model", scheme=scheme, n=n)
        if own is not None and tcp is not None:
            why = (f"the loop reaches {own:.3g} of its own eq. (2) rate, Reno {tcp:.3g} of its"
                   + (f"; {share:.0%} of the loop's loss events were timeouts" if share else ""))
        return float(np.mean(a[common] / b[common])) / (n * factor), why
    return m


def _s3_ratio(n: int) -> Measure:
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        sel = _select(rows, experiment="s3")
        if sel.empty:
            return None, "no Fig. 2 run"
        pm = sel[f"p_multcp{n}"].to_numpy(dtype=np.float64)
        pt = sel["p_tcp"].to_numpy(dtype=np.float64)
        pm, pt = pm[np.isfinite(pm)], pt[np.isfinite(pt)]
        if not pm.size or not pt.size or pt.mean() <= 0:
            return None, "no loss event measured"
        return float(pm.mean() / pt.mean()), ""
    return m


def _fi_curve(rows: pd.DataFrame, scheme: str, bw: float) -> pd.Series:
    return _means(rows, "n", "fi", experiment="fair", scheme=scheme, bandwidth_mbps=bw)


def _pa_fi_dev(bw: float) -> Measure:
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        fi = _fi_curve(rows, "pamultcp", bw)
        if fi.empty:
            return None, "no PA-MulTCP run at this bandwidth"
        return float(np.max(np.abs(fi.to_numpy() - 1.0))), _pa_fi_why(rows, bw)
    return m


def pa_fi_predicted(n: int, adjust_over_cap: float, tcp_over_model: float) -> float:
    """PA-MulTCP's FI if its probe loop gets one TCP flow's goodput and its adjusting loop,
    AIMD(√N′, b′) with N′ = N − 1 (the default weight), sits at ``adjust_over_cap`` of its cap
    W_max(p): the cap's rate is 2/(2 − b′) times eq. (2)'s mean rate of the loop, N′ TCP flows'
    model rate, which the TCP flows reach ``tcp_over_model`` of.

    >>> round(pa_fi_predicted(10, 1.0, 1.0), 4)  # at the cap, TCP on the model: 1 + b′/(2 − b′)
    1.0111
    """
    weight = n - 1
    b = 2 / (1 + 3 * weight ** 1.5)
    return (1 + adjust_over_cap * 2 / (2 - b) * weight / tcp_over_model) / n


def _pa_fi_why(rows: pd.DataFrame, bw: float) -> str:
    """Why PA-MulTCP's FI is off 1: where its adjusting loop sits against its cap W_max(p), and
    how far the TCP flows fall short of eq. (2), on which the cap rests."""
    sel = _select(rows, experiment="fair", scheme="pamultcp", bandwidth_mbps=bw)
    if sel.empty or "tcp_over_model" not in sel or "adjust_over_cap" not in sel:
        return ""
    g = sel.groupby("n")[["fi", "tcp_over_model", "adjust_over_cap"]].mean()
    worst = int((g["fi"] - 1.0).abs().idxmax())
    w = g.loc[worst]
    if not (np.isfinite(w["tcp_over_model"]) and w["tcp_over_model"] > 0
            and np.isfinite(w["adjust_over_cap"])):
        return ""
    predicted = pa_fi_predicted(worst, float(w["adjust_over_cap"]), float(w["tcp_over_model"]))
    return (f"at N = {worst} (FI {w['fi']:.3g}) the adjusting loop sits at "
            f"{w['adjust_over_cap']:.3g} of its cap W_max(p), which eqs. (1)-(2) make N − 1 TCP "
            f"flows' rate at the probe loop's loss-event rate, and the TCP flows reach only "
            f"{w['tcp_over_model']:.3g} of eq. (2)'s rate at their own loss-event rate and RTT "
            f"({g['tcp_over_model'].min():.3g}-{g['tcp_over_model'].max():.3g} over N): with "
            f"the probe loop worth one TCP flow these predict FI {predicted:.3g}")


def _multcp_fi_small(bw: float) -> Measure:
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        fi = _fi_curve(rows, "multcp", bw)
        if fi.empty:
            return None, "no MulTCP run at this bandwidth"
        return float(fi.iloc[0]), ""
    return m


def _multcp_why(rows: pd.DataFrame, bw: float) -> str:
    """Why MulTCP's FI does not fall below 1: its loss-event rate against TCP's, the FI that
    §3.2's argument predicts from them, and its timeouts."""
    sel = _select(rows, experiment="fair", scheme="multcp", bandwidth_mbps=bw)
    if sel.empty:
        return ""
    g = sel.groupby("n")[["fi", "p_agg", "p_tcp", "agg_timeouts"]].mean()
    n = int(g.index.max())
    last = g.loc[n]
    if not (last["p_agg"] > 0 and last["p_tcp"] > 0):
        return ""
    predicted = math.sqrt((2 - 1 / (2 * n)) / 1.5) * math.sqrt(last["p_tcp"] / last["p_agg"])
    return (f"at N = {n} MulTCP sees a loss-event rate {last['p_agg'] / last['p_tcp']:.3g} "
            f"times TCP's, for which §3.2's argument (FI = √(p_t/p_m) times the AIMD(N, 1/(2N)) "
            f"factor) predicts FI {predicted:.3g} (measured {last['fi']:.3g}); with "
            f"{last['agg_timeouts']:.3g} timeouts per run it never collapses, where the paper "
            "attributes FI < 1 at large N to MulTCP's timeouts under ns-2.29's SACK agent")


NO_CROSSING = 31.0
"""The crossing reported when MulTCP's FI stays ≥ 1 up to N = 30."""


def _multcp_crossing(bw: float) -> Measure:
    """The weight N at which MulTCP's mean FI falls through 1, interpolated linearly between
    the grid's last N with FI ≥ 1 and the next; :data:`NO_CROSSING` if it never does."""
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        fi = _fi_curve(rows, "multcp", bw)
        if len(fi) < 2:
            return None, "fewer than two weights N at this scale"
        return metrics.crossing(fi.index.to_numpy(dtype=np.float64), fi.to_numpy(), 1.0,
                                NO_CROSSING), _multcp_why(rows, bw)
    return m


def _rank(x: str, column: str, why: Callable[[pd.DataFrame], str] | None = None,
          **where: Any) -> Measure:
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        curve = _means(rows, x, column, **where)
        if len(curve) < 2:
            return None, f"fewer than two values of {x} at this scale"
        value = metrics.spearman(curve.index.to_numpy(dtype=np.float64), curve.to_numpy())
        if math.isnan(value):
            return None, f"{column} is constant over {x}"
        return value, why(rows) if why is not None else ""
    return m


def _share_why(scheme: str, bw: float) -> Callable[[pd.DataFrame], str]:
    """Why the CoV falls with N: the aggregate's share of the link against N/200."""
    def why(rows: pd.DataFrame) -> str:
        sel = _select(rows, experiment="fair", scheme=scheme, bandwidth_mbps=bw)
        if sel.empty:
            return ""
        g = sel.groupby("n")["agg_goodput_mbps"].mean()
        n = int(g.index.max())
        return (f"at N = {n} the aggregate carries {g.loc[n] / bw:.0%} of the link (its fair "
                f"share: {n / 200:.0%}), so its rate varies less relative to its mean")
    return why


def _share_pairs(column: str, a: dict[str, Any], b: dict[str, Any]) -> Measure:
    """The share of the N grid where the mean of ``column`` under ``a`` exceeds that under
    ``b``."""
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        x = _means(rows, "n", column, experiment="fair", **a)
        y = _means(rows, "n", column, experiment="fair", **b)
        common = x.index.intersection(y.index)
        if not len(common):
            return None, "no weight N run in both conditions"
        return float(np.mean(x[common].to_numpy() > y[common].to_numpy())), ""
    return m


def _transient(column: str, scheme: str) -> Measure:
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        return _mean(rows, column, experiment="transient", scheme=scheme)
    return m


def _transient_diff(column: str, ratio: bool = False) -> Measure:
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        a, why = _mean(rows, column, experiment="transient", scheme="pamultcp")
        b, why_b = _mean(rows, column, experiment="transient", scheme="multcp")
        if a is None or b is None:
            return None, why or why_b
        if ratio:
            return (a / b, "") if b > 0 else (None, "MulTCP's value is 0")
        return a - b, ""
    return m


def _completion(rows: pd.DataFrame, scheme: str, **where: Any) -> pd.Series:
    return _means(rows, "size_kb" if "ssthresh_kb" in where else "ssthresh_kb",
                  "completion_s", experiment="short", scheme=scheme, **where)


def _short_unmeasurable(rows: pd.DataFrame) -> str:
    """Why no completion time could be measured, when the runs say it."""
    sel = _select(rows, experiment="short")
    if sel.empty:
        return "no short-transfer run finished"
    if not np.isfinite(sel["completion_s"].astype(np.float64)).any():
        return "no joined member completed its transfer before the end of its run"
    return ""


def _latency_curve(rows: pd.DataFrame, ssthresh_kb: int) -> pd.Series:
    pa = _completion(rows, "pamultcp", ssthresh_kb=ssthresh_kb)
    mp = _completion(rows, "mpat", ssthresh_kb=ssthresh_kb)
    common = pa.index.intersection(mp.index)
    return pd.Series([metrics.reduced_latency(float(mp[s]), float(pa[s])) for s in common],
                     index=common, dtype=np.float64)


def _latency(kind: str) -> Measure:
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        p = rows.attrs.get("plan")
        th = p.short_default_ssthresh if p is not None else 32
        curve = _latency_curve(rows, th).dropna()
        if curve.empty:
            return None, (_short_unmeasurable(rows)
                          or "no size with a completed transfer of both PA-MulTCP and MPAT")
        if kind == "min":
            return float(curve.min()), ""
        if kind == "max":
            return float(curve.max()), ""
        if len(curve) < 2:
            return None, "fewer than two transfer sizes"
        value = metrics.spearman(curve.index.to_numpy(dtype=np.float64), curve.to_numpy())
        return (None, "reduced latency constant") if math.isnan(value) else (value, "")
    return m


def _ssthresh_rank(scheme: str, size: int) -> Measure:
    """Spearman's rank correlation of ``scheme``'s completion time with the initial ssthresh."""
    def rank(curve: pd.Series) -> tuple[float | None, str]:
        value = metrics.spearman(curve.index.to_numpy(dtype=np.float64), curve.to_numpy())
        return (None, "completion time constant") if math.isnan(value) else (value, "")
    return _over_ssthresh(scheme, size, rank)


def _ssthresh_spread(scheme: str, size: int) -> Measure:
    """(max − min) / mean of ``scheme``'s completion time over the initial ssthresh values."""
    return _over_ssthresh(scheme, size,
                          lambda c: (float((c.max() - c.min()) / c.mean()), ""))


def _over_ssthresh(scheme: str, size: int,
                   reduce: Callable[[pd.Series], tuple[float | None, str]]) -> Measure:
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        curve = _completion(rows, scheme, size_kb=size).dropna()
        if len(curve) < 2:
            return None, (_short_unmeasurable(rows)
                          or "fewer than two initial ssthresh values measured")
        return reduce(curve)
    return m


CROSSING = {200.0: (10.0, 2.0), 400.0: (27.5, 2.5)}
"""Where MulTCP's FI crosses 1 (published, tolerance): at 200 Mbit/s near N = 10, within one
step of the N grid either way; at 400 Mbit/s between N = 25 and 30."""
RANK = 0.5
"""A trend holds when Spearman's rank correlation over the grid is at least 0.5 in the stated
direction."""
RESPONSE_TOL_RTT = 2.5
"""§5.2's 7-8 and 17-18 RTTs, each within ±2 RTTs: the centre 7.5 (17.5) ± 2.5."""
PA_FI_TOL = 0.15
FLAT_SPREAD = 0.10


def _specs() -> list[_Spec]:
    out: list[_Spec] = []
    for loss in (0.001, 0.003, 0.01):
        out.append(_Spec(_t(f"C1a.tcp_model.p{loss:g}",
                            f"§3 eqs. (1)-(2): AIMD(1, 1/2) alone under {loss:g} Bernoulli loss, "
                            "simulated rate over the model's at the measured loss-event rate "
                            "and RTT", 1.0, 0.05), _model_ratio(loss), 1))
    for n in (4, 10):
        out.append(_Spec(_t(f"C1b.aimd_weight.N{n}",
                            f"§3 eq. (5): AIMD(√{n}, 2/(1+3·{n}^1.5)) alone under Bernoulli "
                            f"loss, T·√p over TCP's T·√p, divided by N = {n} (1: N TCP flows' "
                            "throughput at the same loss-event rate)", 1.0, 0.10),
                         _weighted(n), 1))
    for n in (4, 10):
        out.append(_Spec(_t(f"C1c.multcp_weight.N{n}",
                            f"§3 eq. (2) for a ≠ 1: MulTCP({n}) = AIMD({n}, 1/{2 * n}) alone under "
                            "Bernoulli loss, T·√p over TCP's T·√p, divided by N times the model "
                            f"factor √((2 − 1/(2N))/1.5) = {math.sqrt((2 - 1 / (2 * n)) / 1.5):.3f}",
                            1.0, 0.10), _weighted(n, "multcp"), 1))
    for n in (2, 20):
        out.append(_Spec(_t(f"C2.s3.multcp{n}_loss_below_tcp",
                            f"Fig. 2: loss-event rate of MulTCP({n}) over that of the 200 TCP "
                            "flows at 400 Mbit/s (below 1: MulTCP sees fewer loss events)",
                            1.0, 0.0, "at_most"), _s3_ratio(n), 2))
    for bw in (200.0, 400.0):
        b = f"{bw:g}"
        out.append(_Spec(_t(f"C3a.pa.fi_max_deviation.{b}",
                            f"Fig. 4: PA-MulTCP's largest |FI − 1| over N = 2…30 at {b} Mbit/s "
                            "(fair sharing at every N)", 0.0, PA_FI_TOL),
                         _pa_fi_dev(bw), 3))
    for bw, cross in ((200.0, "it loses bandwidth when N > 10"),
                      (400.0, "FI > 1 when N ≤ 25, < 1 when N > 25")):
        b = f"{bw:g}"
        out.append(_Spec(_t(f"C3b.multcp.fi_small_n.{b}",
                            f"Fig. 4: MulTCP's FI at the smallest N (2) at {b} Mbit/s "
                            "(above 1: more aggressive than N flows)", 1.0, 0.0, "at_least"),
                         _multcp_fi_small(bw), 3))
        out.append(_Spec(_t(f"C3b.multcp.fi_decreasing.{b}",
                            f"Fig. 4: rank correlation of MulTCP's FI with N at {b} Mbit/s "
                            "(FI falls as N grows)", -1.0, RANK, "at_most"),
                         _rank("n", "fi", lambda rows, bw=bw: _multcp_why(rows, bw),
                               experiment="fair", scheme="multcp", bandwidth_mbps=bw), 3))
        out.append(_Spec(_t(f"C3b.multcp.fi_crossing.{b}",
                            f"Fig. 4: the N at which MulTCP's FI falls below 1 at {b} Mbit/s, "
                            f"interpolated on the N grid, {NO_CROSSING:g} if it stays ≥ 1 up to "
                            f"N = 30 (§5.1: {cross})", *CROSSING[bw]),
                         _multcp_crossing(bw), 3))
        out.append(_Spec(_t(f"C3c.multcp.timeouts_rise.{b}",
                            f"§5.1: rank correlation of MulTCP's timeouts per run with N at {b} "
                            "Mbit/s (more timeouts at large N)", 1.0, RANK, "at_least"),
                         _rank("n", "agg_timeouts", experiment="fair", scheme="multcp",
                               bandwidth_mbps=bw), 3))
    for scheme, who in (("pamultcp", "PA-MulTCP"), ("multcp", "MulTCP")):
        for bw in (200.0, 400.0):
            out.append(_Spec(_t(f"C4a.{scheme}.cov_rises.{bw:g}",
                                f"Fig. 5: rank correlation of {who}'s CoV with N at {bw:g} "
                                "Mbit/s (higher CoV at larger N)", 1.0, RANK, "at_least"),
                             _rank("n", "cov", _share_why(scheme, bw), experiment="fair",
                                   scheme=scheme, bandwidth_mbps=bw), 4))
        out.append(_Spec(_t(f"C4b.{scheme}.cov_200_above_400",
                            f"Fig. 5: share of N at which {who}'s CoV at 200 Mbit/s exceeds "
                            "that at 400 Mbit/s", 1.0, 0.0, "at_least"),
                         _share_pairs("cov", {"scheme": scheme, "bandwidth_mbps": 200.0},
                                      {"scheme": scheme, "bandwidth_mbps": 400.0}), 4))
    for bw in (200.0, 400.0):
        out.append(_Spec(_t(f"C4c.pa_cov_below_multcp.{bw:g}",
                            f"Fig. 5: share of N at which PA-MulTCP's CoV is below MulTCP's at "
                            f"{bw:g} Mbit/s", 1.0, 0.0, "at_least"),
                         _share_pairs("cov", {"scheme": "multcp", "bandwidth_mbps": bw},
                                      {"scheme": "pamultcp", "bandwidth_mbps": bw}), 4))
    out.append(_Spec(_t("C5a.pa.response_rtt",
                        "Fig. 7: PA-MulTCP(10)'s response time to the CBR flow, RTTs "
                        "(§5.2: 7-8 RTTs)", 7.5, RESPONSE_TOL_RTT),
                     _transient("response_rtt", "pamultcp"), 5))
    out.append(_Spec(_t("C5b.multcp.response_rtt",
                        "Fig. 6: MulTCP(10)'s response time to the CBR flow, RTTs "
                        "(§5.2: 17-18 RTTs)", 17.5, RESPONSE_TOL_RTT),
                     _transient("response_rtt", "multcp"), 5))
    for scheme, who in (("pamultcp", "PA-MulTCP"), ("multcp", "MulTCP")):
        out.append(_Spec(_t(f"C5c.{scheme}.dip",
                            f"Figs. 6/7: {who}(10)'s lowest 0.1 s rate in the 5 s after the CBR "
                            "flow starts, over its fair share then (§5.2: rates drop to almost "
                            "zero)", 0.0, 0.1, "at_most"),
                         _transient("dip_share", scheme), 5))
    out.append(_Spec(_t("C5d.pa_more_stable_congested",
                        "Figs. 6/7: PA-MulTCP's CoV during the CBR flow over MulTCP's "
                        "(PA-MulTCP stays stable)", 1.0, 0.0, "at_most"),
                     _transient_diff("cov_congested", ratio=True), 5))
    out.append(_Spec(_t("C5e.pa_recovers_faster",
                        "Figs. 6/7: PA-MulTCP's recovery time after the CBR flow stops minus "
                        "MulTCP's, RTTs (PA-MulTCP claims the freed bandwidth sooner)",
                        0.0, 0.0, "at_most"),
                     _transient_diff("recovery_rtt"), 5))
    out.append(_Spec(_t("C6a.reduced_latency_min",
                        "Fig. 8b: smallest reduced latency (CT_MPAT − CT_PA)/CT_MPAT over the "
                        "sizes, % (§5.3: 25-50 %)", 25.0, 0.0, "at_least"),
                     _latency("min"), 6))
    out.append(_Spec(_t("C6b.reduced_latency_max",
                        "Fig. 8b: largest reduced latency over the sizes, % (§5.3: 25-50 %)",
                        50.0, 0.0, "at_most"), _latency("max"), 6))
    out.append(_Spec(_t("C6c.reduced_latency_falls_with_size",
                        "Fig. 8b: rank correlation of the reduced latency with the transfer "
                        "size (the improvement decreases as the size grows)", -1.0, RANK,
                        "at_most"), _latency("rank"), 6))
    for size in (30, 400):
        out.append(_Spec(_t(f"C7a.mpat_faster_with_ssthresh.{size}KB",
                            f"Fig. 9: rank correlation of MPAT's completion time of {size} KB "
                            "with the initial ssthresh (higher ssthresh, shorter time)", -1.0,
                            RANK, "at_most"), _ssthresh_rank("mpat", size), 7))
        out.append(_Spec(_t(f"C7b.pa_flat_in_ssthresh.{size}KB",
                            f"Fig. 9: spread (max − min)/mean of PA-MulTCP's completion time of "
                            f"{size} KB over the initial ssthresh (does not vary)", 0.0,
                            FLAT_SPREAD, "at_most"), _ssthresh_spread("pamultcp", size), 7))
    return out


def targets() -> list[Target]:
    """Every numeric target of the study, unevaluated, in report order."""
    return [s.target for s in _specs()]


def evaluate(rows: pd.DataFrame) -> list[Target]:
    """Every target evaluated against the measured runs ``rows`` (one row per run)."""
    out = []
    for spec in _specs():
        value, note = spec.measure(rows) if not rows.empty else (None, "no run finished")
        # A measure's note explains a miss; a pass carries none.
        out.append(spec.target.unmeasured(note) if value is None
                   else spec.target.evaluate(value).explained(note))
    return out


CHECKLIST = {
    1: "The AIMD(a, b) model, eqs. (1)-(2), within a few % for one loop under random loss; "
       "AIMD(√N, 2/(1+3N^1.5)) ≈ N times TCP at the same loss-event rate.",
    2: "Fig. 2: MulTCP(2) and MulTCP(20) see lower loss-event rates than TCP.",
    3: "Fig. 4: PA-MulTCP's FI ≈ 1 for N = 2…30 at 200 and 400 Mbit/s; MulTCP's FI > 1 at small "
       "N, falling, below 1 above N = 25 (400) and N = 10 (200); MulTCP's timeouts rise with N.",
    4: "Fig. 5: the CoV rises with N and is higher at 200 than at 400 Mbit/s; PA-MulTCP's is "
       "below MulTCP's at every N.",
    5: "Figs. 6/7: PA-MulTCP reacts in 7-8 RTTs, MulTCP in 17-18; both dip to ≈ 0; PA-MulTCP is "
       "stable under congestion and reclaims the freed bandwidth sooner.",
    6: "Fig. 8: PA-MulTCP's completion time 25-50 % below MPAT's (ssthresh 32 KB), the gap "
       "shrinking with the size.",
    7: "Fig. 9: MPAT's completion time falls as the initial ssthresh rises; PA-MulTCP's is flat.",
}
"""The paper's claims, one per item of the acceptance checklist."""


# ---------------------------------------------------------------------------------------------
# Report

PAPER = {
    "model": "§3 (eqs. 1-2, after Yang and Lam): an AIMD(a, b) loop at loss-event rate p has "
             "a peak window W = √(2a/(b(2−b)p)) and a rate T = (2−b)W/(2·RTT); with "
             "b = 2a/(3N² + a) (eq. 5) it is as fast as N TCP flows at the same p.",
    "s3": "§3.2, Fig. 2: \"MulTCP(N) flows experience lower loss event rates than a standard TCP "
          "flow … it may be inferred that the inconsistency in loss rate is the reason for "
          "MulTCP's aggressive behavior.\"",
    "fair": "§5.1, Figs. 4 and 5: at 400 Mbit/s \"the fairness index of MulTCP is larger than 1 "
            "when N ≤ 25 … the MulTCP aggregate loses bandwidth to background traffic when "
            "N > 25\"; at 200 Mbit/s it \"loses bandwidth … when N > 10\", from \"an increased "
            "number of timeouts\". \"PA-MulTCP maintains fair sharing … when N ranges from 2 to "
            "30, regardless whether the bottleneck bandwidth is 200 or 400 Mbps.\" \"The CoV is "
            "higher in both schemes, either when the bottleneck bandwidth is smaller or the "
            "weight N is larger. Nevertheless, PA-MulTCP always achieves lower CoV than MulTCP.\"",
    "transient": "§5.2, Figs. 6 and 7: \"the bandwidth in PA-MulTCP and MulTCP is reduced in "
                 "about 7-8 RTTs (700-800ms) and 17-18 RTTs (1700-1800ms), respectively\"; "
                 "both \"over-react … sending rates are dropped to almost zero\"; after the "
                 "CBR flow leaves, \"PA-MulTCP immediately utilizes the released bandwidth\" "
                 "while MulTCP \"takes longer time … because it is not stable and experiences "
                 "a lot of timeouts\".",
    "short": "§5.3, Figs. 8 and 9: \"PA-MulTCP significantly reduces the average completion "
             "time by 25-50%, compared to MPAT. The improvement decreases as the transfer size "
             "increases.\" For MPAT \"the higher the initial ssthresh, the shorter the average "
             "completion time\"; PA-MulTCP's \"does not vary with the different settings of "
             "the initial ssthresh\".",
}


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


COLOURS = {"multcp": "tab:red", "pamultcp": "tab:blue", "mpat": "tab:green", "tcp": "tab:gray",
           "aimd": "tab:purple"}
NAMES = {"multcp": "MulTCP", "pamultcp": "PA-MulTCP", "mpat": "MPAT", "tcp": "TCP",
         "aimd": "AIMD(√N, 2/(1+3N^1.5))"}


def _model_section(rows: pd.DataFrame) -> Section:
    section = Section("§3: the AIMD(a, b) throughput model against one loop", [PAPER["model"],
        "One flow alone on a 1 Gbit/s bottleneck with a 50 ms delay and Bernoulli loss on the "
        "link; T is packets sent per second over the run, p loss events over packets sent, "
        "the RTT the mean of the flow's samples."])
    sel = _select(rows, experiment="model")
    if sel.empty:
        section.paragraphs.append("No run of this group.")
        return section
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.4))
    for (scheme, n), group in sel.groupby(["scheme", "n"]):
        curve = group.groupby("loss")["model_ratio"].mean()
        ax.plot(curve.index, curve.to_numpy(), "o-", color=COLOURS[scheme],
                label=NAMES[scheme] + (f", N = {n}" if scheme != "tcp" else ""))
    ax.axhline(1.0, color="k", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("Bernoulli loss probability")
    ax.set_ylabel("T simulated / T model")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    section.parts.append(figure_html(fig, "Simulated rate over eq. (2)'s at the measured p"))
    body = [[NAMES[r.scheme], r.n, r.loss, r.replication, r.p_e, r.rtt_s, r.throughput_pps,
             r.model_pps, r.model_ratio, r.timeouts] for r in sel.itertuples()]
    section.parts.append(table_html(("loop", "N", "loss", "run", "p (events/packet)", "RTT s",
                                     "T pkt/s", "model pkt/s", "ratio", "timeouts"), body))
    return section


def _s3_section(rows: pd.DataFrame) -> Section:
    section = Section("Fig. 2: loss-event rates of TCP and MulTCP(2), MulTCP(20)",
                      [PAPER["s3"], "Per flow, loss events over data packets sent over the "
                       "run; the TCP value is the mean over the 200 TCP flows."])
    sel = _select(rows, experiment="s3")
    if sel.empty:
        section.paragraphs.append("No run of this group.")
        return section
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.5, 3.4))
    labels = ["TCP", "MulTCP(2)", "MulTCP(20)"]
    values = [float(sel[c].mean()) for c in ("p_tcp", "p_multcp2", "p_multcp20")]
    ax.bar(labels, values, color=["tab:gray", "tab:orange", "tab:red"])
    ax.set_ylabel("loss-event rate")
    ax.grid(alpha=0.3, axis="y")
    section.parts.append(figure_html(fig, "Fig. 2 as simulated: mean over runs"))
    section.parts.append(table_html(("run", "p TCP", "p MulTCP(2)", "p MulTCP(20)"),
                                    [[r.replication, r.p_tcp, r.p_multcp2, r.p_multcp20]
                                     for r in sel.itertuples()]))
    return section


def _fair_plot(rows: pd.DataFrame, column: str, ylabel: str, title: str,
               line: float | None = None) -> str:
    plt = _plt()
    bws = sorted(set(_select(rows, experiment="fair")["bandwidth_mbps"]))
    fig, axes = plt.subplots(1, len(bws), figsize=(4.5 * len(bws), 3.4), squeeze=False)
    for ax, bw in zip(axes[0], bws, strict=True):
        for scheme in ("multcp", "pamultcp"):
            curve = _means(rows, "n", column, experiment="fair", scheme=scheme,
                           bandwidth_mbps=bw)
            if len(curve):
                ax.plot(curve.index, curve.to_numpy(), "o-", color=COLOURS[scheme],
                        label=NAMES[scheme])
        if line is not None:
            ax.axhline(line, color="k", lw=0.8, ls=":")
        ax.set_title(f"({'ab'[bws.index(bw)]}) {bw:g} Mbit/s", fontsize=9)
        ax.set_xlabel("weight N")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return figure_html(fig, f"{title}: mean over runs")


def _fair_section(rows: pd.DataFrame) -> Section:
    section = Section("Figs. 4 and 5: fairness and stability against 200 − N TCP flows",
                      [PAPER["fair"], "FI (eq. 11): the aggregate's goodput over the steady "
                       "state divided by N, over the mean goodput of the TCP flows, per run, "
                       "then averaged over runs. CoV (eq. 12): of the aggregate's sending rate "
                       "in 0.1 s bins over the steady state. Timeouts: expiries of the "
                       "aggregate's retransmission timer over the whole run."])
    sel = _select(rows, experiment="fair")
    if sel.empty:
        section.paragraphs.append("No run of this group.")
        return section
    section.parts.append(_fair_plot(rows, "fi", "fairness index", "Fig. 4", 1.0))
    section.parts.append(_fair_plot(rows, "cov", "CoV of the sending rate", "Fig. 5"))
    section.parts.append(_fair_plot(rows, "agg_timeouts", "timeouts per run",
                                    "Timeouts of the aggregate"))
    g = sel.groupby(["scheme", "bandwidth_mbps", "n"])
    body = [[NAMES[s], bw, n, len(x), float(x["fi"].mean()), float(x["fi"].std()),
             float(x["cov"].mean()), float(x["agg_timeouts"].mean()),
             float(x["agg_goodput_mbps"].mean()), float(x["tcp_goodput_mbps"].mean()),
             float(x["p_agg"].mean()), float(x["p_tcp"].mean()),
             float(x["tcp_over_model"].mean()) if "tcp_over_model" in x else math.nan,
             float(x["adjust_over_cap"].mean()) if "adjust_over_cap" in x else math.nan]
            for (s, bw, n), x in g]
    section.paragraphs.append(
        "TCP / eq. (2): the TCP flows' goodput over eq. (2)'s rate at each flow's own "
        "loss-event rate and mean RTT. Adjust / cap: PA-MulTCP's adjusting-loop window over its "
        "cap W_max(p), both averaged over the steady state; the cap gives the loop N − 1 TCP "
        "flows' eq. (2) rate, so where TCP falls short of eq. (2) the FI rises by about the "
        "inverse.")
    section.parts.append(table_html(("aggregate", "Mbit/s", "N", "runs", "FI", "FI sd", "CoV",
                                     "timeouts", "aggregate Mbit/s", "TCP mean Mbit/s",
                                     "p aggregate", "p TCP", "TCP / eq. (2)", "adjust / cap"),
                                    body))
    return section


def _transient_section(rows: pd.DataFrame, p: Plan | None, options: Options) -> Section:
    section = Section("Figs. 6 and 7: the aggregate around a CBR flow", [PAPER["transient"]])
    sel = _select(rows, experiment="transient")
    if sel.empty or p is None:
        section.paragraphs.append("No run of this group.")
        return section
    congested, free = fair_share_levels(p, options)
    t = p.transient
    section.paragraphs.append(
        f"CBR flow of {options.cbr_mbps} Mbit/s on [{t.on_s:g}, {t.off_s:g}] s. Response time: "
        f"from {t.on_s:g} s to the end of the first 0.1 s bin in which the aggregate's "
        f"{options.trace_rate} rate is at or below its fair share under the CBR flow, "
        f"N/(N+m) of what it leaves = {congested / 1e6:.3g} Mbit/s; recovery time: from "
        f"{t.off_s:g} s to the first bin at or above N/(N+m) of the link = {free / 1e6:.3g} "
        f"Mbit/s; both in RTTs of {RTT_S * 1000:g} ms. Traces: the first run of each "
        "aggregate.")
    plt = _plt()
    for scheme in ("multcp", "pamultcp"):
        mine = _select(sel, scheme=scheme)
        if mine.empty:
            continue
        first = mine.sort_values("replication").iloc[0]
        times = np.array(json.loads(first["trace_t"]))
        mbps = np.array(json.loads(first["trace_mbps"]))
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.2))
        windows = ((0, t.duration_s), (t.on_s - 3, t.on_s + 7), (t.off_s - 3, t.off_s + 7))
        for ax, (lo, hi), label in zip(axes, windows, "abc", strict=True):
            keep = (times >= lo) & (times <= hi)
            ax.plot(times[keep], mbps[keep], color=COLOURS[scheme], lw=0.7)
            ax.axhline(congested / 1e6, color="k", lw=0.6, ls=":")
            ax.axhline(free / 1e6, color="k", lw=0.6, ls="--")
            ax.set_title(f"({label}) {lo:g}-{hi:g} s", fontsize=9)
            ax.set_xlabel("time [s]")
            ax.set_ylabel("Mbit/s")
            ax.grid(alpha=0.3)
        fig.suptitle(f"Fig. {6 if scheme == 'multcp' else 7}: {NAMES[scheme]}(10)")
        fig.tight_layout()
        section.parts.append(figure_html(fig, f"{NAMES[scheme]}(10)'s {options.trace_rate} "
                                              "rate in 0.1 s bins; dotted: fair share under the "
                                              "CBR flow, dashed: without it"))
        loops = first.get("trace_loops") if "trace_loops" in mine else None
        if isinstance(loops, str):
            section.parts.append(_loops_plot(times, json.loads(loops), t))
    body = [[NAMES[r.scheme], r.replication, r.response_rtt, r.recovery_rtt, r.dip_share,
             r.cov_congested, r.mean_congested_mbps, r.agg_timeouts] for r in sel.itertuples()]
    section.parts.append(table_html(("aggregate", "run", "response RTTs", "recovery RTTs",
                                     "dip / fair share", "CoV under CBR", "Mbit/s under CBR",
                                     "timeouts"), body))
    return section


def _loops_plot(times: np.ndarray, loops: dict[str, list[float | None]], t: Timing) -> str:
    """PA-MulTCP's two windows, W_max and the probe loop's loss-event rate around the CBR
    flow's start and end."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
    for ax, (lo, hi) in zip(axes, ((t.on_s - 5, t.on_s + 15), (t.off_s - 5, t.off_s + 15)),
                            strict=True):
        keep = (times >= lo) & (times <= hi)
        for name in ("probe_cwnd", "adjust_cwnd", "w_max"):
            if name in loops:
                y = np.array([np.nan if v is None else v for v in loops[name]], dtype=float)
                ax.plot(times[keep], y[keep], lw=0.8, label=name)
        ax.set_title(f"{lo:g}-{hi:g} s", fontsize=9)
        ax.set_xlabel("time [s]")
        ax.set_ylabel("packets")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("PA-MulTCP(10): probe and adjusting windows and W_max")
    fig.tight_layout()
    return figure_html(fig, "PA-MulTCP's loops around the CBR flow (first run)")


def _short_section(rows: pd.DataFrame, p: Plan | None) -> Section:
    section = Section("Figs. 8 and 9: a short transfer joining the aggregate", [PAPER["short"],
        "Completion time: from the member's join to the last byte acknowledged, mean over "
        "runs; reduced latency (CT_MPAT − CT_PA)/CT_MPAT of the means."])
    sel = _select(rows, experiment="short")
    if sel.empty or p is None:
        section.paragraphs.append("No run of this group.")
        return section
    plt = _plt()
    th = p.short_default_ssthresh
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for scheme in ("pamultcp", "mpat"):
        curve = _completion(rows, scheme, ssthresh_kb=th)
        axes[0].plot(curve.index, curve.to_numpy(), "o-", color=COLOURS[scheme],
                     label=NAMES[scheme])
    lat = _latency_curve(rows, th)
    axes[1].plot(lat.index, lat.to_numpy(), "o-", color="k")
    axes[1].axhspan(25, 50, color="tab:green", alpha=0.15, label="paper: 25-50 %")
    axes[0].set_ylabel("completion time [s]")
    axes[1].set_ylabel("reduced latency [%]")
    for ax in axes:
        ax.set_xlabel("transfer size [KB]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Fig. 8: initial ssthresh {th} KB")
    fig.tight_layout()
    section.parts.append(figure_html(fig, "Fig. 8 as simulated"))
    fig, axes = plt.subplots(1, len(p.short_fig9_sizes), figsize=(4.5 * len(p.short_fig9_sizes),
                                                                   3.4), squeeze=False)
    for ax, size in zip(axes[0], p.short_fig9_sizes, strict=True):
        for scheme in ("pamultcp", "mpat"):
            curve = _completion(rows, scheme, size_kb=size)
            ax.plot(curve.index, curve.to_numpy(), "o-", color=COLOURS[scheme],
                    label=NAMES[scheme])
        ax.set_title(f"{size} KB", fontsize=9)
        ax.set_xlabel("initial ssthresh [KB]")
        ax.set_ylabel("completion time [s]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Fig. 9")
    fig.tight_layout()
    section.parts.append(figure_html(fig, "Fig. 9 as simulated"))
    g = sel.groupby(["scheme", "size_kb", "ssthresh_kb"])
    section.parts.append(table_html(
        ("aggregate", "size KB", "ssthresh KB", "runs", "completion s"),
        [[NAMES[s], size, th_, len(x), float(x["completion_s"].mean())]
         for (s, size, th_), x in g]))
    return section


def _checklist(targets_: Sequence[Target]) -> Section:
    by_item: dict[int, list[Target]] = {}
    for spec, target in zip(_specs(), targets_, strict=True):
        by_item.setdefault(spec.item, []).append(target)
    body = []
    for item, claim in CHECKLIST.items():
        ts = by_item.get(item, [])
        passed = all(t.passed for t in ts)
        unmeasured = [t for t in ts if not math.isfinite(t.measured)]
        verdict = "pass" if passed else ("not measured" if len(unmeasured) == len(ts)
                                         else "fail")
        why = "; ".join(f"{t.id}: {t.note}" for t in ts if not t.passed)
        body.append([item, claim, ", ".join(t.id for t in ts), verdict, why])
    return Section("The acceptance checklist", [
        "Each claim of the paper, the targets that test it, and why a target missed."],
        [table_html(("item", "claim", "targets", "verdict", "explanation"), body)])


def sections(rows: pd.DataFrame) -> list[Section]:
    """The report's sections: the checklist, then one per figure group."""
    p = rows.attrs.get("plan")
    options = rows.attrs.get("options", OPTIONS)
    out = [_checklist(evaluate(rows))]
    if rows.empty:
        return [*out, Section("Runs", ["No run finished."])]
    out += [_model_section(rows), _s3_section(rows), _fair_section(rows),
            _transient_section(rows, p, options), _short_section(rows, p)]
    out.append(Section("Runs", [run_cost(rows)]))
    return out


def intro(scale: str, options: Options = OPTIONS) -> list[str]:
    """The report's opening paragraphs."""
    p = plan(scale)
    return [
        "F.-C. Kuo and X. Fu, Probe-Aided MulTCP: An Aggregate Congestion Control "
        "Mechanism, ACM SIGCOMM Computer Communication Review 38(1), January 2008.",
        f"Scale: {scale}: {p.replications} runs per condition; §5.1 N ∈ "
        f"{{{', '.join(map(str, p.fair_n))}}}, runs of {p.fair.duration_s:g} s with the first "
        f"{p.fair.warmup_s:g} s discarded (the paper: 20 runs of 400 s, 100 s discarded); §5.2 "
        f"{p.transient.duration_s:g} s with the CBR flow on [{p.transient.on_s:g}, "
        f"{p.transient.off_s:g}] s (the paper: 900 s, [300, 600] s).",
        "Dumbbell: drop-tail bottleneck, 50 ms one-way, buffer one bandwidth-delay product of "
        "the 100 ms RTT, access links 10 times faster with no delay; SACK TCP with 1500-byte "
        "packets, no delayed ACK, unconstrained windows, ns-2.29's timers; flows start at "
        "random in [0, 10] s.",
        "Choices: " + json.dumps(asdict(options)),
    ]
