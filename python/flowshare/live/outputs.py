"""The files of a live run, in the shapes ``flowshare run`` writes.

``flows.csv`` has the simulation's columns for what a live run measures (the rest are left
out rather than filled with guesses), ``queues.csv`` the emulated bottleneck's counters and
``summary.json`` the same ``summary``/``aggregate``/``scenario`` keys, so that the tools that
read a simulation's directory read a live one too.
"""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .. import __version__, _core
from ..metrics import jain_index
from . import bottleneck
from .session import LivePlan

__all__ = ["FILES", "flows_table", "queues_table", "write"]

FILES = ("flows.csv", "queues.csv", "summary.json")


def flows_table(live: LivePlan, reports: Mapping[str, Any]) -> pd.DataFrame:
    """One row per flow: what its two ends counted."""
    sent = {int(r["flow"]): r for r in reports["sender"]}
    received = {int(r["flow"]): r for r in reports["receiver"]}
    rows = []
    for flow in live.flows:
        completion = math.nan
        if flow.runner == "kernel":
            tx = sent.get(flow.index, {})
            rx = received.get(flow.index, {})
            delivered = int(rx.get("bytes_delivered", 0))
            bytes_sent = int(tx.get("bytes_sent", 0))
            retransmits = int(tx.get("retransmits", 0))
            srtt = float(tx.get("srtt_s", math.nan))
            rtt_mean = math.nan
        else:
            source, destination = (reports["endpoints"][flow.index][side]
                                   for side in ("source", "destination"))
            delivered = int(destination["goodput_bytes"])
            bytes_sent = int(source["bytes_sent"])
            agent = source["agent"]
            retransmits = int(agent.get("retransmits", 0))
            reliable = source.get("reliable")
            if reliable is not None:
                # A reliable transfer (a sized TFRC flow): the blocks sent again, and when the
                # sender knew that every block had arrived.
                retransmits = int(reliable["retransmits"])
                if reliable["completion_s"] is not None:
                    completion = float(reliable["completion_s"])
            # A TCP sender reports its mean RTT sample, a TFRC sender its RTT estimate.
            rtt_ms = agent.get("rtt_mean_ms", agent.get("rtt_ms"))
            rtt_mean = math.nan if rtt_ms is None else float(rtt_ms) / 1e3
            srtt = math.nan
        active = live.duration_s - flow.start_s
        rows.append({
            "flow": flow.index,
            "name": flow.name,
            "src": f"s{flow.index}",
            "dst": f"d{flow.index}",
            "transport": flow.transport,
            # As in a simulation's table, a TFRC flow has no congestion-control algorithm.
            "cc": flow.cc if flow.transport == "tcp" else "",
            "stack": flow.runner,
            "start_s": flow.start_s,
            "size_bytes": flow.size_bytes,
            "bytes_sent": bytes_sent,
            "bytes_delivered": delivered,
            "retransmits": retransmits,
            "goodput_bps": delivered * 8 / active if active > 0 else math.nan,
            "rtt_mean_s": rtt_mean,
            "srtt_final_s": srtt,
            "completion_time_s": completion,
        })
    return pd.DataFrame(rows)


def queues_table(live: LivePlan, emulator: Mapping[str, Any]) -> pd.DataFrame:
    """The emulated bottleneck's two directions, as ``queues.csv`` has them."""
    link = live.scenario["topology"]["bottleneck"]
    rows = []
    rate = _core.parse_quantity("rate", link["rate"])
    delay = _core.parse_quantity("time", link["delay"])
    for i, (direction, frm, to) in enumerate(bottleneck.DIRECTIONS):
        d = emulator[direction]
        lateness = d["lateness"]
        rows.append({
            "queue": i,
            "link": bottleneck.NAME,
            "from": frm,
            "to": to,
            "rate_bps": rate,
            "delay_s": delay,
            "limit": link.get("queue", {}).get("limit"),
            "arrivals": d["arrivals"],
            "departures": d["departures"],
            "drops": d["drops"],
            "arrival_bytes": d["bytes"],
            "early_drops": d["early_drops"],
            "ecn_marks": d["marks"],
            "link_losses": d["link_losses"],
            "max_len_pkts": d["max_queue"],
            "left_in_link": d["left_in_link"],
            "not_ipv4": d["not_ipv4"],
            "malformed": d["malformed"],
            # With the event trace: packets of no flow, carried but left out of it.
            "no_flow": d.get("no_flow"),
            "lateness_p50_s": lateness["p50_ns"] / 1e9,
            "lateness_p99_s": lateness["p99_ns"] / 1e9,
            "lateness_max_s": lateness["max_ns"] / 1e9,
        })
    return pd.DataFrame(rows)


def write(directory: Path, live: LivePlan, reports: Mapping[str, Any]) -> list[str]:
    """Write the live run's files into ``directory``; return their names."""
    flows = flows_table(live, reports)
    queues = queues_table(live, reports["emulator"])
    flows.to_csv(directory / "flows.csv", index=False)
    queues.to_csv(directory / "queues.csv", index=False)
    goodputs = flows["goodput_bps"].to_numpy()
    jain = float(jain_index(goodputs)) if len(goodputs) else math.nan
    errors = [r["error"] for r in reports["sender"] if r.get("error")]
    malformed = sum(
        ends[side]["malformed_total"]
        for ends in reports["endpoints"].values() for side in ("source", "destination")
    )
    summary = {
        "summary": {
            "mode": "live",
            "stack": live.stack,
            "duration_s": live.duration_s,
            "warmup_s": 0.0,
            "kernel": platform.release(),
            "version": __version__,
            "errors": errors,
            "malformed_datagrams": malformed,
        },
        "aggregate": {
            "flows": len(flows),
            "goodput_bps": float(flows["bytes_delivered"].sum() * 8 / live.duration_s),
            "jain_index": None if math.isnan(jain) else jain,
            "drops": int(queues["drops"].sum()),
            "retransmits": int(flows["retransmits"].sum()),
        },
        "scenario": live.scenario,
    }
    with open(directory / "summary.json", "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    return list(FILES)
