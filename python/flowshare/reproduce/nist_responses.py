"""The responses of Mills et al. (2010), "Comparing Congestion Control Regimes in a
Heterogeneous Network", ch. 8 of K. Mills et al., *Study of Proposed Internet Congestion
Control Mechanisms*, NIST SP 500-282, computed from a run's ``transfers`` table: the
per-flow-group goodput statistics of Table 8-20 (§8.2.2) and the completion counts and
file-type mix of Table 8-19 (y12–y16), with the retransmission rate y10 over the measured
half of the run.

A transfer's ``name`` is ``nist/<file type>/<path>-<interface>/<algorithm>``
(``process = "population"``); Reno's flows are the TCP statistics y15(u)–y28(u), the
alternate's y1(u)–y14(u).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import nist_workload as nw

TYPE_CODES = {"movie": "M", "service_pack": "SP", "document": "D", "web": "WO"}
"""The population's file-type names and the study's codes (Table 8-5)."""
BATCH = 1000
"""Completed flows per goodput record of a flow group (Table 8-24: N = 1000 or 1001)."""
STATISTICS = ("N", "mean", "sd", "min", "max", *(f"p{10 * i}" for i in range(1, 10)))
"""The 14 statistics of a flow group and algorithm class (Table 8-20), in order."""


def label_columns(transfers: pd.DataFrame) -> pd.DataFrame:
    """``transfers`` with ``group`` (Table 8-6's 1–24), ``file_type`` (M, SP, D, WO) and
    ``tcp`` (a Reno flow) parsed from each transfer's name."""
    if transfers.empty:
        return transfers.assign(group=pd.Series(dtype=int), file_type=pd.Series(dtype=str),
                                tcp=pd.Series(dtype=bool))
    parts = transfers["name"].str.split("/", expand=True)
    if parts.shape[1] != 4:
        raise ValueError("transfers: names must be <group>/<file type>/<path>-<interface>/<algorithm>")
    code = parts[1].map(TYPE_CODES)
    if code.isna().any():
        raise ValueError(f"transfers: unknown file type {parts[1][code.isna()].iloc[0]!r}")
    path_iface = parts[2].str.split("-", expand=True)
    group = [nw.flow_group(t, p, i == "F") for t, p, i in zip(code, path_iface[0], path_iface[1])]
    return transfers.assign(group=group, file_type=code, tcp=parts[3] == "reno")


def goodput_pps(transfers: pd.DataFrame, mss: int) -> pd.Series:
    """Each completed transfer's goodput in packets per second: its segments (retransmissions
    excluded) over the time from its start (its connection attempt) to its completion."""
    segments = np.ceil(transfers["size_bytes"] / mss)
    return segments / transfers["completion_time_s"]


def _batch_stats(goodput: np.ndarray) -> dict[str, float]:
    """One record of Table 8-24: N, mean, sample sd, min, max and the deciles."""
    deciles = np.percentile(goodput, np.arange(10, 100, 10))
    sd = float(np.std(goodput, ddof=1)) if goodput.size > 1 else 0.0
    return {"N": float(goodput.size), "mean": float(goodput.mean()), "sd": sd, "min": float(goodput.min()),
            "max": float(goodput.max()), **{f"p{10 * (i + 1)}": float(d) for i, d in enumerate(deciles)}}


def group_summary(goodput: np.ndarray, batch: int = BATCH) -> dict[str, float]:
    """The run summary of one flow group and algorithm class (§8.2.2): the goodputs in
    completion order are recorded in batches of ``batch`` (the last one shorter); the summary
    is the sum of N and the N-weighted mean of every other statistic of the records, as the
    study computes it (an approximation for the sd, extremes and deciles, replicated)."""
    if goodput.size == 0:
        return {s: (0.0 if s == "N" else float("nan")) for s in STATISTICS}
    records = [_batch_stats(goodput[i:i + batch]) for i in range(0, goodput.size, batch)]
    n = np.array([r["N"] for r in records])
    out = {"N": float(n.sum())}
    for s in STATISTICS[1:]:
        out[s] = float(np.dot(n, [r[s] for r in records]) / n.sum())
    return out


def user_experience(transfers: pd.DataFrame, mss: int, batch: int = BATCH) -> pd.DataFrame:
    """Table 8-20 for one run: one row per flow group (1–24) with y1(u)…y14(u) (the
    alternate's flows) and y15(u)…y28(u) (Reno's), from the transfers completed in the run
    (the warm-up included, as the study's goodput records are)."""
    done = label_columns(transfers[transfers["completion_time_s"].notna()])
    done = done.assign(goodput=goodput_pps(done, mss), finished=done["start_s"] + done["completion_time_s"])
    done = done.sort_values("finished", kind="stable")
    rows = []
    for group in range(1, 25):
        row: dict[str, float] = {"group": group}
        for tcp, first in ((False, 1), (True, 15)):
            sel = done[(done["group"] == group) & (done["tcp"] == tcp)]["goodput"].to_numpy()
            for i, (s, v) in enumerate(group_summary(sel, batch).items()):
                row[f"y{first + i}(u)"] = v
        rows.append(row)
    return pd.DataFrame(rows).astype({"group": int})


def completions(transfers: pd.DataFrame) -> dict[str, float]:
    """y12, the flows completed in the run, and y13–y16, the shares of Web objects,
    documents, service packs and movies among them (Table 8-19)."""
    done = label_columns(transfers[transfers["completion_time_s"].notna()])
    n = len(done)
    share = done["file_type"].value_counts()
    out = {"y12": float(n)}
    for y, t in (("y13", "WO"), ("y14", "D"), ("y15", "SP"), ("y16", "M")):
        out[y] = float(share.get(t, 0)) / n if n else float("nan")
    return out


def retransmission_rate(transfers: pd.DataFrame, after_s: float) -> float:
    """y10 over the measured half of the run: packets resent over packets sent by the
    transfers that started at or after ``after_s`` (the study averages its per-interval rates
    over the second half; a per-transfer account of the same half)."""
    sel = transfers[transfers["start_s"] >= after_s]
    sent = sel["packets_sent"].sum()
    return float(sel["retransmits"].sum() / sent) if sent else float("nan")


def active_flows(transfers: pd.DataFrame, after_s: float, end_s: float) -> float:
    """y1 over the measured half: the mean number of transfers in progress between ``after_s``
    and ``end_s`` (each counts from its start to its completion, or to the end when it has
    not completed), the time average of the study's per-interval counts."""
    if not end_s > after_s:
        raise ValueError(f"end_s: must be after after_s, got {end_s} <= {after_s}")
    start = transfers["start_s"].to_numpy(float)
    done = start + transfers["completion_time_s"].fillna(np.inf).to_numpy(float)
    overlap = np.clip(np.minimum(done, end_s) - np.maximum(start, after_s), 0, None)
    return float(overlap.sum() / (end_s - after_s))
