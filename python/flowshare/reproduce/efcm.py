"""Reproduction of the EFCM study: Tables 5.1-5.17 and Appendix B.

M. Savorić and H. Karl, *Performance Evaluation of an Improved Common Congestion Controller
for WWW-based TCP Connections*, Technical Report TKN-04-007, Telecommunication Networks Group,
TU Berlin, 2004. Sixteen cases (minimum RTT 20, 60, 100, 500 ms × a reliable or unreliable last
hop × NewReno without and with EFCM), twelve runs of 250,000 s each. Per case the report gives
the new connections' throughputs and initial values per source (the odd tables), the concurrent
connections' throughputs and mean fairness (the even tables), the t-test of each difference
(Appendix B), and a summary of the signs (Table 5.17).

:func:`plan`, :func:`sweep_document`, :func:`rows_from_store`, :func:`evaluate` and
:func:`sections` are what :func:`flowshare.reproduce.reproduce` calls; the network is
:mod:`~flowshare.reproduce.efcm_network`, the measures :mod:`~flowshare.reproduce.efcm_metrics`
and the published numbers :mod:`~flowshare.reproduce.efcm_tables`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..results import TRANSFERS_FILE
from . import efcm_metrics as metrics
from . import efcm_tables as published
from .efcm_network import (BACKGROUND_GROUPS, CASES, CHOICES, MIN_RTTS_MS, OPTIONS, WWW_GROUPS,
                           Case, Options, scenario)
from .report import Section, figure_html, run_cost, table_html
from .targets import Target

__all__ = ["CHOICES", "KEY", "OPTIONS", "SCALES", "Options", "Plan", "evaluate", "measure",
           "plan", "rows_from_store", "sections", "sweep_document", "targets"]

KEY = "efcm"
TITLE = ("Savorić and Karl (2004): EFCM, an improved common congestion controller for "
         "WWW-based TCP connections")
SCALES = ("full", "quick", "tiny")
"""``full``: the report's 12 runs of 250,000 s per case; ``quick``: 3 runs of 20,000 s (a few
minutes on 2 cores); ``tiny``: 2 runs of 600 s, for tests."""

REPORT_RUN_S = 250_000.0
CONCURRENCY_FILE = "concurrency.parquet"

# Tolerances, per kind of number (docs/reproduce.md, "efcm").
THROUGHPUT_REL = 0.05
WINDOW_REL = 0.10
RTT_REL = 0.10
EXACT = 0.005
FAIRNESS_ABS = 0.02
CONNECTIONS_REL = 0.05
CAPABLE_REL = 0.20


@dataclass(frozen=True)
class Plan:
    """The runs of one scale: every case, ``replications`` runs of ``duration_s`` each."""

    duration_s: float
    replications: int
    cases: tuple[Case, ...] = CASES


PLANS = {"full": Plan(REPORT_RUN_S, 12), "quick": Plan(20_000.0, 3), "tiny": Plan(600.0, 2)}


def plan(scale: str) -> Plan:
    """The plan of ``scale``, one of :data:`SCALES`."""
    return PLANS[scale]


SWEPT = ("topology", "flows")
"""The scenario keys the arms set; the rest is the base's."""


def run_scenario(case: Case, p: Plan, options: Options = OPTIONS) -> dict[str, Any]:
    """One case's scenario as the reproduction runs it: with the snapshots of the WWW
    connections' progress that the concurrent measures need, and no packet trace."""
    s = scenario(case, options, duration_s=p.duration_s)
    s["trace"] = {"events": False, "concurrency": list(WWW_GROUPS)}
    return s


def sweep_document(p: Plan, options: Options = OPTIONS) -> dict[str, Any]:
    """The sweep of every case of ``p``: one arm per case, in ``p.cases`` order."""
    scenarios = [run_scenario(c, p, options) for c in p.cases]
    return {
        "base": scenarios[0],
        "replications": p.replications,
        "root_seed": 2004,
        "points": [{key: s[key] for key in SWEPT} for s in scenarios],
    }


# ---------------------------------------------------------------------------------------------
# Measurement


def _background_mbps(transfers: pd.DataFrame, flows: pd.DataFrame, duration_s: float
                     ) -> tuple[float, float]:
    """Goodput of BS1 and BS2 over the run: their transfers' bytes, or the bulk flows'."""
    out = []
    for group in BACKGROUND_GROUPS:
        mine = transfers[transfers["name"] == group]
        if len(mine):
            done = mine[np.isfinite(mine["completion_time_s"])]
            out.append(float(done["size_bytes"].sum()) * 8 / duration_s / 1e6)
            continue
        row = flows[flows["name"] == group]
        out.append(float(row["goodput_bps"].sum()) / 1e6 if len(row) else math.nan)
    return out[0], out[1]


def measure(run_dir: Path, case: Case, p: Plan, options: Options = OPTIONS) -> dict[str, Any]:
    """The per-run values of every measure the tables average, from one run's directory."""
    transfers = pd.read_parquet(run_dir / TRANSFERS_FILE)
    conns = metrics.connections(transfers)
    capable = metrics.efcm_capable(conns)
    new = metrics.new_connection_measures(conns, end_s=p.duration_s).set_index("name")
    row: dict[str, Any] = {
        "min_rtt_ms": case.min_rtt_ms, "unreliable": case.unreliable, "efcm": case.efcm,
        "duration_s": p.duration_s, "connections": len(conns),
        "capable_share": float(capable.mean()) if len(conns) else math.nan,
    }
    for k, group in enumerate(WWW_GROUPS, start=1):
        values = new.loc[group] if group in new.index else None
        for column, name in (("t1", "t1_new"), ("t2", "t2_new"), ("initial_cwnd", "cwnd0"),
                             ("initial_ssthresh", "ssthresh0"), ("initial_srtt_s", "srtt0"),
                             ("initial_rttvar_s", "rttvar0")):
            ok = values is not None and column in values.index
            row[f"{name}_{k}"] = float(values[column]) if ok else math.nan
        row[f"capable_{k}"] = int(values["capable"]) if values is not None else 0
    periods = metrics.concurrency_periods(conns)
    periods = periods[periods["end_s"] <= p.duration_s].reset_index(drop=True)
    if len(periods) and (run_dir / CONCURRENCY_FILE).is_file():
        snapshots = pd.read_parquet(run_dir / CONCURRENCY_FILE)
        conc = metrics.concurrent_measures(
            periods, metrics.period_segments(periods, snapshots, options.period_counter))
    else:
        conc = {"t1": math.nan, "t2": math.nan, "fairness": math.nan, "periods": 0.0}
    row.update(t1_conc=conc["t1"], t2_conc=conc["t2"], fairness=conc["fairness"],
               periods=int(conc["periods"]))
    flows = pd.read_csv(run_dir / "flows.csv")
    row["bg1_mbps"], row["bg2_mbps"] = _background_mbps(transfers, flows, p.duration_s)
    # Data packets every sender sent, for the simulator's packet rate (docs/performance.md).
    row["packets"] = int(transfers["packets_sent"].sum()) + int(flows["packets_sent"].sum())
    return row


def rows_from_store(store: Path, p: Plan, options: Options = OPTIONS) -> pd.DataFrame:
    """One measured row per finished run of the store."""
    catalog = pd.read_parquet(store / "catalog.parquet")
    out = []
    for _, r in catalog.iterrows():
        if r["status"] != "done":
            continue
        row = measure(store / "runs" / str(r["run_id"]), p.cases[int(r["arm"])], p, options)
        row["replication"] = int(r["replication"])
        row["run_id"] = str(r["run_id"])
        row["wall_s"] = float(r["wall_s"])
        out.append(row)
    rows = pd.DataFrame(out)
    if len(rows):
        rows = rows.sort_values(["min_rtt_ms", "unreliable", "efcm", "replication"],
                                kind="stable").reset_index(drop=True)
    return rows


def write_rows(rows: pd.DataFrame, path: Path) -> None:
    """The measured runs as CSV (``runs.csv`` of the output directory)."""
    rows.to_csv(path, index=False, float_format="%.6g")


# ---------------------------------------------------------------------------------------------
# Targets

SIGN_CODE = {"+": 1.0, "=": 0.0, "−": -1.0}
SIGN_TEXT = {1.0: "+", 0.0: "=", -1.0: "−"}
_SIGN_HELP = "+1: EFCM significantly better, 0: no significant difference, −1: NewReno better"

HOP = {False: "reliable", True: "unreliable"}
NEW_MEASURES = {"t1": "T̄1 (segments/s)", "t2": "T̄2 (segments/s)"}


def _case_id(rtt: int, unreliable: bool) -> str:
    return f"{rtt}ms.{HOP[unreliable]}"


@dataclass(frozen=True)
class _Spec:
    """A target and how to measure it from the per-run rows."""

    target: Target
    measure: Callable[[pd.DataFrame], tuple[float | None, str]]


def _mean_of(column: str, rtt: int, unreliable: bool, efcm: bool
             ) -> Callable[[pd.DataFrame], tuple[float | None, str]]:
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        sel = _case_rows(rows, rtt, unreliable, efcm)
        if sel is None:
            return None, "no run of this case"
        values = sel[column].to_numpy(dtype=np.float64)
        values = values[np.isfinite(values)]
        if not values.size:
            return None, f"no run of this case measured {column}"
        return float(values.mean()), ""
    return m


def _case_rows(rows: pd.DataFrame, rtt: int, unreliable: bool, efcm: bool
               ) -> pd.DataFrame | None:
    if rows.empty:
        return None
    sel = rows[(rows["min_rtt_ms"] == rtt) & (rows["unreliable"] == unreliable)
               & (rows["efcm"] == efcm)]
    return sel if len(sel) else None


def comparison(rows: pd.DataFrame, column: str, rtt: int, unreliable: bool
               ) -> tuple[metrics.Comparison | None, str]:
    """Appendix B's t-test of ``column`` without against with EFCM in one case."""
    a = _case_rows(rows, rtt, unreliable, False)
    b = _case_rows(rows, rtt, unreliable, True)
    if a is None or b is None:
        return None, "no run of this case with and without EFCM"
    x = a[column].to_numpy(dtype=np.float64)
    y = b[column].to_numpy(dtype=np.float64)
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    try:
        return metrics.unpaired_t(x, y), ""
    except ValueError as exc:
        return None, f"no t-test: {exc}"


def _delta(column: str, rtt: int, unreliable: bool
           ) -> Callable[[pd.DataFrame], tuple[float | None, str]]:
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        c, why = comparison(rows, column, rtt, unreliable)
        return (None, why) if c is None else (SIGN_CODE[c.sign], "")
    return m


def _summary_sign(columns: Sequence[str], rtt: int, unreliable: bool
                  ) -> Callable[[pd.DataFrame], tuple[float | None, str]]:
    """Table 5.17's sign of a measure: the majority of its rows' signs (TCP 1-3)."""
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        signs = []
        for column in columns:
            c, why = comparison(rows, column, rtt, unreliable)
            if c is None:
                return None, why
            signs.append(SIGN_CODE[c.sign])
        values, counts = np.unique(signs, return_counts=True)
        return float(values[np.argmax(counts)]), ""
    return m


def _t(id: str, description: str, value: float, tolerance: float, kind: str = "absolute",
       comparison: str = "close") -> Target:
    return Target(id, description, value, tolerance, comparison, kind)


def _specs() -> list[_Spec]:
    out: list[_Spec] = []
    for rtt in MIN_RTTS_MS:
        for unreliable in (False, True):
            new = published.NEW[(rtt, unreliable)]
            case = _case_id(rtt, unreliable)
            where = f"Table {new.table} ({rtt} ms, {HOP[unreliable]})"
            for name, (no, yes, signs) in (("t1", new.t1), ("t2", new.t2)):
                for k in range(3):
                    for efcm, value in ((False, no[k]), (True, yes[k])):
                        who = "EFCM" if efcm else "no EFCM"
                        out.append(_Spec(
                            _t(f"T{new.table}.{name}.tcp{k + 1}.{'efcm' if efcm else 'newreno'}",
                               f"{where}: new connections, {NEW_MEASURES[name]}, TCP {k + 1}, "
                               f"{who}", value, THROUGHPUT_REL, "relative"),
                            _mean_of(f"{name}_new_{k + 1}", rtt, unreliable, efcm)))
                    out.append(_Spec(
                        _t(f"T{new.table}.{name}.tcp{k + 1}.delta",
                           f"{where}: Δ of {NEW_MEASURES[name][:3]}, TCP {k + 1} ({_SIGN_HELP})",
                           SIGN_CODE[signs[k]], 0.0),
                        _delta(f"{name}_new_{k + 1}", rtt, unreliable)))
            initial = (("cwnd", "cwnd0", new.cwnd, 3.0, WINDOW_REL, "segments"),
                       ("ssthresh", "ssthresh0", new.ssthresh, 44.0, WINDOW_REL, "segments"),
                       ("srtt", "srtt0", new.srtt, None, RTT_REL, "s"),
                       ("rttvar", "rttvar0", new.rttvar, None, RTT_REL, "s"))
            for name, column, efcm_values, standard, tol, unit in initial:
                for k in range(3):
                    if standard is not None:
                        out.append(_Spec(
                            _t(f"T{new.table}.{name}.tcp{k + 1}.newreno",
                               f"{where}: new connections, initial {name} ({unit}), TCP {k + 1}, "
                               "no EFCM", standard, EXACT),
                            _mean_of(f"{column}_{k + 1}", rtt, unreliable, False)))
                    out.append(_Spec(
                        _t(f"T{new.table}.{name}.tcp{k + 1}.efcm",
                           f"{where}: new connections, initial {name} ({unit}), TCP {k + 1}, EFCM",
                           efcm_values[k], tol, "relative"),
                        _mean_of(f"{column}_{k + 1}", rtt, unreliable, True)))
            conc = published.CONCURRENT[(rtt, unreliable)]
            where = f"Table {conc.table} ({rtt} ms, {HOP[unreliable]})"
            for name, column, (no, yes, sign), tol, kind, what in (
                    ("t1", "t1_conc", conc.t1, THROUGHPUT_REL, "relative", "T̄1 (segments/s)"),
                    ("t2", "t2_conc", conc.t2, THROUGHPUT_REL, "relative", "T̄2 (segments/s)"),
                    ("fairness", "fairness", conc.fairness, FAIRNESS_ABS, "absolute",
                     "mean fairness index Ī_f")):
                for efcm, value in ((False, no), (True, yes)):
                    out.append(_Spec(
                        _t(f"T{conc.table}.{name}.{'efcm' if efcm else 'newreno'}",
                           f"{where}: concurrent connections, {what}, "
                           f"{'EFCM' if efcm else 'no EFCM'}", value, tol, kind),
                        _mean_of(column, rtt, unreliable, efcm)))
                out.append(_Spec(
                    _t(f"T{conc.table}.{name}.delta",
                       f"{where}: concurrent connections, Δ of {what.split(' (')[0]} "
                       f"({_SIGN_HELP})", SIGN_CODE[sign], 0.0),
                    _delta(column, rtt, unreliable)))
    summary_columns = {
        "t1_new": [f"t1_new_{k}" for k in (1, 2, 3)], "t2_new": [f"t2_new_{k}" for k in (1, 2, 3)],
        "t1_conc": ["t1_conc"], "t2_conc": ["t2_conc"], "fairness": ["fairness"],
    }
    for measure_name, by_hop in published.SUMMARY.items():
        for unreliable, signs in by_hop.items():
            for rtt, sign in zip(MIN_RTTS_MS, signs, strict=True):
                out.append(_Spec(
                    _t(f"T5.17.{measure_name}.{_case_id(rtt, unreliable)}",
                       f"Table 5.17: sign of {measure_name} at {rtt} ms, {HOP[unreliable]} "
                       f"last hop (majority of the rows' Δ; {_SIGN_HELP})",
                       SIGN_CODE[sign], 0.0),
                    _summary_sign(summary_columns[measure_name], rtt, unreliable)))
    for key, value in published.VOLUME.items():
        kind, rtt_text, hop = key.split(".")
        unreliable = hop == "unreliable"
        if kind == "connections":
            out.append(_Spec(
                _t(f"S5.1.{key}", f"§5.1: connections opened at the server per 250,000 s, "
                                  f"{rtt_text} ms, {hop}, no EFCM", value, CONNECTIONS_REL,
                   "relative"),
                _per_report_run("connections", int(rtt_text), unreliable)))
        else:
            out.append(_Spec(
                _t(f"S5.1.{key}", f"§5.1: share of the server's connections that are "
                                  f"EFCM-capable, {rtt_text} ms, {hop}, no EFCM", value,
                   CAPABLE_REL, "relative"),
                _mean_of("capable_share", int(rtt_text), unreliable, False)))
    out.append(_Spec(
        _t("S5.background_not_reduced",
           "§5: background throughput with EFCM over that without, smallest over the cases",
           1.0, 0.05, comparison="at_least"),
        _background_ratio))
    return out


def _per_report_run(column: str, rtt: int, unreliable: bool
                    ) -> Callable[[pd.DataFrame], tuple[float | None, str]]:
    """A count per run, scaled to the report's 250,000 s."""
    def m(rows: pd.DataFrame) -> tuple[float | None, str]:
        sel = _case_rows(rows, rtt, unreliable, False)
        if sel is None:
            return None, "no run of this case"
        return float(sel[column].mean()) * REPORT_RUN_S / float(sel["duration_s"].iloc[0]), ""
    return m


def _background_ratio(rows: pd.DataFrame) -> tuple[float | None, str]:
    ratios = []
    for rtt in MIN_RTTS_MS:
        for unreliable in (False, True):
            a = _case_rows(rows, rtt, unreliable, False)
            b = _case_rows(rows, rtt, unreliable, True)
            if a is None or b is None:
                continue
            base = float((a["bg1_mbps"] + a["bg2_mbps"]).mean())
            if base > 0:
                ratios.append(float((b["bg1_mbps"] + b["bg2_mbps"]).mean()) / base)
    if not ratios:
        return None, "no case run with and without EFCM"
    return min(ratios), ""


def targets() -> list[Target]:
    """Every numeric target of the study, unevaluated, in report order."""
    return [s.target for s in _specs()]


def evaluate(rows: pd.DataFrame) -> list[Target]:
    """Every target evaluated against the measured runs ``rows`` (one row per run)."""
    out = []
    for spec in _specs():
        value, note = spec.measure(rows)
        out.append(spec.target.unmeasured(note) if value is None
                   else spec.target.evaluate(value).explained(_why(spec.target.id)))
    return out


def _why(target_id: str) -> str:
    """The known reason of a miss, by kind of number (docs/reproduce.md, "efcm"); none for
    the signs, whose misses the report's table beside flowshare's shows."""
    if target_id.endswith(".delta") or target_id.startswith("T5.17."):
        return ""
    for prefix, why in WHY_MISSED.items():
        if prefix in target_id:
            return why
    return ""


_NS2 = ("docs/validation.md, \"The EFCM study network against ns-2.35\"")
_LAN = ("the report's network in ns-2.35 with its Ethernet-type LAN (Mac/802_3) gives new "
        "connections without EFCM 1.6-3.4 times the report's T̄1 at 20-100 ms with a reliable "
        "last hop; flowshare agrees with ns-2 when both use FIFO links (T̄2 0.71-1.17 times "
        "ns-2's) but has no CSMA/CD medium, whose silent frame losses make 70-75 % of ns-2's "
        f"connections retransmit ({_NS2})")
WHY_MISSED: dict[str, str] = {
    ".t1.": _LAN,
    ".t2.": _LAN,
    ".srtt.": ("SRTT counts 100 ms ticks (ns-2's clock); the report's values exceed the minimum "
               "RTT by 60-100 ms of queueing that flowshare's FIFO LAN does not add (" + _LAN
               + ")"),
    ".rttvar.": "RTTVAR follows the same RTT samples as SRTT (" + _LAN + ")",
    "capable": ("the share of connections that overlap grows with their duration; ns-2.35 "
                f"with the 802.3 LAN gives 7.9-9.3 % and 15-17 % at 100 ms ({_NS2})"),
}
"""Known reasons of misses, by a part of the target id; added to the note of a miss."""


# ---------------------------------------------------------------------------------------------
# Report


def _case_means(rows: pd.DataFrame, rtt: int, unreliable: bool, efcm: bool, column: str
                ) -> float:
    value, _ = _mean_of(column, rtt, unreliable, efcm)(rows)
    return math.nan if value is None else value


def _new_table(rows: pd.DataFrame, rtt: int, unreliable: bool) -> str:
    new = published.NEW[(rtt, unreliable)]
    body = []
    for name, (no, yes, signs) in (("T̄1", new.t1), ("T̄2", new.t2)):
        column = "t1_new" if name == "T̄1" else "t2_new"
        for k in range(3):
            c, _ = comparison(rows, f"{column}_{k + 1}", rtt, unreliable)
            body.append([name, f"TCP {k + 1}", no[k],
                         _case_means(rows, rtt, unreliable, False, f"{column}_{k + 1}"),
                         yes[k], _case_means(rows, rtt, unreliable, True, f"{column}_{k + 1}"),
                         signs[k], c.sign if c else "–"])
    for name, column, values, standard in (("cwnd", "cwnd0", new.cwnd, 3.0),
                                           ("ssthresh", "ssthresh0", new.ssthresh, 44.0),
                                           ("srtt", "srtt0", new.srtt, math.nan),
                                           ("rttvar", "rttvar0", new.rttvar, math.nan)):
        for k in range(3):
            body.append([name, f"TCP {k + 1}", standard,
                         _case_means(rows, rtt, unreliable, False, f"{column}_{k + 1}"),
                         values[k], _case_means(rows, rtt, unreliable, True, f"{column}_{k + 1}"),
                         "", ""])
    return table_html(("measure", "conn.", "no EFCM, report", "no EFCM, flowshare",
                       "EFCM, report", "EFCM, flowshare", "Δ report", "Δ flowshare"), body)


def _concurrent_table(rows: pd.DataFrame) -> str:
    body = []
    for rtt in MIN_RTTS_MS:
        for unreliable in (False, True):
            conc = published.CONCURRENT[(rtt, unreliable)]
            for name, column, (no, yes, sign) in (("T̄1", "t1_conc", conc.t1),
                                                  ("T̄2", "t2_conc", conc.t2),
                                                  ("Ī_f", "fairness", conc.fairness)):
                c, _ = comparison(rows, column, rtt, unreliable)
                body.append([conc.table, f"{rtt} ms", HOP[unreliable], name, no,
                             _case_means(rows, rtt, unreliable, False, column), yes,
                             _case_means(rows, rtt, unreliable, True, column), sign,
                             c.sign if c else "–"])
    return table_html(("table", "min RTT", "last hop", "measure", "no EFCM, report",
                       "no EFCM, flowshare", "EFCM, report", "EFCM, flowshare", "Δ report",
                       "Δ flowshare"), body)


def _appendix_b_table(rows: pd.DataFrame) -> str:
    body = []
    for (rtt, unreliable), cells in published.APPENDIX_B.items():
        for k, (measure_name, (level, low, high)) in enumerate(cells.items()):
            c, _ = comparison(rows, measure_name, rtt, unreliable)
            mine = (f"{c.level:.2f}: ({c.low:+.2f}, {c.high:+.2f})" if c else "–")
            body.append([f"B.{list(published.APPENDIX_B).index((rtt, unreliable)) + 1}"
                         if k == 0 else "", f"{rtt} ms, {HOP[unreliable]}", measure_name,
                         f"{level:.2f}: ({low:+.2f}, {high:+.2f})", mine])
    return table_html(("table", "case", "measure", "report", "flowshare"), body)


def _summary_table(targets_by_id: dict[str, Target]) -> str:
    body = []
    for measure_name, by_hop in published.SUMMARY.items():
        for unreliable in (False, True):
            cells = []
            for rtt in MIN_RTTS_MS:
                t = targets_by_id[f"T5.17.{measure_name}.{_case_id(rtt, unreliable)}"]
                mine = SIGN_TEXT.get(t.measured, "–") if math.isfinite(t.measured) else "–"
                cells.append(f"{SIGN_TEXT[t.published]} / {mine}")
            body.append([measure_name, HOP[unreliable], *cells])
    return table_html(("measure", "last hop", *(f"{r} ms: report / flowshare"
                                                for r in MIN_RTTS_MS)), body)


def _volume_table(rows: pd.DataFrame) -> str:
    body = []
    for rtt in MIN_RTTS_MS:
        for unreliable in (False, True):
            for efcm in (False, True):
                sel = _case_rows(rows, rtt, unreliable, efcm)
                if sel is None:
                    continue
                body.append([f"{rtt} ms", HOP[unreliable], "EFCM" if efcm else "no EFCM",
                             len(sel), float(sel["connections"].mean()),
                             float(sel["capable_share"].mean()), float(sel["periods"].mean()),
                             float(sel["bg1_mbps"].mean()), float(sel["bg2_mbps"].mean())])
    return table_html(("min RTT", "last hop", "controller", "runs", "connections per run",
                       "EFCM-capable share", "concurrency periods per run", "BS1 Mbit/s",
                       "BS2 Mbit/s"), body)


def _plot(rows: pd.DataFrame, columns: Sequence[tuple[str, str]], title: str,
          report_value: Callable[[str, int, bool, bool], float]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(columns) * 2, figsize=(4 * len(columns) * 2, 3.4),
                             squeeze=False)
    panels = [(c, u) for c in columns for u in (False, True)]
    for ax, ((column, label), unreliable) in zip(axes[0], panels, strict=True):
        xs = np.arange(len(MIN_RTTS_MS))
        for efcm, colour in ((False, "tab:blue"), (True, "tab:red")):
            name = "EFCM" if efcm else "no EFCM"
            ax.plot(xs, [report_value(column, r, unreliable, efcm) for r in MIN_RTTS_MS],
                    "-", color=colour, label=f"report, {name}")
            ax.plot(xs, [_case_means(rows, r, unreliable, efcm, column) for r in MIN_RTTS_MS],
                    "o", color=colour, label=f"flowshare, {name}")
        ax.set_xticks(xs, [f"{r} ms" for r in MIN_RTTS_MS])
        ax.set_title(f"{label}, {HOP[unreliable]}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return figure_html(fig, f"{title}: lines, the report; points, flowshare's mean over runs")


def _report_new(column: str, rtt: int, unreliable: bool, efcm: bool) -> float:
    name, k = column.rsplit("_", 1)
    new = published.NEW[(rtt, unreliable)]
    values = {"t1_new": new.t1, "t2_new": new.t2}[name]
    return values[1 if efcm else 0][int(k) - 1]


def _report_concurrent(column: str, rtt: int, unreliable: bool, efcm: bool) -> float:
    conc = published.CONCURRENT[(rtt, unreliable)]
    values = {"t1_conc": conc.t1, "t2_conc": conc.t2, "fairness": conc.fairness}[column]
    return values[1 if efcm else 0]


def sections(rows: pd.DataFrame) -> list[Section]:
    """The report's sections: the new and concurrent connections' tables, Appendix B,
    Table 5.17 and the runs' volumes."""
    if rows.empty:
        return [Section("Runs", ["No run finished."])]
    by_id = {t.id: t for t in evaluate(rows)}
    out = []
    new = Section("New connections entering an ensemble (Tables 5.1-5.15, odd)", [
        "Connections that open while another of the server's connections to the receiver LAN "
        "is open, over their whole lifetime; T̄1 = Σ s_i / Σ d_i, T̄2 = (1/n) Σ s_i / d_i in "
        "segments of 1460 bytes per second, per WWW source (TCP 1-3); the initial values are "
        "those the connection starts with after EFCM's join rule."])
    new.parts.append(_plot(rows, (("t1_new_1", "T̄1, TCP 1"), ("t2_new_1", "T̄2, TCP 1")),
                           "New connections", _report_new))
    for rtt in MIN_RTTS_MS:
        for unreliable in (False, True):
            table = published.NEW[(rtt, unreliable)].table
            new.parts.append(f"<h3>Table {table}: {rtt} ms, {HOP[unreliable]} last hop</h3>")
            new.parts.append(_new_table(rows, rtt, unreliable))
    out.append(new)
    conc = Section("Concurrent connections (Tables 5.2-5.16, even)", [
        "The periods in which the same two or more of the server's connections are open; each "
        "connection's throughput over its time in such periods, and the mean over periods of "
        "Jain's fairness index of the members' throughputs in the period."])
    conc.parts.append(_plot(rows, (("t1_conc", "T̄1"), ("t2_conc", "T̄2"), ("fairness", "Ī_f")),
                            "Concurrent connections", _report_concurrent))
    conc.parts.append(_concurrent_table(rows))
    out.append(conc)
    out.append(Section("Appendix B: confidence intervals of (no EFCM − EFCM)", [
        "R. Jain's t-test for unpaired observations (The Art of Computer Systems Performance "
        "Analysis, Wiley, 1991, §13.4.2) on the per-run values, at the highest of the levels "
        "0.90, 0.95, 0.99 at which the interval excludes 0 (else at 0.90)."],
        [_appendix_b_table(rows)]))
    out.append(Section("Table 5.17: summary of EFCM's effect", [
        "Signs per measure and case, report / flowshare: '+' EFCM significantly better, '=' no "
        "significant difference, '−' NewReno significantly better (the report's '++' is "
        "written '+'). For the new connections, the majority of TCP 1-3."],
        [_summary_table(by_id)]))
    out.append(Section("Runs: connections, concurrency and background", [
        "Per case, the mean over runs of the server's connections per run, the share of them "
        "that are EFCM-capable, the periods of concurrency, and the background senders' "
        "goodput.", run_cost(rows)], [_volume_table(rows)]))
    return out


def intro(scale: str, options: Options = OPTIONS) -> list[str]:
    """The report's opening paragraphs."""
    p = plan(scale)
    return [
        "M. Savorić and H. Karl, Performance Evaluation of an Improved Common Congestion "
        "Controller for WWW-based TCP Connections, Technical Report TKN-04-007, Telecommunication "
        "Networks Group, TU Berlin, 2004.",
        f"Scale: {scale}: {len(p.cases)} cases × {p.replications} runs of {p.duration_s:g} s "
        f"(the report: 12 runs of {REPORT_RUN_S:g} s).",
        f"Tolerances: throughputs ±{THROUGHPUT_REL:.0%}; EFCM's initial cwnd and ssthresh "
        f"±{WINDOW_REL:.0%}; initial SRTT and RTTVAR ±{RTT_REL:.0%}; NewReno's initial cwnd 3 "
        f"and ssthresh 44 ±{EXACT}; fairness ±{FAIRNESS_ABS}; connections per run "
        f"±{CONNECTIONS_REL:.0%}; EFCM-capable shares ±{CAPABLE_REL:.0%}; every Δ and sign of "
        "Table 5.17 exactly.",
        "Choices: " + json.dumps(asdict(options)),
    ]
