"""Hasegawa (2000), chapter 2: two connections sharing a bottleneck (Figs 2.3-2.8).

G. Hasegawa, *Congestion and Fairness Control Mechanisms of TCP for the High-Speed Internet*,
PhD thesis, Osaka University, 2000, §2.2-2.3. The network of Fig 2.1: two greedy sources share
a 20 Mbit/s link with a 10-packet buffer, 1-Kbyte packets; connection 2 joins later. The
homogeneous case (Figs 2.3, 2.4) has τ1 = τ2 = 5 ms and a join at 1000 ms, the heterogeneous
case (Figs 2.5, 2.6) τ1 = 4 ms, τ2 = 8 ms and a join at 1500 ms; Tahoe, Reno, Vegas (α = 2,
β = 4) and Enhanced Vegas (δ = 3, Figs 2.7, 2.8). The homogeneous Vegas run is repeated with
other seeds and join phases for the spread of W1/W2 the thesis reports (target C2-1).

Measures, over the time from ``settle_s`` after the join to the end: each connection's mean
window and throughput, the mean queue of the shared link, and the windows' coefficient of
variation; the models are :mod:`flowshare.models.hasegawa.ch2`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._core import ConfigError
from ..models.hasegawa import ch2 as model
from .hasegawa_runs import (SERIES_PREFIX, check_choice, check_positive, pyplot, read_series,
                            thesis_tcp)
from .report import Section, figure_html, table_html
from .targets import Target

__all__ = ["KEY", "NUMBER", "TITLE", "Options", "Point", "evaluate", "intro", "measure", "points",
           "scenario", "sections", "targets"]

KEY = "ch2"
NUMBER = 2
TITLE = "Chapter 2: fairness and stability of two Tahoe, Reno, Vegas, Enhanced Vegas connections"

ALGORITHMS = ("tahoe", "reno", "vegas", "vegas_enhanced")
NAMES = {"tahoe": "Tahoe", "reno": "Reno", "vegas": "Vegas", "vegas_enhanced": "Enhanced Vegas"}
SETTINGS = {
    # setting: (tau1 s, tau2 s, join s, run s)
    "homogeneous": (0.005, 0.005, 1.0, 5.0),
    "heterogeneous": (0.004, 0.008, 1.5, 6.0),
}
RATE_BPS = 20e6
BUFFER = 10
PACKET_B = 1024           # 1 Kbyte = 1024 B (resolution hasegawa:A9)
MU = RATE_BPS / (8 * PACKET_B)   # packets/s
ALPHA, BETA, DELTA = 2.0, 4.0, 3.0
REPLICATIONS = {"full": 20, "quick": 10, "tiny": 2}
TINY_RUN_S = {"homogeneous": 3.0, "heterogeneous": 3.5}


@dataclass(frozen=True)
class Options:
    """Chapter 2's choices where the thesis leaves them open (resolution ``hasegawa:A9``)."""

    access_mbps: float = 200.0
    """Access links: 10 × the shared link, no delay of their own."""
    settle_s: float = 1.0
    """Measures start this long after connection 2 joins."""
    send_jitter_us: float = 10.0
    """Each segment leaves up to this long after the previous one (a random stream per run),
    so that the repeated Vegas runs differ as the thesis's did; 0 turns it off."""
    rwnd: int = 1000
    """Receiver window [packets]: never binding."""

    def __post_init__(self) -> None:
        for name in ("access_mbps", "settle_s", "rwnd"):
            check_positive(f"options.ch2.{name}", getattr(self, name))
        jitter = self.send_jitter_us
        if isinstance(jitter, bool) or not isinstance(jitter, int | float) or jitter < 0:
            raise _error("send_jitter_us", "a number >= 0", self.send_jitter_us)
        if not isinstance(self.rwnd, int):
            raise _error("rwnd", "an integer > 0", self.rwnd)


def _error(name: str, what: str, value: Any) -> ConfigError:
    return ConfigError(f"options.ch2.{name}: expected {what}, got {value!r}")


@dataclass(frozen=True)
class Point:
    """One run: the setting, the algorithm, and for repeated Vegas runs the replication."""

    setting: str
    algorithm: str
    replication: int = 0
    run_s: float = 0.0

    def __post_init__(self) -> None:
        check_choice("point.setting", self.setting, tuple(SETTINGS))
        check_choice("point.algorithm", self.algorithm, ALGORITHMS)

    @property
    def label(self) -> str:
        rep = f" #{self.replication}" if self.replication else ""
        return f"ch2 {self.setting} {NAMES[self.algorithm]}{rep}"

    @property
    def join_s(self) -> float:
        # Repeated runs join a little later each (a different phase of connection 1's packets).
        return SETTINGS[self.setting][2] + 0.000137 * self.replication


def points(scale: str) -> list[Point]:
    """Every algorithm in both settings, and the repeated homogeneous Vegas runs."""
    out = []
    for setting, (_, _, _, run_s) in SETTINGS.items():
        run = TINY_RUN_S[setting] if scale == "tiny" else run_s
        out += [Point(setting, algorithm, 0, run) for algorithm in ALGORITHMS]
    run = TINY_RUN_S["homogeneous"] if scale == "tiny" else SETTINGS["homogeneous"][3]
    out += [Point("homogeneous", "vegas", k, run) for k in range(1, REPLICATIONS[scale])]
    return out


def _cc(algorithm: str) -> tuple[Any, str]:
    if algorithm == "tahoe":
        return "reno", "tahoe"
    if algorithm == "reno":
        return "reno", "reno"
    if algorithm == "vegas":
        return {"algo": "vegas", "alpha": ALPHA, "beta": BETA}, "reno"
    return {"algo": "vegas_enhanced", "delta": DELTA}, "reno"


def scenario(point: Point, options: Options) -> dict[str, Any]:
    """The network of Fig 2.1 for one point (the seed comes from the sweep)."""
    tau1, tau2, _, _ = SETTINGS[point.setting]
    cc, recovery = _cc(point.algorithm)
    extra = {}
    if options.send_jitter_us > 0:
        extra["send_jitter"] = f"{options.send_jitter_us:g}us"
    tcp = thesis_tcp(mss_b=PACKET_B - 40, rwnd=options.rwnd, recovery=recovery, cc=cc, **extra)
    return {
        "simulation": {"duration": f"{point.run_s:g}s", "sample_interval": "5ms", "warmup": "0s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": f"{RATE_BPS / 1e6:g}Mbps", "delay": "0ms",
                           "queue": {"limit": BUFFER}},
            "access": {"rate": f"{options.access_mbps:g}Mbps", "delay": "0ms",
                       "queue": {"limit": 1000}},
        },
        "flows": [
            {"name": "c1", "rtt": f"{2 * tau1 * 1e3:g}ms", "tcp": tcp},
            {"name": "c2", "rtt": f"{2 * tau2 * 1e3:g}ms", "start": f"{point.join_s * 1e3:.6g}ms",
             "tcp": tcp},
        ],
        "trace": {"events": False},
        "changes": [],
    }


def measure(run_dir: Path, point: Point, options: Options) -> dict[str, Any]:
    """Windows, throughputs and the shared queue after the join; the models at this setting."""
    tau1, tau2, _, _ = SETTINGS[point.setting]
    flows, queues = read_series(run_dir)
    start = point.join_s + options.settle_s
    row: dict[str, Any] = {"setting": point.setting, "algorithm": point.algorithm,
                           "replication": point.replication, "label": point.label,
                           "tau1_ms": tau1 * 1e3, "tau2_ms": tau2 * 1e3}
    for k in (0, 1):
        f = flows[(flows["id"] == k) & (flows["time_s"] > start)]
        cwnd = f["cwnd"].to_numpy(float)
        row[f"w{k + 1}"] = float(cwnd.mean()) if cwnd.size else math.nan
        mean = float(cwnd.mean()) if cwnd.size else math.nan
        row[f"cv{k + 1}"] = float(cwnd.std()) / mean if mean else math.nan
        row[f"s{k + 1}_mbps"] = float(f["goodput_bps"].mean() / 1e6) if len(f) else math.nan
    table = pd.read_csv(run_dir / "flows.csv")
    for k in (0, 1):
        row[f"timeouts{k + 1}"] = int(table["timeouts"].iloc[k])
        row[f"drops{k + 1}"] = int(table["drops"].iloc[k])
    shared = queues[(queues["id"] == 0) & (queues["time_s"] > start)]
    row["queue_mean"] = float(shared["len_pkts"].mean()) if len(shared) else math.nan
    row["w_ratio"] = row["w1"] / row["w2"] if row["w2"] else math.nan
    row["s_ratio"] = row["s1_mbps"] / row["s2_mbps"] if row["s2_mbps"] else math.nan
    row["utilisation"] = (row["s1_mbps"] + row["s2_mbps"]) * 1e6 / RATE_BPS
    # The models of §2.2-2.3 at this setting.
    w_loss = 2 * tau1 * MU + BUFFER if tau1 == tau2 else math.nan
    row["model_w_loss"] = w_loss
    if point.algorithm in ("tahoe", "reno"):
        w_l = 2 * tau1 * MU + BUFFER if tau1 == tau2 else _hetero_loss_window(tau1, tau2)
        row["model_w1"] = float(model.tahoe_fixed_point(tau1, tau2, w_l))
        row["model_w2"] = float(model.tahoe_fixed_point(tau2, tau1, w_l))
        row["model_s_ratio"] = (tau2 / tau1) ** 2
    elif point.algorithm == "vegas_enhanced":
        w1, w2, l2 = model.enhanced_vegas_centre(tau1, tau2, MU, DELTA)
        row["model_w1"], row["model_w2"], row["model_queue"] = float(w1), float(w2), float(l2)
    else:
        lo, hi = model.vegas_ratio_range(tau1, tau2, MU, ALPHA, BETA)
        row["model_ratio_lo"], row["model_ratio_hi"] = lo, hi
        q_lo, q_hi = model.vegas_queue_range(ALPHA, BETA)
        row["model_queue_lo"], row["model_queue_hi"] = float(q_lo), float(q_hi)
    if point.replication == 0:
        c1 = flows[flows["id"] == 0]
        c2 = flows[flows["id"] == 1].set_index("time_s")["cwnd"]
        row[SERIES_PREFIX + "t"] = c1["time_s"].to_numpy(float)
        row[SERIES_PREFIX + "cwnd1"] = c1["cwnd"].to_numpy(float)
        row[SERIES_PREFIX + "cwnd2"] = c2.reindex(c1["time_s"]).to_numpy(float)
    return row


def _hetero_loss_window(tau1: float, tau2: float) -> float:
    """W_l of the heterogeneous case: the total window where the sloped efficiency line
    (hasegawa:A10) meets the Tahoe split W1/W2 = τ2/τ1, plus the buffer (the loss line is the
    efficiency line shifted by B along the diagonal, an approximation)."""
    # On the efficiency line cwnd1/(2τ1) + cwnd2/(2τ2) = μ with cwnd1 = (τ2/τ1)·cwnd2.
    w2 = MU / ((tau2 / tau1) / (2 * tau1) + 1 / (2 * tau2))
    return (tau2 / tau1) * w2 + w2 + BUFFER


# ---------------------------------------------------------------------------------------------
# Targets


TARGETS: tuple[Target, ...] = (
    Target("C2-1a", "Vegas, homogeneous: smallest W1/W2 (mean windows after the join) over the "
       "repeated runs", 1.03, 0.25),
    Target("C2-1b", "Vegas, homogeneous: largest W1/W2 over the repeated runs", 1.58, 0.25),
    Target("C2-2a", "Vegas, homogeneous: lower bound of W1/W2 from Eqs 2.24, 2.25, 2.17 "
       "(models.hasegawa.ch2.vegas_ratio_range)", 0.95, 0.1),
    Target("C2-2b", "Vegas, homogeneous: upper bound of W1/W2 from Eqs 2.24, 2.25, 2.17", 2.12, 0.1),
    Target("C2-2c", "Vegas, homogeneous: share of the repeated runs whose W1/W2 lies in the "
       "thesis's bounds 0.95-2.12", 1.0, 0.0, "at_least"),
    Target("C2-3a", "Vegas, homogeneous: smallest mean shared queue l2 over the runs, packets "
       "(bound (3+√5)/2·α; tolerance: the packet in transmission)", 5.236, 0.5, "at_least"),
    Target("C2-3b", "Vegas, homogeneous: largest mean shared queue l2 over the runs, packets "
       "(bound (3+√5)/2·β)", 10.472, 0.5, "at_most"),
    Target("C2-4a", "Enhanced Vegas (δ = 3), homogeneous: mean shared queue, packets (l2 = 2δ, "
       "Eq 2.36)", 6.0, 1.5),
    Target("C2-4b", "Enhanced Vegas (δ = 3), heterogeneous: mean shared queue, packets (l2 = 2δ)",
       6.0, 1.5),
    Target("C2-4c", "Enhanced Vegas, homogeneous: W1/W2 (fair: the centres of Eqs 2.34, 2.35 are "
       "equal)", 1.0, 0.1),
    Target("C2-4d", "Enhanced Vegas, heterogeneous: W1/W2 against the centres of Eqs 2.34, 2.35 "
       "(12.8/22.5 packets)", 0.5689, 0.15, tolerance_kind="relative"),
    Target("C2-5a", "Tahoe, heterogeneous (τ1 = 4 ms, τ2 = 8 ms): throughput ratio S1/S2 = "
       "(τ2/τ1)² (Eq 2.9)", 4.0, 0.25, tolerance_kind="relative"),
    Target("C2-5b", "Reno, heterogeneous: throughput ratio S1/S2 = (τ2/τ1)²", 4.0, 0.25,
       tolerance_kind="relative"),
)

WHY_MISSED = {
    "C2-2a": "the scan of resolution hasegawa:A13 over the (l1, l2) that satisfy Eqs 2.24, "
             "2.25 and 2.17 gives this range; the thesis does not give the l1, l2 behind 0.95-2.12",
    "C2-2b": "the scan of resolution hasegawa:A13 gives this range (see C2-2a)",
}


def targets() -> list[Target]:
    """Chapter 2's targets, unevaluated."""
    return list(TARGETS)


def evaluate(rows: pd.DataFrame) -> list[Target]:
    """Chapter 2's targets against its measured rows."""
    values: dict[str, tuple[float | None, str]] = {}
    vegas = _select(rows, "homogeneous", "vegas")
    if vegas.empty:
        for key in ("C2-1a", "C2-1b", "C2-2a", "C2-2b", "C2-2c", "C2-3a", "C2-3b"):
            values[key] = (None, "no homogeneous Vegas run finished")
    else:
        ratios = vegas["w_ratio"].dropna()
        values["C2-1a"] = (float(ratios.min()), "")
        values["C2-1b"] = (float(ratios.max()), "")
        values["C2-2a"] = (float(vegas["model_ratio_lo"].iloc[0]), "")
        values["C2-2b"] = (float(vegas["model_ratio_hi"].iloc[0]), "")
        values["C2-2c"] = (float(((ratios >= 0.95) & (ratios <= 2.12)).mean()), "")
        values["C2-3a"] = (float(vegas["queue_mean"].min()), "")
        values["C2-3b"] = (float(vegas["queue_mean"].max()), "")
    for key, setting, column in (("C2-4a", "homogeneous", "queue_mean"),
                                 ("C2-4b", "heterogeneous", "queue_mean"),
                                 ("C2-4c", "homogeneous", "w_ratio"),
                                 ("C2-4d", "heterogeneous", "w_ratio")):
        values[key] = _one(rows, setting, "vegas_enhanced", column)
    values["C2-5a"] = _one(rows, "heterogeneous", "tahoe", "s_ratio")
    values["C2-5b"] = _one(rows, "heterogeneous", "reno", "s_ratio")
    why = dict(WHY_MISSED)
    if not vegas.empty and len(vegas["w_ratio"].dropna()):
        ratios = vegas["w_ratio"].dropna()
        why["C2-1a"] = (f"the {len(ratios)} runs give W1/W2 from {ratios.min():.2f} to "
                        f"{ratios.max():.2f}: they differ only by each packet's random send "
                        "delay of up to ch2.send_jitter_us, and where the join finds the first "
                        "connection's window varies less than in the thesis's runs, which do not "
                        "say what differed between them")
    for key, setting, algorithm in (("C2-4b", "heterogeneous", "vegas_enhanced"),
                                    ("C2-4c", "homogeneous", "vegas_enhanced"),
                                    ("C2-4d", "heterogeneous", "vegas_enhanced"),
                                    ("C2-5a", "heterogeneous", "tahoe"),
                                    ("C2-5b", "heterogeneous", "reno")):
        why[key] = _losses(rows, setting, algorithm)
    out = []
    for target in TARGETS:
        value, note = values[target.id]
        out.append(target.unmeasured(note) if value is None
                   else target.evaluate(value).explained(why.get(target.id, "")))
    return out


def _losses(rows: pd.DataFrame, setting: str, algorithm: str) -> str:
    """What the run's losses were: the models assume losses that hit both connections at once
    and are repaired without a timeout."""
    frame = _select(rows, setting, algorithm)
    frame = frame[frame["replication"] == 0] if not frame.empty else frame
    if frame.empty:
        return ""
    r = frame.iloc[0]
    reno = "" if algorithm == "tahoe" else (" (Reno's recovery of several losses in one window "
                                            "ends in a timeout)")
    return (f"in this run connection 1 lost {int(r['drops1'])} packets and timed out "
            f"{int(r['timeouts1'])} times, connection 2 {int(r['drops2'])} and "
            f"{int(r['timeouts2'])}{reno}; mean windows after the join W1/W2 = "
            f"{r['w_ratio']:.2f}, where the models' simultaneous, timeout-free losses give τ2/τ1")


def _select(rows: pd.DataFrame, setting: str, algorithm: str) -> pd.DataFrame:
    if rows.empty:
        return rows
    return rows[(rows["setting"] == setting) & (rows["algorithm"] == algorithm)]


def _one(rows: pd.DataFrame, setting: str, algorithm: str, column: str) -> tuple[float | None, str]:
    frame = _select(rows, setting, algorithm)
    frame = frame[frame["replication"] == 0] if not frame.empty else frame
    if frame.empty or not math.isfinite(float(frame[column].iloc[0])):
        return None, f"no {setting} {NAMES[algorithm]} run finished"
    return float(frame[column].iloc[0]), ""


# ---------------------------------------------------------------------------------------------
# Report


def _plot_setting(rows: pd.DataFrame, setting: str) -> str:
    plt = pyplot()
    tau1, tau2, join, _ = SETTINGS[setting]
    fig, axes = plt.subplots(2, len(ALGORITHMS), figsize=(4.0 * len(ALGORITHMS), 7.2))
    for col, algorithm in enumerate(ALGORITHMS):
        frame = _select(rows, setting, algorithm)
        frame = frame[frame["replication"] == 0] if not frame.empty else frame
        top, bottom = axes[0][col], axes[1][col]
        top.set_title(NAMES[algorithm])
        if frame.empty:
            top.text(0.5, 0.5, "no run", ha="center", transform=top.transAxes)
            continue
        r = frame.iloc[0]
        t, c1, c2 = r[SERIES_PREFIX + "t"], r[SERIES_PREFIX + "cwnd1"], r[SERIES_PREFIX + "cwnd2"]
        top.plot(t, c1, lw=0.8, label="connection 1")
        top.plot(t, c2, lw=0.8, label="connection 2")
        top.set_xlabel("time [s]")
        top.set_ylabel("cwnd [packets]")
        top.grid(alpha=0.3)
        after = np.asarray(t) >= join
        bottom.plot(np.asarray(c1)[after], np.asarray(c2)[after], "k-", lw=0.5)
        hi = float(np.nanmax([np.nanmax(c1), np.nanmax(c2), 40.0]))
        xs = np.linspace(0, hi, 50)
        bottom.plot(xs, xs, "g--", lw=0.8, label="fairness line")
        eff = 2 * tau2 * (MU - xs / (2 * tau1))
        bottom.plot(xs, eff, "b:", lw=0.8, label="efficiency line")
        loss = 2 * tau2 * (MU - (xs - BUFFER / 2) / (2 * tau1)) + BUFFER / 2
        bottom.plot(xs, loss, "r:", lw=0.8, label="packet-loss line (approx.)")
        bottom.set_xlim(0, hi)
        bottom.set_ylim(0, hi)
        bottom.set_xlabel("cwnd1 [packets]")
        bottom.set_ylabel("cwnd2 [packets]")
        bottom.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    axes[1][0].legend(fontsize=7)
    figs = ("2.3, 2.4, 2.7, 2.8(a), 2.8(c)" if setting == "homogeneous"
            else "2.5, 2.6, 2.8(b), 2.8(d)")
    fig.suptitle(f"{setting}: cwnd(t) and the cwnd1-cwnd2 plane after the join (Figs {figs})")
    fig.tight_layout()
    return figure_html(fig, f"Figs {figs}: {setting} case, τ1 = {tau1 * 1e3:g} ms, τ2 = "
                            f"{tau2 * 1e3:g} ms, connection 2 joins at {join * 1e3:g} ms")


def _plot_vegas_spread(rows: pd.DataFrame) -> str:
    plt = pyplot()
    vegas = _select(rows, "homogeneous", "vegas").sort_values("replication")
    fig, ax = plt.subplots(figsize=(6, 3.4))
    ax.plot(vegas["replication"], vegas["w_ratio"], "ko", label="simulation")
    ax.axhspan(1.03, 1.58, color="g", alpha=0.15, label="thesis, simulated: 1.03-1.58")
    for y, style, label in ((0.95, "b--", "thesis bounds 0.95-2.12"), (2.12, "b--", None)):
        ax.axhline(y, color="b", ls="--", lw=0.8, label=label)
    if len(vegas):
        lo, hi = vegas["model_ratio_lo"].iloc[0], vegas["model_ratio_hi"].iloc[0]
        ax.axhline(lo, color="r", ls=":", lw=0.8, label=f"hasegawa:A13 scan {lo:.2f}-{hi:.2f}")
        ax.axhline(hi, color="r", ls=":", lw=0.8)
    ax.set_xlabel("run")
    ax.set_ylabel("W1/W2")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return figure_html(fig, "C2-1, C2-2: W1/W2 of the repeated homogeneous Vegas runs against "
                            "the thesis's range and bounds")


def _table(rows: pd.DataFrame) -> str:
    frame = rows[rows["replication"] == 0].sort_values(["setting", "algorithm"])
    body = [[r["setting"], NAMES[r["algorithm"]], r["w1"], r["w2"], r["w_ratio"], r["s1_mbps"],
             r["s2_mbps"], r["s_ratio"], r["queue_mean"], r["cv1"], r["cv2"], r["utilisation"]]
            for _, r in frame.iterrows()]
    return table_html(("setting", "TCP", "W1", "W2", "W1/W2", "S1 Mbit/s", "S2 Mbit/s", "S1/S2",
                       "mean queue", "CV cwnd1", "CV cwnd2", "utilisation"), body)


def sections(rows: pd.DataFrame) -> list[Section]:
    """Figs 2.3-2.8 regenerated, the repeated Vegas runs, and a table of the measures."""
    section = Section(TITLE, paragraphs=[
        "Thesis (§2.2-2.3): Tahoe and Reno are fair with equal delays but their windows "
        "oscillate forever; with τ1 = 4 ms and τ2 = 8 ms their throughputs go as 1/τ² (S1/S2 = "
        "4). Vegas converges (stable) but unfairly: W1/W2 between 1.03 and 1.58 over repeated "
        "runs. Enhanced Vegas (δ = 3) oscillates around windows proportional to the delay, with "
        "the shared queue near 2δ = 6 packets.",
    ])
    if rows.empty:
        section.paragraphs.append("No chapter 2 run finished.")
        return [section]
    hetero = _select(rows, "heterogeneous", "tahoe")
    vegas = _select(rows, "homogeneous", "vegas")
    enh = _select(rows, "homogeneous", "vegas_enhanced")
    facts = []
    if len(hetero):
        facts.append(f"the heterogeneous Tahoe run gives S1/S2 = {hetero['s_ratio'].iloc[0]:.2f}")
    if len(vegas):
        facts.append(f"Vegas W1/W2 spans {vegas['w_ratio'].min():.2f}-{vegas['w_ratio'].max():.2f} "
                     f"over {len(vegas)} runs with CV of cwnd {vegas['cv1'].mean():.3f}")
    if len(enh):
        facts.append(f"Enhanced Vegas holds a mean queue of {enh['queue_mean'].iloc[0]:.1f} "
                     "packets "
                     f"with W1/W2 = {enh['w_ratio'].iloc[0]:.2f}")
    if facts:
        section.paragraphs.append("flowshare: " + "; ".join(facts) + ".")
    for setting in SETTINGS:
        section.parts.append(_plot_setting(rows, setting))
    if len(vegas):
        section.parts.append(_plot_vegas_spread(rows))
    section.parts.append(_table(rows))
    return [section]


def intro(scale: str, options: Options) -> str:
    """One paragraph on what chapter 2 simulates."""
    return (f"Chapter 2: Fig 2.1's two connections on a 20 Mbit/s link with a {BUFFER}-packet "
            f"buffer and {PACKET_B}-byte packets, access links at {options.access_mbps:g} Mbit/s; "
            f"{REPLICATIONS[scale]} homogeneous Vegas runs for the spread of W1/W2; measures "
            f"from {options.settle_s:g} s after the join.")
