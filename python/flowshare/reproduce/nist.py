"""Reproduction of Mills et al. (2010), "Comparing Congestion Control Regimes in a
Heterogeneous Network", ch. 8 of K. Mills et al., *Study of Proposed Internet Congestion
Control Mechanisms*, NIST SP 500-282.

The campaign is the study's: the 32 conditions of the 2^(9−4) design × the 7 alternate
algorithms × the HIGH and LOW initial thresholds, 448 runs with common random numbers (every
run the same seed, so the seven alternates of a condition see the same sources, receivers,
sizes and first starts). Each run is measured from its transfers (:mod:`.nist_responses`),
and the analysis of §8.3 follows: goodput tables (8-26 to 8-29), rank matrices and their
summaries (8-31, 8-32), the congestion order of the conditions and the findings of §8.5.

A run's network is ``network_share`` of the study's (that share of the access routers, each
as at full scale, with the POP and backbone speeds shrunk to the traffic kept; resolution
``nist:A23``) for ``duration_s`` simulated seconds; goodputs are compared as they are, and
counts of flows and packets per full-scale run-hour.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._core import ConfigError
from ..study.ranks import block_mean_ranks, rank_matrices, rank_summary
from ..study.stats import grubbs, pca
from . import nist_network as nn
from . import nist_published as pub
from . import nist_responses as nr
from . import nist_scenario as ns
from .report import Section, run_cost, table_html
from .targets import Target, check_unique

__all__ = ["KEY", "OPTIONS", "SCALES", "Options", "Plan", "evaluate", "intro", "plan",
           "rows_from_store", "sections", "sweep_document", "targets", "write_rows"]

KEY = "nist"
TITLE = ("Mills et al. (2010): comparing congestion control regimes in a heterogeneous network "
         "(NIST SP 500-282, ch. 8)")
SCALES = ("full", "quick", "tiny")
"""``full``: the study's 448 one-hour runs at its size; ``quick``: the 448 runs on a fiftieth of
the network (9 of its 415 access routers) for 20 simulated seconds; ``tiny``: conditions 1
and 2 of that for three seconds, for tests."""

SIZES: dict[str, tuple[float, float, tuple[int, ...]]] = {
    "full": (1.0, 3600.0, tuple(range(1, 33))),
    "quick": (0.02, 20.0, tuple(range(1, 33))),
    "tiny": (0.02, 3.0, (1, 2)),
}
"""Scale → (share of the network, simulated seconds, conditions)."""
THRESHOLDS = ("HIGH", "LOW")
GOODPUT_TOLERANCE = 0.25
"""Relative tolerance of a goodput cell of Tables 8-26 to 8-29."""
RANK_TOLERANCE = 0.5
"""Absolute tolerance of a mean rank of Tables 8-31/8-32."""
ORDER_RHO = 0.75
"""A row of mean ranks is "in the same order" as the study's when the Spearman correlation of
the seven values with the published ones is at least this (``nist:A24``)."""


@dataclass(frozen=True)
class Options:
    """Choices of the reproduction.

    Attributes
    ----------
    network_share : float, optional
        The share of the study's network a run keeps (0 < s ≤ 1, ``nist:A23``); default the scale's
        (:data:`SIZES`).
    duration_s : float, optional
        Simulated seconds per run; default the scale's.
    router_speed : str, optional
        How a router's speed and buffer serve its link's two directions (``nist:A21``):
        ``"split"`` (default; half to each, the router forwarding at most its speed) or
        ``"per_direction"`` (all to each).
    """

    network_share: float | None = None
    duration_s: float | None = None
    router_speed: str = "split"

    def __post_init__(self) -> None:
        s = self.network_share
        if s is not None and not (isinstance(s, (int, float)) and 0 < s <= 1):
            raise ConfigError(f"scale: the share of the network is a fraction in (0, 1], got {s!r}")
        d = self.duration_s
        if d is not None and not (isinstance(d, (int, float)) and d > 0):
            raise ConfigError(f"duration_s: expected positive seconds, got {d!r}")
        try:
            nn.check_router_speed(self.router_speed)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None


OPTIONS = Options()


@dataclass(frozen=True)
class Plan:
    """The runs of one scale: (condition, alternate, threshold) in sweep-arm order."""

    scale: str
    network_share: float
    duration_s: float
    arms: tuple[tuple[int, str, str], ...]

    @property
    def hours(self) -> float:
        """A run's share of a full-scale run-hour: the share of the sources its network keeps
        times its share of the hour."""
        routers = nn.ACCESS_ROUTERS.scaled(self.network_share)
        return nn.source_share(routers) * self.duration_s / 3600.0


def plan(scale: str, options: Options = OPTIONS) -> Plan:
    """Every run at ``scale`` (one of :data:`SCALES`)."""
    if scale not in SCALES:
        raise ConfigError(f"scale: expected one of {', '.join(SCALES)}, got {scale!r}")
    size, duration, conditions = SIZES[scale]
    size = options.network_share or size
    duration = options.duration_s or duration
    arms = tuple((k, a, t) for t in THRESHOLDS for a in ns.ALTERNATES for k in conditions)
    return Plan(scale, size, duration, arms)


SWEPT = ("simulation.duration", "topology", "flows")


def sweep_document(p: Plan, options: Options = OPTIONS) -> dict[str, Any]:
    """One arm per run, all with the same seed (common random numbers, Table 8-12)."""
    scenarios = [ns.scenario(k, a, t, duration_s=p.duration_s, scale=p.network_share,
                             router_speed=options.router_speed)
                 for k, a, t in p.arms]

    def value(s: dict[str, Any], key: str) -> Any:
        for part in key.split("."):
            s = s[part]
        return s

    return {"base": scenarios[0], "replications": 1, "root_seed": 2010,
            "common_random_numbers": True,
            "points": [{key: value(s, key) for key in SWEPT} for s in scenarios]}


def measure(run_dir: Path, p: Plan) -> dict[str, Any]:
    """One run's responses: the volume, y1, y10, y12–y16 and the mean goodput of every flow group
    for the alternate's flows (y2(u)) and Reno's (y16(u)), in packets/s at the run's scale."""
    from ..results import TRANSFERS_FILE

    transfers = pd.read_parquet(run_dir / TRANSFERS_FILE)
    row: dict[str, Any] = {"flows": len(transfers),
                           "packets": float(transfers["packets_sent"].sum()),
                           "y1": nr.active_flows(transfers, p.duration_s / 2, p.duration_s),
                           "y10": nr.retransmission_rate(transfers, p.duration_s / 2),
                           "rtt_min_ms": float(transfers["rtt_min_s"].mean() * 1000)}
    row.update(nr.completions(transfers))
    ux = nr.user_experience(transfers, ns.MSS_B).set_index("group")
    for g, name in enumerate(pub.GROUPS, start=1):
        row[f"alt {name}"] = ux.loc[g, "y2(u)"]
        row[f"tcp {name}"] = ux.loc[g, "y16(u)"]
        row[f"n_alt {name}"] = ux.loc[g, "y1(u)"]
        row[f"n_tcp {name}"] = ux.loc[g, "y15(u)"]
    return row


def rows_from_store(store: Path, p: Plan, options: Options = OPTIONS) -> pd.DataFrame:
    """One row per finished run."""
    catalog = pd.read_parquet(store / "catalog.parquet")
    out = []
    for _, run in catalog.sort_values("arm").iterrows():
        if run["status"] != "done":
            continue
        k, alternate, threshold = p.arms[int(run["arm"])]
        row = {"condition": k, "alternate": alternate, "threshold": threshold,
               "run_id": str(run["run_id"]), "wall_s": run.get("wall_s", math.nan)}
        row.update(measure(store / "runs" / str(run["run_id"]), p))
        out.append(row)
    frame = pd.DataFrame(out)
    if not frame.empty:
        frame.attrs["plan"] = asdict(p)
    return frame


# --- Analysis -----------------------------------------------------------------------------------

def goodput_table(rows: pd.DataFrame, threshold: str, which: str) -> pd.DataFrame:
    """Tables 8-26 to 8-29 measured: the mean over the conditions of a flow group's mean
    goodput (``which`` ``alt`` or ``tcp``); groups × alternates in the tables' layout."""
    sel = rows[rows["threshold"] == threshold]
    out = pd.DataFrame(index=list(pub.GROUPS), columns=list(pub.ALGORITHMS), dtype=float)
    for column, alternate in pub.NAMES.items():
        runs = sel[sel["alternate"] == alternate]
        for g in pub.GROUPS:
            out.loc[g, column] = runs[f"{which} {g}"].mean() if len(runs) else math.nan
    return out


def rank_table(rows: pd.DataFrame, threshold: str) -> pd.DataFrame | None:
    """Tables 8-31/8-32 measured: per (condition, group) the seven alternates ranked by y2(u),
    and separately by y16(u) (7 the highest, ties averaged), then the mean rank per file type
    and the summary rows. ``None`` when a condition lacks an alternate."""
    sel = rows[rows["threshold"] == threshold]
    if sel.empty or sel.groupby("condition")["alternate"].nunique().min() < len(ns.ALTERNATES):
        return None
    column_of = {v: k for k, v in pub.NAMES.items()}
    means = {}
    for which, response in (("alt", "y2(u)"), ("tcp", "y16(u)")):
        long = [{"alternative": column_of[r["alternate"]], "condition": r["condition"],
                 "group": g, "value": r[f"{which} {g}"]}
                for _, r in sel.iterrows() for g in pub.GROUPS]
        # Higher goodput is the better rank (7); rank_values ranks 1 = smallest.
        matrices = rank_matrices(pd.DataFrame(long), alternative="alternative",
                                 condition="condition", group="group", value="value",
                                 groups=list(pub.GROUPS))
        blocks = {t: [g for g in pub.GROUPS if g.split("-")[0] == t] for t in pub.FILE_TYPES}
        means[response] = pd.DataFrame({alt: block_mean_ranks(m, blocks)
                                        for alt, m in matrices.items()})[list(pub.ALGORITHMS)]
    return rank_summary(means)


def congestion_order(rows: pd.DataFrame, threshold: str) -> list[int]:
    """The conditions from least to most congested by their mean y10 over the alternates."""
    sel = rows[rows["threshold"] == threshold]
    return [int(k) for k in sel.groupby("condition")["y10"].mean().sort_values(kind="stable").index]


MACROSCOPIC = ("y1", "y10", "y12", "y13", "y14", "y15", "y16")
"""The responses of Table 8-19 that the transfers give: y1 (mean transfers in progress over the
second half), y10 and y12–y16."""
GRUBBS_ALPHA = 0.05
"""α of Grubbs' test on a condition's extreme residual (unstated in §8.3.1; ``nist:A13``)."""


def residuals(rows: pd.DataFrame, threshold: str) -> pd.DataFrame:
    """§8.3.1: per condition and response, the residuals of the seven alternates around the
    condition mean (value − mean); one row per (condition, response) with the alternate of the
    most extreme residual, the residual, and whether Grubbs' test flags it (two-sided, α 0.05).
    Cells whose seven values are equal, or incomplete, are left out."""
    sel = rows[rows["threshold"] == threshold]
    out = []
    for k, runs in sel.groupby("condition"):
        if runs["alternate"].nunique() < len(ns.ALTERNATES):
            continue
        for y in MACROSCOPIC:
            values = runs.set_index("alternate")[y].astype(float)
            if not np.isfinite(values).all() or values.std() == 0:
                continue
            test = grubbs(values.to_numpy(), alpha=GRUBBS_ALPHA)
            out.append({"condition": int(k), "response": y, "alternate": values.index[test.index],
                        "residual": float(test.value - values.mean()), "outlier": test.outlier})
    return pd.DataFrame(out, columns=["condition", "response", "alternate", "residual", "outlier"])


def goodput_vectors(rows: pd.DataFrame, threshold: str) -> pd.DataFrame:
    """§8.3.2's 48-vectors: one row per (alternate, condition), the 24 groups' y2(u) then
    their y16(u); groups without a value in some run, or constant, are dropped."""
    sel = rows[rows["threshold"] == threshold].set_index(["alternate", "condition"])
    columns = [f"alt {g}" for g in pub.GROUPS] + [f"tcp {g}" for g in pub.GROUPS]
    frame = sel[columns].astype(float)
    keep = [c for c in columns if np.isfinite(frame[c]).all() and frame[c].std() > 0]
    return frame[keep]


def _between_share(scores: pd.DataFrame, key: str) -> float:
    """The share of the scores' variance (summed over their columns) that lies between the
    groups of the index level ``key``."""
    centred = scores - scores.mean()
    means = scores.groupby(level=key).transform("mean") - scores.mean()
    return float((means ** 2).to_numpy().sum() / (centred ** 2).to_numpy().sum())


def _macroscopic(rows: pd.DataFrame) -> list[Target]:
    """§8.4.1 and finding 4, as far as the measured responses go."""
    out = []
    congested = set(pub.CONGESTION_ORDER[-8:])
    for thr in THRESHOLDS:
        res = residuals(rows, thr) if not rows.empty else pd.DataFrame()
        why = "" if len(res) else "needs the seven alternates in a condition"
        share = float(res["outlier"].mean()) if len(res) else None
        out.append(Target(f"macro.{thr}.significant", f"share of (condition, response) cells whose "
                          f"extreme residual Grubbs' test flags (α 0.05), y1, y10, y12–y16, {thr} "
                          "(mostly not significant)", 0.5, 0.0, comparison="at_most")
                   .evaluate(share, why))
        hot = rows[(rows["threshold"] == thr) & rows["condition"].isin(congested)] if len(res) else res
        top = (hot.loc[hot.groupby("condition")["y10"].idxmax(), "alternate"]
               if len(res) and len(hot) else pd.Series(dtype=str))
        fast = float(top.isin(["FAST", "FAST-AT"]).mean()) if len(top) else None
        out.append(Target(f"macro.{thr}.fast_retransmits", f"share of the eight most congested "
                          f"conditions where FAST or FAST-AT has the highest y10, {thr}", 0.5, 0.0,
                          comparison="at_least")
                   .evaluate(fast, "" if fast is not None else
                             "needs the eight most congested conditions (the study's order)"))
        sel = rows[rows["threshold"] == thr] if not rows.empty else rows
        most = (sel.loc[sel.groupby("condition")["y1"].idxmax(), "alternate"]
                if len(sel) else pd.Series(dtype=str))
        y1 = float(most.isin(["Scalable", "FAST"]).mean()) if len(most) else None
        out.append(Target(f"macro.{thr}.y1_scalable_fast", f"share of conditions where Scalable or "
                          f"FAST has the most transfers in progress (y1), {thr}", 0.5, 0.0,
                          comparison="at_least")
                   .evaluate(y1, "" if y1 is not None else "no run"))
    return out


def _pca(rows: pd.DataFrame) -> list[Target]:
    """§8.4.2's principal components of the 48-vectors, read as numbers (``nist:A25``)."""
    out = []
    for thr in THRESHOLDS:
        vectors = goodput_vectors(rows, thr) if not rows.empty else pd.DataFrame()
        ok = vectors.shape[0] >= 3 and vectors.shape[1] >= 3
        why = "" if ok else "too few runs or groups with goodputs at this scale"
        res = pca(vectors) if ok else None
        explained = float(res.explained[:3].sum()) if res else None
        out.append(Target(f"pca.{thr}.explained", f"variance explained by PC1–PC3 of the goodput "
                          f"vectors ({vectors.shape[1]} of 48 columns measured), {thr} (\"nearly all\")",
                          0.9, 0.0, comparison="at_least").evaluate(explained, why))
        scores = res.scores[["PC1", "PC2"]] if res else None
        conditions = _between_share(scores, "condition") if res else None
        out.append(Target(f"pca.{thr}.by_condition", f"share of the PC1–PC2 scores' variance between "
                          f"conditions, {thr} (the clusters are conditions)", 0.8, 0.0,
                          comparison="at_least").evaluate(conditions, why))
        if thr == "HIGH":
            algorithms = _between_share(scores, "alternate") if res else None
            out.append(Target("pca.HIGH.by_algorithm", "share of the PC1–PC2 scores' variance between "
                              "alternates, HIGH (no algorithm clustering)", 0.1, 0.0,
                              comparison="at_most").evaluate(algorithms, why))
        else:
            shift = None
            if res:
                x = pd.DataFrame([ns.condition(k) for k in scores.index.get_level_values("condition")],
                                 index=scores.index)
                pc1 = scores["PC1"]
                # PC1 oriented so that it grows with the vectors' mean goodput.
                if np.corrcoef(pc1, vectors.mean(axis=1))[0, 1] < 0:
                    pc1 = -pc1
                fast_cond = ((x["x1"] == 1600) & (x["x2"] == 1)).to_numpy()
                is_fast = scores.index.get_level_values("alternate").isin(["FAST", "FAST-AT"])
                a, b = pc1[fast_cond & is_fast], pc1[fast_cond & ~is_fast]
                shift = float((a.mean() - b.mean()) / pc1.std()) if len(a) and len(b) else None
            out.append(Target("pca.LOW.fast_cluster", "PC1 of FAST and FAST-AT minus the other "
                              "alternates' in the conditions x1 = +1, x2 = −1, in PC1 standard "
                              "deviations, LOW (FAST and FAST-AT rightmost)", 0.5, 0.0,
                              comparison="at_least")
                       .evaluate(shift, why if shift is None and why else
                                 ("" if shift is not None else "no such condition at this scale")))
    return out


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = pd.Series(a).rank().to_numpy(), pd.Series(b).rank().to_numpy()
    if np.std(ra) == 0 or np.std(rb) == 0:
        return math.nan
    return float(np.corrcoef(ra, rb)[0, 1])


# --- Targets ------------------------------------------------------------------------------------

def _provisioning() -> list[Target]:
    """Tables 8-10, 8-11, 8-15 to 8-18: the network and the population as built."""
    out = []
    printed_speed = {("fast", 800): 720e6}
    for x1 in nn.BASE_SPEEDS:
        topo = nn.topology(x1, 1, 1)
        built = {}
        for link in topo.links:
            end = next((e for e in (link.a, link.b) if e in topo.access), None)
            tier = topo.access[end] if end else ("pop" if "pop" in link.a + link.b else "backbone")
            built[tier] = link.rate * nn.PACKET_B * 8 * 1000
        for tier in nn.ROUTER_CLASSES:
            published = printed_speed.get((tier, x1), nn.gbps(nn.speeds(x1)[tier]) * 1e9)
            t = Target(f"T8-15.{tier}.x1={x1}", f"{tier} router speed at x1 = {x1} packets/ms (bit/s)",
                       published, 0.001, tolerance_kind="relative")
            note = ("Table 8-15 prints 720 Mbit/s; Table 8-8 and the access buffers of Table 8-18 "
                    "give 480 (nist:A2)") if (tier, x1) in printed_speed else ""
            out.append(t.evaluate(built[tier], note if built[tier] != published else ""))
    printed = {(1.0, "backbone"): (65_105, 146_487, 260_422), (1.0, "pop"): (8_138, 18_311, 32_553),
               (1.0, "access"): (1_294, 2_912, 5_176), (0.5, "backbone"): (32_553, 73_244, 130_211),
               (0.5, "pop"): (4_096, 9_155, 16_276), (0.5, "access"): (647, 1_456, 2_588)}
    for (x3, tier), values in printed.items():
        got: list[float] = []
        for x1 in nn.BASE_SPEEDS:
            for x2 in nn.DELAY_MULTIPLIERS:
                topo = nn.topology(x1, x2, x3)
                q = [k.queue for k in topo.links
                     if (tier == "access") == any(e in topo.access for e in (k.a, k.b))
                     and (tier != "pop" or "pop" in k.a + k.b)
                     and (tier != "backbone" or (k.a.startswith("bb") and k.b.startswith("bb")))]
                got.append(float(np.mean(q)))
        for stat, published, measured in zip(("min", "avg", "max"), values,
                                              (min(got), float(np.mean(got)), max(got))):
            t = Target(f"T8-18.{tier}.x3={x3}.{stat}", f"{stat} {tier} buffer at x3 = {x3} (packets"
                       f"{', mean over access routers' if tier == 'access' else ''})",
                       published, 0.01, tolerance_kind="relative")
            note = ("printed 4.096k; half of 8,138 is 4,069 (nist:A3)"
                    if (x3, tier, stat) == (0.5, "pop", "min") else "")
            out.append(t.evaluate(measured, note if abs(measured / published - 1) > 0.01 else ""))
    fit = nn.fit_delays()
    for x2 in nn.DELAY_MULTIPLIERS:
        for stat, published in (("min", 6), ("avg", 41), ("max", 100)):
            out.append(Target(f"T8-17.x2={x2}.{stat}", f"{stat} round-trip propagation delay of the "
                              f"flows at x2 = {x2} (ms)", published * x2, 0.5 * x2)
                       .evaluate(getattr(fit, stat) * x2))
    place = nn.placement(nn.ACCESS_ROUTERS)
    for c in ("direct", "fast", "normal"):
        out.append(Target(f"T8-10.sources.{c}", f"share of sources under {c} access routers (%)",
                          nn.SOURCE_SHARES[c] * 100, 0.5).evaluate(place.source_shares[c] * 100))
        out.append(Target(f"T8-10.receivers.{c}", f"share of receivers under {c} access routers (%)",
                          nn.RECEIVER_SHARES[c] * 100, 0.5).evaluate(place.receiver_shares[c] * 100))
    for k in ("VF", "F", "T"):
        out.append(Target(f"T8-11.{k}", f"P(path class {k})", nn.PATH_CLASS_P[k], 0.02,
                          tolerance_kind="relative").evaluate(place.path_classes[k]))
    for x9, published in nn.SOURCES.items():
        out.append(Target(f"T8-16.x9={x9}", f"sources at x9 = {x9}", published, 0.005,
                          tolerance_kind="relative").evaluate(place.sources[x9]))
    return out


def _load(rows: pd.DataFrame, p: Plan) -> list[Target]:
    """Table 8-22's volume, the range of y10, the congestion order and Fig. 8-5's y10."""
    out = []
    for thr in THRESHOLDS:
        sel = rows[rows["threshold"] == thr] if not rows.empty else rows
        measured = {"flows": sel["y12"].mean() / p.hours if len(sel) else None,
                    "packets": sel["packets"].mean() / p.hours if len(sel) else None}
        for what, published in pub.VOLUME[thr].items():
            label = "flows completed" if what == "flows" else "data packets sent"
            out.append(Target(f"T8-22.{thr}.{what}", f"{label} per full-scale run-hour, mean of "
                              f"the {thr} runs", published, 0.25, tolerance_kind="relative")
                       .evaluate(measured[what], "" if len(sel) else "no run finished"))
        lo, hi = pub.RETRANSMISSION_RANGE[thr]
        by_condition = sel.groupby("condition")["y10"].mean() if len(sel) else pd.Series(dtype=float)
        for stat, published, value in (("min", lo, by_condition.min()), ("max", hi, by_condition.max())):
            out.append(Target(f"y10.{thr}.{stat}", f"{'smallest' if stat == 'min' else 'largest'} "
                              f"mean retransmission rate of a condition, {thr}", published, 3.0,
                              tolerance_kind="factor")
                       .evaluate(value if len(sel) else None, "" if len(sel) else "no run finished"))
        order = congestion_order(rows, thr) if len(sel) else []
        complete = len(order) == 32
        why = "" if complete else f"needs all 32 conditions; this scale runs {len(order)}"
        pos = {k: i + 1 for i, k in enumerate(order)}
        out.append(Target(f"congestion.{thr}.least", f"position of condition 16 (the least congested) "
                          f"when the conditions are sorted by y10, {thr}", 1, 2)
                   .evaluate(pos.get(16) if complete else None, why))
        out.append(Target(f"congestion.{thr}.most", f"position of condition 21 (the most congested) "
                          f"when sorted by y10, {thr}", 32, 2)
                   .evaluate(pos.get(21) if complete else None, why))
        rho = _spearman(np.array([pos[k] for k in pub.CONGESTION_ORDER]), np.arange(1, 33)) if complete else None
        out.append(Target(f"congestion.{thr}.order", f"Spearman correlation of the congestion order "
                          f"by y10 with the rank matrices' row order, {thr}", 1.0, 0.3,
                          comparison="at_least").evaluate(rho, why))
    one = rows[(rows["condition"] == 1) & (rows["alternate"] == "CTCP") & (rows["threshold"] == "HIGH")] \
        if not rows.empty else rows
    out.append(Target("y10.fig8-5", "y10 of condition 1 with CTCP, HIGH (Fig. 8-5)",
                      pub.Y10_CONDITION_1_CTCP_HIGH, 1.5, tolerance_kind="factor")
               .evaluate(one["y10"].iloc[0] if len(one) else None, "" if len(one) else "not run"))
    return out


def _goodputs(rows: pd.DataFrame, p: Plan) -> list[Target]:
    """Every cell of Tables 8-26 to 8-29."""
    out = []
    tables = {("HIGH", "y2(u)"): "8-26", ("HIGH", "y16(u)"): "8-27", ("LOW", "y2(u)"): "8-28",
              ("LOW", "y16(u)"): "8-29"}
    for (thr, response), number in tables.items():
        which = "alt" if response == "y2(u)" else "tcp"
        measured = goodput_table(rows, thr, which) if not rows.empty else None
        for g in pub.GROUPS:
            for alg in pub.ALGORITHMS:
                whose = alg if which == "alt" else f"TCP competing with {alg}"
                t = Target(f"T{number}.{g}.{alg}", f"mean goodput of {whose}, group {g}, {thr} "
                           "(packets/s)", float(pub.GOODPUT[thr][response].loc[g, alg]),
                           GOODPUT_TOLERANCE, tolerance_kind="relative")
                value = None if measured is None else measured.loc[g, alg]
                note = ""
                if value is None or not math.isfinite(value):
                    value, note = None, "no completed transfer of this group at this scale"
                done = t.evaluate(value, note)
                if not done.passed and value is not None and p.duration_s < 3600:
                    done = done.evaluate(value, f"{done.note}; in runs of {p.duration_s:g} s only "
                                         "the transfers that complete count, the shorter ones")
                out.append(done)
    return out


def _ranks(rows: pd.DataFrame) -> list[Target]:
    """Tables 8-31/8-32, each value, and the order of each of the 16 per-file-type rows."""
    out = []
    for thr, number in (("HIGH", "8-31"), ("LOW", "8-32")):
        table = rank_table(rows, thr) if not rows.empty else None
        why = "" if table is not None else "needs every alternate in every condition"
        conditions = rows[rows["threshold"] == thr]["condition"].nunique() if not rows.empty else 0
        few = (f"ranks over {conditions} of the 32 conditions" if table is not None and conditions < 32
               else "")
        for (response, row), values in pub.RANKS[thr].items():
            key = ("all" if response.startswith("y2(u) &") else response, row)
            for alg, published in zip(pub.ALGORITHMS, values):
                measured = None if table is None else float(table.loc[key, alg])
                t = Target(f"T{number}.{key[0]}.{row.rstrip('.')}.{alg}",
                           f"{'rank std' if row == 'Std.' else 'mean rank'} of {alg}, {response} "
                           f"{row}, {thr}", published, RANK_TOLERANCE)
                done = t.evaluate(measured, why)
                out.append(done if done.passed or not few else done.evaluate(measured, few + "; " + done.note))
            if row in pub.FILE_TYPES:
                measured_row = None if table is None else table.loc[key, list(pub.ALGORITHMS)].to_numpy(float)
                rho = None if measured_row is None else _spearman(measured_row, np.array(values))
                same = measured_row is not None and list(np.argsort(measured_row, kind="stable")) == \
                    list(np.argsort(np.array(values), kind="stable"))
                if rho is not None and not math.isfinite(rho):
                    rho = None
                missing = "a file type without completed transfers in some cells has no mean rank"
                note = why or (missing if rho is None else
                               f"identical order: {'yes' if same else 'no'}" + (f"; {few}" if few else ""))
                t = Target(f"T{number}.order.{response}.{row}", f"Spearman correlation of the seven "
                           f"mean ranks of {response} {row}, {thr}, with the study's", 1.0,
                           1 - ORDER_RHO, comparison="at_least")
                done = t.evaluate(rho, note if not (rho is not None and rho >= ORDER_RHO) else "")
                out.append(done)
    return out


def _findings(rows: pd.DataFrame, p: Plan) -> list[Target]:
    """The findings of §8.5 that the transfers measure, one target each."""
    out = []
    tables = {thr: rank_table(rows, thr) if not rows.empty else None for thr in THRESHOLDS}
    large = [g for g in pub.GROUPS if not g.startswith("WO")]
    low = rows[rows["threshold"] == "LOW"] if not rows.empty else rows
    pairs = [(low[f"alt {g}"].mean(), low[f"tcp {g}"].mean()) for g in large] if len(low) else []
    pairs = [(a, b) for a, b in pairs if math.isfinite(a) and math.isfinite(b)]
    share = float(np.mean([a > b for a, b in pairs])) if pairs else None
    out.append(Target("finding1.low.alternates_beat_tcp", "share of the large-file groups (M, SP, D) "
                      "whose alternate flows out-goodput the competing TCP flows, LOW", 1.0, 0.1,
                      comparison="at_least")
               .evaluate(share, "" if share is not None else "no LOW run with large files"))

    def gap(thr: str) -> float | None:
        sel = rows[rows["threshold"] == thr] if not rows.empty else rows
        if not len(sel):
            return None
        alt = np.array([sel[f"alt {g}"].mean() for g in large])
        tcp = np.array([sel[f"tcp {g}"].mean() for g in large])
        ok = np.isfinite(alt) & np.isfinite(tcp) & (alt > 0)
        return float(np.mean((alt[ok] - tcp[ok]) / alt[ok])) if ok.any() else None

    def published_gap(thr: str) -> float:
        alt = pub.GOODPUT[thr]["y2(u)"].loc[large].to_numpy(float)
        tcp = pub.GOODPUT[thr]["y16(u)"].loc[large].to_numpy(float)
        return float(np.mean((alt - tcp) / alt))

    for thr in THRESHOLDS:
        out.append(Target(f"finding1.{thr}.gap", f"mean relative goodput advantage of the alternates "
                          f"over TCP on large files, {thr}", published_gap(thr), 0.05)
                   .evaluate(gap(thr), "" if gap(thr) is not None else
                             "no large-file group has both alternate and TCP goodputs"))
    for thr in THRESHOLDS:
        t = tables[thr]
        why = "" if t is not None else "needs every alternate in every condition"
        combined = None if t is None else t.loc[("all", "Avg.")]
        ctcp = None if combined is None else float(combined["CTCP"])
        out.append(Target(f"finding3.{thr}.ctcp_balance", f"CTCP's combined mean rank, {thr} "
                          "(the best balance, above 4.5)", 4.5, 0.0, comparison="at_least")
                   .evaluate(ctcp, why))
        stcp = None if combined is None else float(combined["STCP"] - combined.drop("STCP").min())
        out.append(Target(f"finding3.{thr}.scalable_worst", f"Scalable's combined mean rank minus the "
                          f"lowest of the others, {thr} (Scalable the worst: below 0)", 0.0, 0.0,
                          comparison="at_most").evaluate(stcp, why))
        fast = None if t is None else int(sum(a in ("FAST", "FAST-AT") for a in
                                            t.loc[("y2(u)", "Avg.")].sort_values().index[-2:]))
        if thr == "LOW":
            out.append(Target("finding1.low.fast_highest", "FAST and FAST-AT among the two highest "
                              "y2(u) mean ranks, LOW (count of the two)", 2, 0)
                       .evaluate(fast, why))
    cwnd = Target("finding4.ctcp_cwnd", "CTCP's mean cwnd relative to the other alternates' (higher: "
                  "above 1)", 1.0, 0.0, comparison="at_least")
    out.append(cwnd.evaluate(None, "y8 (mean cwnd over the measurement intervals) is not measured: "
                             "the runs record transfers, not per-interval windows"))
    return out


def targets() -> list[Target]:
    """Every target, unevaluated."""
    empty = pd.DataFrame(columns=["condition", "alternate", "threshold"])
    return [replace_measured(t) for t in evaluate(empty, plan("tiny"))]


def replace_measured(t: Target) -> Target:
    return Target(t.id, t.description, t.published, t.tolerance, t.comparison, t.tolerance_kind)


def evaluate(rows: pd.DataFrame, p: Plan | None = None) -> list[Target]:
    """Every target, evaluated on the runs' rows."""
    if p is None:
        p = Plan(**rows.attrs["plan"]) if "plan" in rows.attrs else plan("full")
    out = (_provisioning() + _load(rows, p) + _goodputs(rows, p) + _ranks(rows)
           + _macroscopic(rows) + _pca(rows) + _findings(rows, p))
    check_unique(out)
    return out


# --- Report -------------------------------------------------------------------------------------

def _frame_html(frame: pd.DataFrame, digits: int = 0) -> str:
    rows = [[str(i), *[("" if not math.isfinite(v) else f"{v:.{digits}f}") for v in r]]
            for i, r in zip(frame.index, frame.to_numpy(float))]
    return table_html(["", *map(str, frame.columns)], rows)


def sections(rows: pd.DataFrame) -> list[Section]:
    """The measured tables beside the published ones, the congestion order and the cost."""
    if rows.empty:
        return [Section("Runs", ["No run finished."])]
    p = Plan(**rows.attrs["plan"])
    out = []
    for thr, number in (("HIGH", "8-31"), ("LOW", "8-32")):
        table = rank_table(rows, thr)
        parts = []
        if table is not None:
            measured = table.copy()
            measured.index = [" ".join(map(str, i)) for i in measured.index]
            parts.append("<p>Measured</p>" + _frame_html(measured, 2))
        published = pd.DataFrame({f"{r} {k}": v for (r, k), v in pub.RANKS[thr].items()},
                                 index=list(pub.ALGORITHMS)).T
        parts.append(f"<p>Published (Table {number})</p>" + _frame_html(published, 2))
        out.append(Section(f"Mean ranks, {thr} initial threshold", [
            "Per condition and flow group the seven alternates are ranked by the mean goodput of "
            "their own flows (y2(u)) and, separately, of the TCP flows competing with them "
            "(y16(u)); 7 is the highest, ties share the mean rank."], parts))
    for thr, numbers in (("HIGH", ("8-26", "8-27")), ("LOW", ("8-28", "8-29"))):
        parts = []
        for which, response, number in (("alt", "y2(u)", numbers[0]), ("tcp", "y16(u)", numbers[1])):
            parts.append(f"<p>{response} measured (packets/s)</p>"
                         + _frame_html(goodput_table(rows, thr, which)))
            parts.append(f"<p>{response} published (Table {number})</p>"
                         + _frame_html(pub.GOODPUT[thr][response].astype(float)))
        out.append(Section(f"Goodput by flow group, {thr} initial threshold", [
            "The mean over the conditions of each flow group's mean goodput (N-weighted batches "
            "of 1000 completed transfers)."], parts))
    y10 = rows.pivot_table(index="condition", columns=["threshold", "alternate"], values="y10")
    y10.columns = [f"{t} {a}" for t, a in y10.columns]
    out.append(Section("Retransmission rate y10 by condition", [
        "Resent over sent packets of the transfers that started in the second half of each run. "
        "The study's order of the conditions by congestion is "
        + ", ".join(map(str, pub.CONGESTION_ORDER)) + "; the measured order (HIGH) is "
        + ", ".join(map(str, congestion_order(rows, "HIGH"))) + "."],
        [_frame_html(y10, 5)]))
    parts = []
    for thr in THRESHOLDS:
        res = residuals(rows, thr)
        if len(res):
            table = res.assign(residual=res["residual"].map(lambda v: f"{v:.4g}"),
                               outlier=res["outlier"].map({True: "yes", False: ""}))
            parts.append(f"<p>{thr}</p>" + table_html(list(table.columns), table.to_numpy().tolist()))
    out.append(Section("Macroscopic responses: extreme residuals", [
        "Per condition and response, the alternate whose value is farthest from the mean of the "
        "seven, its residual (value − mean) and whether Grubbs' test flags it at α = 0.05 "
        "(§8.3.1). y1 is the mean number of transfers in progress over the second half of a run."],
        parts))
    parts = []
    for thr in THRESHOLDS:
        vectors = goodput_vectors(rows, thr)
        if vectors.shape[0] >= 3 and vectors.shape[1] >= 3:
            res = pca(vectors)
            parts.append(f"<p>{thr}: {vectors.shape[1]} of the 48 goodput columns have a value in "
                         "every run; variance explained by PC1 to PC5: "
                         + ", ".join(f"{v:.1%}" for v in res.explained[:5]) + "</p>")
    out.append(Section("Principal components of the goodputs", [
        "One vector per alternate and condition: the 24 groups' mean goodput of the alternate's "
        "flows, then of the TCP flows competing with it, z-scored (§8.3.2)."], parts))
    cost = run_cost(rows)
    out.append(Section("Runs", [f"{len(rows)} runs on {p.network_share:g} of the network for "
                                f"{p.duration_s:g} simulated seconds each.", *([cost] if cost else [])]))
    return out


def _network(p: Plan) -> str:
    """What the scale keeps of the network."""
    routers = nn.ACCESS_ROUTERS.scaled(p.network_share)
    if routers == nn.ACCESS_ROUTERS or p.network_share == 1:
        return "The network is the study's: 415 access routers under 22 POPs and 11 backbone routers."
    return (f"The network keeps {routers.direct} directly connected, {routers.fast} fast and "
            f"{routers.normal} normal access routers of the study's 18, 84 and 313, each with its "
            f"hosts, speeds and delays, and {nn.source_share(routers):.1%} of the sources; the POP "
            "and backbone links run at the speeds of the traffic kept. Flows keep their windows, "
            "round trips and transfer times; fewer flows share the POP and backbone links, and "
            "with one router of a class the shares of Table 8-10 drift (nist:A23).")


def intro(scale: str, options: Options = OPTIONS) -> list[str]:
    """The report's opening paragraphs."""
    p = plan(scale, options)
    return [
        "K. Mills, J. Filliben, D. Cho, E. Schwartz and D. Genin, Study of Proposed Internet "
        "Congestion Control Mechanisms, NIST Special Publication 500-282, 2010, chapter 8: "
        "Comparing Congestion Control Regimes in a Heterogeneous Network.",
        f"Scale: {scale}: {len(p.arms)} runs of {p.duration_s:g} simulated seconds on "
        f"{p.network_share:g} of the study's network (the study: 448 runs of one hour on "
        "all of it). Counts of flows and packets are compared per full-scale run-hour.",
        _network(p),
        "Every number below comes from the runs of this reproduction; a target that is not met "
        "says why in its note.",
        "Choices: " + json.dumps(asdict(options)),
    ]


def write_rows(rows: pd.DataFrame, path: Path) -> None:
    """The measured runs as CSV (``runs.csv``)."""
    rows.to_csv(path, index=False, float_format="%.6g")
