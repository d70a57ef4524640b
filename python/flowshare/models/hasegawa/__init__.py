"""Analytic models of Hasegawa's thesis, one module per chapter.

G. Hasegawa, *Congestion and Fairness Control Mechanisms of TCP for the High-Speed
Internet*, PhD thesis, Osaka University, 2000. Section, equation, figure and table numbers
are the thesis's; ids such as ``hasegawa:A10`` name the resolutions of unclear points listed
in ``docs/resolutions.md``.

- :mod:`.ch2`: Tahoe/Reno cycle recursion, Vegas bounds, Enhanced Vegas centre.
- :mod:`.ch3`: RTO recursion, extra delay of a mis-retransmission.
- :mod:`.ch4`: ABR tuning formulas Q_max, ICR, X_RM, and the binary rate loop without TCP.
- :mod:`.ch5`: asymmetric-link fluid models, HTTP/1.0 and 1.1 delays.
- :mod:`.ch6`: RED/Reno, enhanced RED, Vegas behind FIFO/RED.

:data:`MODELS` lists the scalar models for the command line, name -> spec with keys
``func``, ``keys`` (argument -> (unit, default or None, description)), ``unit``, ``help``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from . import ch2, ch3, ch4, ch5, ch6
from .ch2 import (
    enhanced_vegas_centre,
    enhanced_vegas_window,
    tahoe_fixed_point,
    tahoe_throughput,
    tahoe_windows,
    vegas_queue_range,
    vegas_ratio_range,
    vegas_window_bound,
    vegas_window_bounds,
)
from .ch3 import extra_delay, extra_delay_rtts, rto_after, rto_series
from .ch4 import abr_icr, abr_q_max, abr_xrm
from .ch5 import (
    http_session_delay,
    http_transfer_delay,
    mean_document_delay,
    mean_throughput,
    tahoe_wmax,
    transfer_time,
    vegas_wmax,
)
from .ch6 import (
    enhanced_red_probabilities,
    red_reno_throughput,
    red_reno_window,
    timeout_probability,
    vegas_fifo_equilibrium,
    vegas_red_throughput,
)

__all__ = [
    "MODELS",
    "abr_icr",
    "abr_q_max",
    "abr_xrm",
    "ch2",
    "ch3",
    "ch4",
    "ch5",
    "ch6",
    "enhanced_red_probabilities",
    "enhanced_vegas_centre",
    "enhanced_vegas_window",
    "extra_delay",
    "extra_delay_rtts",
    "http_session_delay",
    "http_transfer_delay",
    "mean_document_delay",
    "mean_throughput",
    "red_reno_throughput",
    "red_reno_window",
    "rto_after",
    "rto_series",
    "tahoe_fixed_point",
    "tahoe_throughput",
    "tahoe_windows",
    "tahoe_wmax",
    "timeout_probability",
    "transfer_time",
    "vegas_fifo_equilibrium",
    "vegas_queue_range",
    "vegas_ratio_range",
    "vegas_red_throughput",
    "vegas_window_bound",
    "vegas_window_bounds",
    "vegas_wmax",
]


def _red_mean_window(p: Any) -> Any:
    """Mean RED/Reno window W_a [packets] (Eq 6.6)."""
    return red_reno_window(p)[1]


_LINK_KEYS: dict[str, tuple[str, Any, str]] = {
    "mu_f": ("packets/s", 4000.0, "downstream (data) link rate"),
    "mu_r": ("packets/s", 1000.0, "upstream (ACK) link rate"),
    "tau_f": ("s", 1e-3, "downstream one-way propagation delay"),
    "tau_r": ("s", 1e-3, "upstream one-way propagation delay"),
    "b_f": ("packets", 8.0, "downstream buffer"),
    "b_r": ("packets", 5.0, "upstream buffer (ACKs)"),
}
_VEGAS_KEYS: dict[str, tuple[str, Any, str]] = {
    "alpha": ("packets", 2.0, "Vegas lower threshold"),
    "beta": ("packets", 4.0, "Vegas upper threshold"),
}
_HTTP_KEYS: dict[str, tuple[str, Any, str]] = {
    "size": ("packets", None, "document size (1 Kbyte packets: Kbyte)"),
    "http": ("", 1.0, "HTTP version, 1.0 or 1.1"),
    "document": ("", 1, "position of the document on the connection (1 = first)"),
}

MODELS: dict[str, dict[str, Any]] = {
    "hasegawa-tahoe-window": {
        "func": tahoe_fixed_point,
        "keys": {
            "tau_j": ("s", None, "this connection's one-way propagation delay"),
            "tau_other": ("s", None, "the other connection's one-way propagation delay"),
            "w_loss": ("packets", None, "total window at buffer overflow W_l"),
        },
        "unit": "packets",
        "help": "Tahoe/Reno window at loss in the limit cycle, corrected Eq 2.7 fixed point",
    },
    "hasegawa-vegas-bounds": {
        "func": vegas_window_bound,
        "keys": {
            "tau": ("s", None, "one-way propagation delay of the connection"),
            "mu": ("packets/s", None, "bottleneck rate"),
            "l2": ("packets", None, "shared queue after the second connection joins"),
            "threshold": ("packets", None, "alpha for the lower bound, beta for the upper"),
            "base_queue": ("packets", 0.0, "queue inside the base RTT (0 for connection 1, l1 for 2)"),
        },
        "unit": "packets",
        "help": "Vegas window bound of Eqs 2.24/2.25",
    },
    "hasegawa-enhanced-vegas-window": {
        "func": enhanced_vegas_window,
        "keys": {
            "tau": ("s", None, "one-way propagation delay"),
            "mu": ("packets/s", None, "bottleneck rate"),
            "delta": ("packets", 3.0, "Enhanced Vegas threshold"),
        },
        "unit": "packets",
        "help": "Enhanced Vegas oscillation centre tau*mu + delta (Eqs 2.34-2.36)",
    },
    "hasegawa-rto": {
        "func": rto_after,
        "keys": {
            "n": ("samples", None, "number of constant RTT samples"),
            "rtt": ("s", None, "the constant RTT"),
            "a0": ("s", None, "initial smoothed RTT"),
            "d0": ("s", None, "initial mean deviation"),
        },
        "unit": "s",
        "help": "Jacobson RTO after n samples of a constant RTT (Eqs 3.1-3.7)",
    },
    "hasegawa-rto-delay": {
        "func": extra_delay,
        "keys": {
            "window": ("bytes", None, "maximum window W"),
            "packet": ("bytes", None, "packet size m"),
            "tau": ("s", None, "one-way propagation delay"),
            "bandwidth": ("bit/s", None, "link rate BW"),
        },
        "unit": "s",
        "help": "extra delay D of one mis-retransmission (Eqs 3.10, 3.14, 3.15)",
    },
    "hasegawa-rto-delay-rtts": {
        "func": extra_delay_rtts,
        "keys": {
            "window": ("bytes", None, "maximum window W"),
            "packet": ("bytes", None, "packet size m (same unit as W)"),
        },
        "unit": "rtt",
        "help": "extra delay of one mis-retransmission in round-trip times (Eq 3.14)",
    },
    "hasegawa-abr-qmax": {
        "func": abr_q_max,
        "keys": {
            "q_threshold": ("cells", None, "switch queue threshold Q (half the buffer)"),
            "air": ("cells/ms", None, "additive increase per backward RM cell, AIRF*PCR/N_RM"),
            "rdf": ("", 16.0, "rate decrease factor"),
            "n_vc": ("", 10.0, "number of virtual channels"),
            "bw": ("cells/ms", 353.2, "link rate"),
            "tau": ("ms", None, "propagation delay"),
        },
        "unit": "cells",
        "help": "maximum ABR switch queue, Eq 4.5 as printed",
    },
    "hasegawa-abr-icr": {
        "func": abr_icr,
        "keys": {
            "buffer": ("cells", None, "switch buffer BL"),
            "q_max": ("cells", None, "maximum queue (Eq 4.5)"),
            "tau": ("ms", None, "propagation delay"),
            "bw": ("cells/ms", 353.2, "link rate"),
            "pcr": ("cells/ms", 353.2, "peak cell rate"),
        },
        "unit": "cells/ms",
        "help": "initial cell rate for a new ABR connection (Eq 4.6)",
    },
    "hasegawa-abr-xrm": {
        "func": abr_xrm,
        "keys": {
            "icr": ("cells/ms", None, "initial cell rate"),
            "q_max": ("cells", None, "maximum queue (Eq 4.5)"),
            "tau": ("ms", None, "propagation delay"),
            "bw": ("cells/ms", 353.2, "link rate"),
            "n_rm": ("cells", 32.0, "cells per forward RM cell"),
        },
        "unit": "RM cells",
        "help": "forward RM cells without feedback before backing off (Eq 4.7)",
    },
    "hasegawa-tahoe-wmax": {
        "func": tahoe_wmax,
        "keys": dict(_LINK_KEYS),
        "unit": "packets",
        "help": "Tahoe window at loss on an asymmetric link, cases 1 and 2 (Eq 5.7)",
    },
    "hasegawa-vegas-wmax": {
        "func": vegas_wmax,
        "keys": {**_LINK_KEYS, **_VEGAS_KEYS},
        "unit": "packets",
        "help": "Vegas converged window or window at loss, cases 1' and 2'",
    },
    "hasegawa-tahoe-throughput": {
        "func": partial(mean_throughput, "tahoe"),
        "keys": dict(_LINK_KEYS),
        "unit": "packets/s",
        "help": "mean Tahoe throughput on an asymmetric link (Eq 5.8)",
    },
    "hasegawa-vegas-throughput": {
        "func": partial(mean_throughput, "vegas"),
        "keys": {**_LINK_KEYS, **_VEGAS_KEYS},
        "unit": "packets/s",
        "help": "mean Vegas throughput on an asymmetric link (Eq 5.8)",
    },
    "hasegawa-http-delay": {
        "func": partial(http_transfer_delay, tcp="tahoe"),
        "keys": {**_HTTP_KEYS, **_LINK_KEYS},
        "unit": "s",
        "help": "HTTP document delay over TCP Tahoe, set-up plus transfer (Eqs 5.1, 5.10, 5.11)",
    },
    "hasegawa-http-delay-vegas": {
        "func": partial(http_transfer_delay, tcp="vegas"),
        "keys": {**_HTTP_KEYS, **_LINK_KEYS, **_VEGAS_KEYS},
        "unit": "s",
        "help": "HTTP document delay over TCP Vegas, set-up plus transfer (Eqs 5.1, 5.10, 5.11)",
    },
    "hasegawa-red-window": {
        "func": _red_mean_window,
        "keys": {"p": ("", 0.02, "RED drop probability")},
        "unit": "packets",
        "help": "mean Reno window behind RED, (3/4) sqrt(8/(3p)) (Eqs 6.5, 6.6)",
    },
    "hasegawa-red-timeout-probability": {
        "func": timeout_probability,
        "keys": {
            "p": ("", 0.02, "RED drop probability"),
            "w_a": ("packets", None, "window (rounded to whole packets)"),
        },
        "unit": "",
        "help": "probability of two or more losses in a window (Eq 6.10)",
    },
}
