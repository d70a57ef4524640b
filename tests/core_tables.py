"""Results in the shape of the native core, built by hand.

``core_result`` builds a dict in the shape ``_core.Simulation.finish()`` returns
(docs/adr/0002-python-boundary.md), so the Python side can be tested on known numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# A scenario small enough to simulate in a few milliseconds.
TINY_TOML = """\
[simulation]
duration = "2s"
seed = 3
sample_interval = "100ms"

[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "5ms", queue = { limit = 30 } }
access = { rate = "100Mbps", delay = "1ms" }

[[flows]]
name = "bulk"
count = 2
start_spacing = "10ms"
"""


def num(values: Any, dtype: str = "<f8") -> tuple[str, bytes]:
    """A numeric column as the core sends it: (dtype string, raw bytes)."""
    return (dtype, np.asarray(values, dtype=dtype).tobytes())


def core_result() -> dict[str, Any]:
    """Two flows, two queues, two samples of each time series."""
    return {
        "summary": {
            "duration_s": 1.0,
            "seed": 7,
            "events": 1234,
            "wall_s": 0.01,
            "scenario_hash": "abc123",
            "version": "0.1.0",
        },
        "flows": {
            "flow": num([0, 1], "<i8"),
            "name": ["bulk", "bulk"],
            "src": ["s0", "s1"],
            "dst": ["d0", "d1"],
            "cc": ["reno", "reno"],
            "recovery": ["newreno", "sack"],
            "bytes_delivered": num([300_000, 100_000], "<i8"),
            "goodput_bps": num([3e6, 1e6]),
            "rtt_mean_s": num([0.02, 0.03]),
            "retransmits": num([4, 1], "<i8"),
            "timeouts": num([0, 2], "<i8"),
            "drops": num([5, 1], "<i8"),
            "completion_time_s": num([np.nan, 0.5]),
        },
        "queues": {
            "queue": num([0, 1], "<i8"),
            "link": ["bottleneck", "bottleneck"],
            "from": ["r0", "r1"],
            "to": ["r1", "r0"],
            "rate_bps": num([1e7, 1e7]),
            "limit_unit": ["packets", "packets"],
            "drops": num([6, 0], "<i8"),
            "utilization": num([0.4, 0.01]),
            "mean_len_pkts": num([3.5, 0.0]),
            "max_len_pkts": num([9, 1], "<i8"),
        },
        "flow_series": {
            "time_s": num([0.5, 0.5, 1.0, 1.0]),
            "flow": num([0, 1, 0, 1], "<i8"),
            "cwnd": num([10.0, 4.0, 12.0, 5.0]),
            "ssthresh": num([np.inf, np.inf, 8.0, np.inf]),
            "srtt_s": num([0.02, 0.03, 0.021, 0.031]),
            "send_rate_bps": num([2e6, 1e6, 3e6, 1e6]),
            "goodput_bps": num([2e6, 0.9e6, 3e6, 1e6]),
        },
        "queue_series": {
            "time_s": num([0.5, 0.5, 1.0, 1.0]),
            "queue": num([0, 1, 0, 1], "<i8"),
            "len_pkts": num([3, 0, 4, 1], "<i8"),
            "len_bytes": num([4500, 0, 6000, 40], "<i8"),
        },
    }


def tiny_scenario_dict() -> dict[str, Any]:
    """The scenario ``core_result`` pretends to come from."""
    return {
        "simulation": {"duration": 1.0, "seed": 7},
        "topology": {"kind": "dumbbell"},
        "flows": [{"name": "bulk", "count": 2}],
    }
