"""``flowshare compare``: two run directories side by side (a simulation and a live run, or
any two runs of the same scenario): each flow's goodput and retransmissions, the aggregate
goodput and Jain's fairness index, and their differences."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..metrics import jain_index

__all__ = ["Comparison", "compare", "read_run"]


@dataclass(frozen=True)
class Comparison:
    """Per-flow rows and the aggregate measures of two runs, ``a`` and ``b``."""

    flows: pd.DataFrame
    goodput_a_bps: float
    goodput_b_bps: float
    jain_a: float
    jain_b: float

    @property
    def goodput_difference(self) -> float:
        """(b − a) / a of the aggregate goodput."""
        return (self.goodput_b_bps - self.goodput_a_bps) / self.goodput_a_bps

    @property
    def jain_difference(self) -> float:
        """b − a of Jain's index."""
        return self.jain_b - self.jain_a

    def lines(self, a: str = "a", b: str = "b") -> list[str]:
        """The comparison as printed lines."""
        head = f"{'flow':>4}  {'name':<12} {'cc':<8} {a + ' Mbit/s':>14} {b + ' Mbit/s':>14} {'diff':>8}"
        out = [head]
        for row in self.flows.itertuples():
            out.append(
                f"{row.flow:>4}  {str(row.name)[:12]:<12} {str(row.cc)[:8]:<8} "
                f"{row.goodput_a_bps / 1e6:>14.3f} {row.goodput_b_bps / 1e6:>14.3f} "
                f"{_percent(row.difference):>8}"
            )
        out.append(
            f"goodput summed over the flows {self.goodput_a_bps / 1e6:.3f} against {self.goodput_b_bps / 1e6:.3f} "
            f"Mbit/s ({_percent(self.goodput_difference)}); Jain index {self.jain_a:.4f} against "
            f"{self.jain_b:.4f} ({self.jain_difference:+.4f})"
        )
        return out


def _percent(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:+.1f}%"


def read_run(directory: Path) -> pd.DataFrame:
    """The ``flows.csv`` of a run directory (one written by ``flowshare run`` or ``live``)."""
    if not directory.is_dir():
        raise FileNotFoundError(f"run directory not found: {directory}")
    path = directory / "flows.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{directory}: no flows.csv (not a run directory)")
    flows = pd.read_csv(path, keep_default_na=False, na_values={"goodput_bps": ["", "nan"]})
    missing = {"flow", "name", "cc", "goodput_bps"} - set(flows.columns)
    if missing:
        raise ValueError(f"{path}: missing columns {', '.join(sorted(missing))}")
    return flows


def compare(a_dir: Path, b_dir: Path) -> Comparison:
    """Compare the runs in ``a_dir`` and ``b_dir``, which must have the same flows."""
    a, b = read_run(a_dir), read_run(b_dir)
    if list(a["flow"]) != list(b["flow"]) or list(a["cc"]) != list(b["cc"]):
        raise ValueError(
            f"{a_dir} and {b_dir} have different flows ({_first_difference(a, b)}); "
            "compare runs of the same scenario"
        )
    flows = pd.DataFrame({
        "flow": a["flow"],
        "name": a["name"],
        "cc": a["cc"],
        "transport": a["transport"] if "transport" in a else "tcp",
        "goodput_a_bps": a["goodput_bps"],
        "goodput_b_bps": b["goodput_bps"],
    })
    flows["difference"] = (flows.goodput_b_bps - flows.goodput_a_bps) / flows.goodput_a_bps
    for name in ("retransmits",):
        if name in a and name in b:
            flows[f"{name}_a"] = a[name]
            flows[f"{name}_b"] = b[name]
    return Comparison(
        flows=flows,
        goodput_a_bps=float(a["goodput_bps"].sum()),
        goodput_b_bps=float(b["goodput_bps"].sum()),
        jain_a=float(jain_index(a["goodput_bps"].to_numpy())),
        jain_b=float(jain_index(b["goodput_bps"].to_numpy())),
    )


def _first_difference(a: pd.DataFrame, b: pd.DataFrame) -> str:
    """Where two flow tables first differ in their flows or algorithms, in a few words."""
    if len(a) != len(b):
        return f"{len(a)} and {len(b)} flows"
    for (flow_a, cc_a), (flow_b, cc_b) in zip(
        zip(a["flow"], a["cc"], strict=True), zip(b["flow"], b["cc"], strict=True), strict=True
    ):
        if flow_a != flow_b:
            return f"flow {flow_a} against flow {flow_b} in the same row"
        if cc_a != cc_b:
            none = "no congestion control"
            return f"flow {flow_a} runs {cc_a or none} against {cc_b or none}"
    return "none found"


def plot(comparison: Comparison, path: Path, a: str, b: str) -> None:
    """A bar chart of each flow's goodput in the two runs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    flows = comparison.flows
    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(flows) + 2), 3.2))
    x = range(len(flows))
    ax.bar([i - 0.2 for i in x], flows.goodput_a_bps / 1e6, width=0.4, label=a)
    ax.bar([i + 0.2 for i in x], flows.goodput_b_bps / 1e6, width=0.4, label=b)
    ax.set_xticks(list(x), [f"{f} {c}" for f, c in zip(flows.flow, flows.cc, strict=True)])
    ax.set_ylabel("goodput (Mbit/s)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)

