"""Property-based fuzz of the Python API and the command line (docs/reliability.md, "Fuzzing").

Scenarios built with :mod:`flowshare.scenario`'s builders from plausible, extreme and
ill-typed values, and the shipped scenarios mutated at random, go to ``flowshare.validate`` and,
when small, to ``flowshare.run``: the answer is a :class:`flowshare.ConfigError` with a one-line
message, or results that conserve packets. The command line gets random arguments and random
scenario files: its exit status is 0, 1 or 2, a failure is one line ``flowshare: error: ...`` on
standard error, and no hidden staging directory is left behind.

The examples are derandomized (one fixed sequence); ``FLOWSHARE_FUZZ_CASES`` sets the number of
examples of each test (``make fuzz`` runs many more than ``make test``).
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import flowshare
from flowshare import cli
from flowshare import scenario as sc

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def _cases(default: int) -> int:
    text = os.environ.get("FLOWSHARE_FUZZ_CASES")
    return default if text is None else int(text)


def fuzz(default_examples: int) -> settings:
    """Derandomized settings (one fixed sequence of examples) with ``FLOWSHARE_FUZZ_CASES`` or
    ``default_examples`` examples."""
    return settings(
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        max_examples=_cases(default_examples),
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.large_base_example,
            HealthCheck.function_scoped_fixture,
        ],
    )


# ---------------------------------------------------------------------------------------------
# Quantities of a normalized scenario, and which scenarios are small enough to run

TIME = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "min": 60.0, "s": 1.0, "h": 3600.0}
RATE = {"bps": 1.0, "Kbps": 1e3, "kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9}
SIZE = {"B": 1, "KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024, "MiB": 2**20, "GiB": 2**30}
_QUANTITY = re.compile(r"\s*([0-9.eE+-]+)\s*(\S*)\s*")

#: A run is cut to at most this much simulated time, seconds.
RUN_CAP_S = 0.5


def quantity(value: Any, units: dict[str, float]) -> float:
    """A quantity (``"500ms"``, ``"10Mbps"``, ``"1460B"``) in its base unit."""
    if isinstance(value, int | float):
        return float(value)
    match = _QUANTITY.fullmatch(value)
    assert match is not None and match[2] in units, value
    return float(match[1]) * units[match[2]]


def _values_of(tree: Any, key: str) -> Iterator[Any]:
    """Every value stored under ``key`` anywhere in ``tree``."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            if k == key:
                yield v
            yield from _values_of(v, key)
    elif isinstance(tree, list):
        for v in tree:
            yield from _values_of(v, key)


def small_enough(n: dict[str, Any]) -> bool:
    """Whether a normalized scenario is cheap enough to simulate here: a few hundred thousand
    packets and a few MB of results at most. The rule of ``small_enough`` in
    crates/flowshare-core/tests/fuzz_scenarios.rs, in one place so that a resource estimate
    can replace it."""
    max_rate, max_flows, max_packet_rate, max_samples = 1e9, 50, 250_000, 10_000
    duration = quantity(n["simulation"]["duration"], TIME)
    interval = quantity(n["simulation"]["sample_interval"], TIME)
    if duration > 2 or (interval > 0 and duration / interval > max_samples):
        return False
    groups = n["flows"]
    if sum(g["count"] for g in groups) > max_flows or len(groups) > max_flows:
        return False
    # Every link, LAN, override and change: their rates and queue quanta.
    links = [n["topology"], n.get("changes", [])]
    links += [g.get(side) for g in groups for side in ("src_access", "dst_access")]
    rates = [quantity(r, RATE) for r in _values_of(links, "rate")]
    quanta = [q for q in _values_of(links, "quantum") if isinstance(q, str)]
    if any(quantity(q, SIZE) < 64 for q in quanta):
        return False
    smallest = math.inf
    for g in groups:
        tcp = g["tcp"]
        smallest = min(smallest, quantity(tcp["mss"], SIZE) + quantity(tcp["header"], SIZE))
        if (
            tcp["initial_window"] > 10_000
            or quantity(tcp["rto_initial"], TIME) < 1e-3
            or quantity(tcp["rto_min"], TIME) < 1e-3
            or (tcp["cc"]["algo"] == "multcp" and not tcp["cc"]["n"] <= 100)
        ):
            return False
        source = g.get("source")
        if source is not None:
            packet = quantity(source["packet_size"], SIZE) + quantity(source["header"], SIZE)
            smallest = min(smallest, packet)
            source_rates = [source.get("rate"), source.get("peak")]
            source_rates += [point[1] for point in source.get("schedule", [])]
            for r in source_rates:
                if r is not None and (
                    quantity(r, RATE) > max_rate or quantity(r, RATE) / (8 * packet) > max_packet_rate
                ):
                    return False
            periods = [source.get("on"), source.get("off")]
            if any(p is not None and quantity(p, TIME) < 1e-3 for p in periods):
                return False
            if not source.get("fps", 0) <= 1000:
                return False
        arrivals = g.get("arrivals")
        if arrivals is not None and (
            not arrivals.get("rate", 0) <= 1000
            or arrivals.get("users", 0) > 1000
            or arrivals.get("sources", 0) > 1000
            or len(arrivals.get("transfers", [])) > 1000
            or "file" in arrivals
        ):
            return False
    fastest = max(rates, default=0.0)
    return fastest <= max_rate and fastest / (8 * smallest) <= max_packet_rate


def shortened(n: dict[str, Any]) -> dict[str, Any]:
    """A normalized scenario cut to at most :data:`RUN_CAP_S`, without the link changes after
    that."""
    n = copy.deepcopy(n)
    end = min(quantity(n["simulation"]["duration"], TIME), RUN_CAP_S)
    n["simulation"]["duration"] = f"{round(end * 1e9)}ns"
    if "changes" in n:
        n["changes"] = [c for c in n["changes"] if quantity(c["at"], TIME) < end]
    return n


def assert_conserves(result: flowshare.RunResult, what: str) -> None:
    f = result.flows
    accounted = f["packets_received"] + f["drops"] + f["link_losses"] + f["in_network_end"]
    assert (f["packets_sent"] == accounted).all(), f"flows do not conserve packets: {what}"
    q = result.queues
    accounted = q["departures"] + q["drops"] + q["len_end_pkts"]
    assert (q["arrivals"] == accounted).all(), f"queues do not conserve packets: {what}"


def is_one_line(message: str) -> bool:
    return bool(message.strip()) and len(message.splitlines()) == 1


def validate_and_run(scenario: Any, pcap_dir: Path) -> None:
    """The property of the API: a one-line ConfigError, or a run that conserves packets."""
    scenario = materialized(scenario)
    try:
        normalized = flowshare.validate(scenario)
    except flowshare.ConfigError as exc:
        assert is_one_line(str(exc)), repr(str(exc))
        event("refused")
        return
    run = shortened(normalized)
    if small_enough(run):
        result = flowshare.run(run, progress=False, pcap_dir=pcap_dir)
        assert_conserves(result, repr(run)[:2000])
        event("ran")
    else:
        event("valid, too large to run")


# ---------------------------------------------------------------------------------------------
# Values

#: Text of any characters but lone surrogates (those have a test of their own); a message shows
#: a line break in a key or a name escaped.
_TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12)

ODD_STRINGS = [
    "", " ", "1e300s", "-1ms", "0s", "1e-30s", "0bps", "1e30bps", "-5Mbps", "0B", "1e20B",
    "1.5B", "NaNms", "infs", "1e3ms", "10 Mbps", "10mbps", "1µs", "0.5us", "1e9s", "100Gbps",
    "10Tbps", "20KB", "2s", "64", "true", "auto", "ramp", "r0", "flow", "é", "\x7f",
    "\ud800", "x" * 65, "x" * 100_000, "1e308Gbps", "+5ms",
]
ODD_NUMBERS = [
    0, -1, 1, 2, 7, 255, 65_536, 2**32, 2**63, 2**64, 2**70, -(2**63) - 1,
    0.0, -0.0, 0.5, 1.5, 1e300, -1e300, 1e-300, math.nan, math.inf, -math.inf, 1e9, 1e20,
]
#: Keys whose values size the network or the workload: they get small or out-of-range values
#: only. Millions of flows or of closed-loop users take gigabytes as the scenario is built,
#: before the resource guard can refuse it (docs/reliability.md, "Fuzzing").
SIZING = {"count", "users", "routers", "limit", "buckets", "rwnd", "initial_window"}
SIZING_NUMBERS = [0, -1, 1, 2, 7, 2**32, 2**63, 2**64, 1.5, math.nan, math.inf, 1e300]
ODD_TABLES = [{}, {"kind": "red"}, {"rate": "10Mbps", "delay": "1ms"}, {"algo": "multcp", "n": 1e9}]


class Special:
    """A value made when used (so that a failing example prints briefly)."""

    def __init__(self, name: str, make: Callable[[], Any]) -> None:
        self.name, self.make = name, make

    def __repr__(self) -> str:
        return self.name


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"k": value}
    return value


SPECIALS = [
    Special("bytes", lambda: b"10Mbps"),
    Special("set", lambda: {1, 2}),
    Special("tuple-key", lambda: {(1, 2): 3}),
    Special("int-key", lambda: {1: 2}),
    Special("deep-200", lambda: _deep(200)),
    Special("deep-5000", lambda: _deep(5000)),
]


_STRATEGIES: dict[str, st.SearchStrategy[Any]] = {}


def _once(name: str, make: Callable[[], st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """The strategy ``name``, made once: a strategy made anew for every draw costs more than
    the simulation."""
    if name not in _STRATEGIES:
        _STRATEGIES[name] = make()
    return _STRATEGIES[name]


def odd_values(*, key: Any) -> st.SearchStrategy[Any]:
    """Values to put in place of the value of ``key`` (or to add under it)."""
    sizing = key in SIZING
    return _once(repr(("odd", sizing)), lambda: _odd_values(sizing=sizing))


def _odd_values(*, sizing: bool) -> st.SearchStrategy[Any]:
    options = [
        st.sampled_from(ODD_STRINGS),
        st.sampled_from(SIZING_NUMBERS if sizing else ODD_NUMBERS),
        st.integers(-3, 70),
        st.booleans(),
        st.none(),
        _TEXT,
        st.sampled_from(ODD_TABLES),
        st.sampled_from(SPECIALS),
        st.lists(st.sampled_from(["1s", "10Mbps", 1, "a", {}]), max_size=3),
    ]
    if not sizing:
        options.append(st.floats())
    return st.one_of(options)


def fresh(value: Any) -> Any:
    """A value to put in a document: a copy, so that later mutations leave the constants here
    alone; a :class:`Special` stays one until :func:`materialized`."""
    return value if isinstance(value, Special) else copy.deepcopy(value)


def materialized(value: Any) -> Any:
    """A document with its :class:`Special` values made."""
    if isinstance(value, Special):
        return value.make()
    if isinstance(value, dict):
        return {k: materialized(v) for k, v in value.items()}
    if isinstance(value, list):
        return [materialized(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# Mutations of scenario documents

WORDS = [
    "droptail", "red", "priority", "drr", "enhanced_red", "fq_codel", "dumbbell", "parking_lot",
    "graph", "tahoe", "reno", "newreno", "sack", "cubic", "vegas", "htcp", "multcp", "poisson",
    "closed_loop", "trace", "exponential", "pareto", "lognormal", "cbr", "on_off", "vbr",
    "bernoulli", "gilbert_elliott", "periodic", "forward", "reverse", "both", "udp", "tcp",
    "packets", "bytes", "auto", "r0", "r1",
]
KEYS = [
    "colour", "x", "", "_", "a b", "ü", "1", "rate", "delay", "kind", "queue", "limit", "count",
    "tcp", "seed", "reverse", "loss", "name", "size", "start", "stop", "users", "arrivals",
    "source", "changes", "trace",
]
FACTORS = [0.0, -1.0, 0.5, 2.0, 10.0, 1e3, 1e-3, 1e6, 1e9, 1e-9]
EDITS: dict[str, Callable[[str], str]] = {
    "append": lambda s: s + "x",
    "drop-last": lambda s: s[:-1],
    "upper": str.upper,
    "swap": lambda s: s[1:2] + s[:1] + s[2:],
    "space": lambda s: " " + s,
    "dash": lambda s: s.replace("_", "-") if "_" in s else s + "_",
}


def _paths(doc: Any) -> list[tuple[Any, ...]]:
    """The path of every node below the root, down to a depth of 20 (a value nested deeper is
    one of the odd values, not worth mutating again)."""
    paths: list[tuple[Any, ...]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), doc)]
    while stack:
        prefix, value = stack.pop()
        if len(prefix) >= 20:
            continue
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for k, v in list(items):
            paths.append((*prefix, k))
            stack.append(((*prefix, k), v))
    return paths


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def _last_key(path: tuple[Any, ...]) -> Any:
    return next((k for k in reversed(path) if isinstance(k, str)), None)


def _scaled(value: Any, factor: float) -> Any:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        product = value * factor
        return int(product) if factor == int(factor) and abs(product) < 9e18 else product
    if isinstance(value, float):
        return value * factor
    if isinstance(value, str):
        match = re.match(r"[0-9.]+", value)
        if match:
            try:
                return f"{float(match[0]) * factor:g}{value[match.end():]}"
            except ValueError:
                return None
    return None


def mutate(draw: Callable[[st.SearchStrategy[Any]], Any], doc: dict[str, Any]) -> None:
    """One random mutation of ``doc``, in place."""
    kind = draw(st.sampled_from(["delete", "replace", "insert", "duplicate", "word", "scale"]))
    paths = _paths(doc)

    def pick(keep: Callable[[Any], bool]) -> tuple[Any, ...] | None:
        chosen = [p for p in paths if keep(_get(doc, p))]
        return draw(st.sampled_from(chosen)) if chosen else None

    if kind == "delete" and paths:
        path = draw(st.sampled_from(paths))
        del _get(doc, path[:-1])[path[-1]]
    elif kind == "replace" and paths:
        path = draw(st.sampled_from(paths))
        _get(doc, path[:-1])[path[-1]] = fresh(draw(odd_values(key=_last_key(path))))
    elif kind == "insert":
        tables = [(), *(p for p in paths if isinstance(_get(doc, p), dict))]
        path = draw(st.sampled_from(tables))
        key = draw(st.one_of(st.sampled_from(KEYS), _TEXT))
        _get(doc, path)[key] = fresh(draw(odd_values(key=key)))
    elif kind == "duplicate":
        path = pick(lambda v: isinstance(v, list) and len(v) > 0)
        if path is not None:
            array = _get(doc, path)
            i = draw(st.integers(0, len(array) - 1))
            array.insert(i, array[i])  # the same object twice: JSON writes it twice
    elif kind == "word":
        path = pick(lambda v: isinstance(v, str))
        if path is not None:
            old = _get(doc, path)
            edit = draw(st.sampled_from([*EDITS, *WORDS]))
            _get(doc, path[:-1])[path[-1]] = EDITS[edit](old) if edit in EDITS else edit
    elif kind == "scale":
        path = pick(lambda v: _scaled(v, 2.0) is not None)
        if path is not None:
            factor = draw(st.sampled_from(FACTORS))
            if _last_key(path) in SIZING:
                factor = max(min(factor, 10.0), -10.0)
            _get(doc, path[:-1])[path[-1]] = _scaled(_get(doc, path), factor)


def _shipped() -> list[tuple[str, dict[str, Any]]]:
    """The shipped scenarios that need no other file, as dicts, cut to at most :data:`RUN_CAP_S` with
    their link changes moved in proportion, so that most of them run."""
    docs = []
    for path in sorted(SCENARIOS.glob("*.toml")):
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError:
            # TOML 1.1 (an inline table over several lines), which tomllib does not read yet.
            doc = flowshare.load_scenario(path)
        if any(True for _ in _values_of(doc, "file")):
            continue
        duration = quantity(doc["simulation"]["duration"], TIME)
        if duration > RUN_CAP_S:
            doc["simulation"]["duration"] = f"{RUN_CAP_S}s"
            for change in doc.get("changes", []):
                change["at"] = f"{quantity(change['at'], TIME) * RUN_CAP_S / duration:.6f}s"
        docs.append((path.name, doc))
    assert len(docs) >= 5
    return docs


SHIPPED = _shipped()


@st.composite
def mutated_shipped(draw: Any) -> dict[str, Any]:
    name, doc = draw(st.sampled_from(SHIPPED))
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 4))):
        mutate(draw, doc)
    return doc


# ---------------------------------------------------------------------------------------------
# Scenarios from the builders


@st.composite
def _weighted(draw: Any, choices: tuple[tuple[int, st.SearchStrategy[Any]], ...]) -> Any:
    r = draw(st.integers(0, sum(weight for weight, _ in choices) - 1))
    for weight, strategy in choices:
        if r < weight:
            return draw(strategy)
        r -= weight
    raise AssertionError("unreachable")


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, each with its weight."""
    return _weighted(choices)


def mostly(valid: list[Any], odd: list[Any], *, key: str = "", generic: bool = True) -> st.SearchStrategy[Any]:
    """A valid value 30 times in 31, else one of ``odd`` or (``generic``) any odd or ill-typed
    value: a built scenario has some 25 of them, and about half of the scenarios are valid.
    A builder that reads its argument (``priority``'s classes) gets no generic value."""
    if not generic:
        return _once(
            repr(("mostly", valid, odd)),
            lambda: weighted((9, st.sampled_from(valid)), (1, st.sampled_from(odd))),
        )
    return _once(
        repr(("mostly", valid, odd, key)),
        lambda: weighted(
            (60, st.sampled_from(valid)),
            (1, st.sampled_from(odd)),
            (1, odd_values(key=key)),
        ),
    )


TIMES = mostly(["0s", "1ms", "10ms", "100ms", "0.3s", "250 us"], ["-1ms", 0.01, "1e300s", "1e-30s", "", "5"])
RATES = mostly(["64Kbps", "1Mbps", "10Mbps", "100Mbps", "1Gbps", "10 Mbit/s"], [2e6, "10MB/s", "0bps", "1e30bps", "-5Mbps", "10Tbps"])
SIZES = mostly(["1B", "40B", "536B", "1460B", "20KB", "1MB"], ["0B", "1e20B", "-1B", "1.5B"])
LIMITS = mostly([1, 5, 30, 100, "30000B"], [0, -1, 2**32, "0B", 1.5], key="limit")
NAMES = mostly(["a", "b", "bulk", "web"], ["", "x" * 65, "a\x01", 1])


def optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``None`` (the builder leaves the field out) or a value."""
    return _once(f"optional {id(strategy)}", lambda: st.none() | strategy)


@st.composite
def queues(draw: Any) -> Any:
    kind = draw(mostly(["none", "droptail", "red", "drr", "fq_codel", "priority", "enhanced_red"], ["blue"]))
    limit = draw(LIMITS)
    if kind == "none":
        return None
    if kind == "droptail":
        return sc.droptail(limit=limit)
    if kind == "red":
        red = {"kind": "red", "limit": limit}
        for field, valid, odd in [
            ("min_th", [5, "auto"], [0, -3]),
            ("max_th", [15, "auto"], [2]),
            ("max_p", [0.1, 0.5], [0, 1.5]),
            ("w_q", [0.002, "auto"], [2]),
            ("mode", ["packets", "bytes"], ["bits"]),
            ("ecn", [True, False], [1]),
        ]:
            if draw(st.booleans()):
                red[field] = draw(mostly(valid, odd))
        return red
    if kind == "drr":
        return sc.drr(
            limit=limit,
            quantum=draw(optional(mostly(["1500B", "600B", 2], ["64B", 0, "0B"]))),
            queues=draw(optional(mostly([[sc.qclass("a", limit=10)], [sc.qclass("b", quantum="3000B")]], [[], [{}]], generic=False))),
            aqm=draw(optional(mostly(["none", "red", "enhanced_red"], ["blue"]))),
            overflow=draw(optional(mostly(["drop_arrival", "push_out_longest"], ["drop"]))),
        )
    if kind == "fq_codel":
        return sc.fq_codel(
            limit=draw(optional(mostly([100, 10240], [0], key="limit"))),
            quantum=draw(optional(mostly(["1514B", "300B"], ["64B", "0B"]))),
            target=draw(optional(mostly(["5ms", "1ms"], ["0s"]))),
            buckets=draw(optional(mostly([1, 1024], [0, 65_537, 10**9], key="buckets"))),
        )
    if kind == "priority":
        return sc.priority(
            draw(mostly([[sc.qclass("a", limit=5), sc.qclass("b")], [sc.qclass("x")]], [[]], generic=False)),
            limit=draw(optional(mostly([20, 200], [0], key="limit"))),
        )
    return sc.enhanced_red(limit=limit, flow_p=draw(optional(mostly([{"a": 0.1}], [{"a": 2.0}], generic=False))))


LOSSES = optional(
    mostly(
        [
            {"model": "bernoulli", "p": 0.01},
            {"model": "gilbert_elliott", "p_gb": 0.01, "p_bg": 0.3},
            {"model": "burst", "p": 0.01, "length": 3},
            {"model": "two_state", "q": 0.01, "length": 2},
            {"model": "periodic", "every": 10, "offset": 3},
            {"model": "schedule", "steps": [["0s", 0.01], ["0.2s", 0.1]], "pattern": "random"},
        ],
        [{"model": "bernoulli", "p": 2}, {"model": "periodic", "every": 0}, {"model": "gilbert"}],
    )
)
REVERSE = optional(mostly([{}, {"rate": "64Kbps"}, {"delay": "30ms", "queue": {"limit": 5}}], [{"los": 1}]))


@st.composite
def links(draw: Any, **ends: Any) -> Any:
    return sc.link(
        rate=draw(RATES), delay=draw(TIMES), queue=draw(queues()), loss=draw(LOSSES), reverse=draw(REVERSE), **ends
    )


TCP = st.fixed_dictionaries(
    {},
    optional={
        "recovery": mostly(["tahoe", "reno", "newreno", "sack"], ["newrenoo", "SACK"]),
        "cc": mostly(
            ["reno", "cubic", "vegas", "htcp", "bic", {"algo": "multcp", "n": 4}, {"algo": "scalable"}],
            ["cubicc", {"algo": "multcp", "n": 0.5}, {"algo": "multcp", "n": 1e9}, {"n": 2}],
        ),
        "mss": SIZES,
        "initial_window": mostly([1, 2, 10, 2.5], [0, -1, 1e8, 1e6]),
        "rwnd": mostly([1, 64, 100000], [0, -5], key="rwnd"),
        "delayed_ack": st.booleans(),
        "handshake": st.booleans(),
        "ecn": st.booleans(),
        "rto_min": TIMES,
        "rto_initial": TIMES,
        "timer_tick": TIMES,
        "max_backoff": mostly([1, 64], [0]),
        "send_jitter": TIMES,
        "sack_recovery": mostly(["rfc6675", "rate_halving", "prr"], ["linux"]),
        "force_timeout": mostly([{"segment": 3, "after": "1ms"}], [{"segment": 3}, {"after": "0s", "segment": 1}]),
    },
)
SOURCES = mostly(
    [
        {"kind": "cbr", "rate": "1Mbps"},
        {"kind": "cbr", "schedule": [["0.1s", "2Mbps"], ["0.3s", "0Mbps", "ramp"]]},
        {"kind": "poisson", "rate": "2Mbps", "jitter": "1ms"},
        {"kind": "on_off", "rate": "2Mbps", "on": "50ms", "off": "50ms", "periods": "pareto", "shape": 1.5},
        {"kind": "vbr", "rate": "2Mbps", "peak": "6Mbps"},
    ],
    [
        {"kind": "cbr", "rate": "1Mbps", "packet_size": "0B"},
        {"kind": "cbr", "schedule": [["0.3s", "2Mbps"], ["0.1s", "1Mbps"]]},
        {"kind": "on_off", "rate": "2Mbps", "shape": 1},
        {"kind": "vbr", "rate": "2Mbps", "peak": "1Mbps"},
        {"kind": "vbr", "rate": "1Mbps", "fps": 0},
        {"kind": "laser"},
    ],
)
ARRIVALS = mostly(
    [
        {"process": "poisson", "rate": 20, "size": {"dist": "exponential", "mean": "20KB"}},
        {"process": "closed_loop", "users": 5, "think": "50ms", "size": {"dist": "pareto", "scale": "4KB", "shape": 1.2}},
        {"process": "trace", "transfers": [["10ms", "20KB"], ["5ms", "1KB"]]},
        {"process": "poisson", "rate": 10, "size": {"dist": "lognormal", "mean": "20KB", "sd": "40KB"}},
    ],
    [
        {"process": "poisson", "rate": 0, "size": "10KB"},
        {"process": "closed_loop", "users": 0, "think": "1s", "size": "1KB"},
        {"process": "trace", "transfers": [["10ms", "0B"]]},
        {"process": "trace"},
        {"process": "poisson", "rate": 10, "size": {"dist": "uniform", "min": "2KB", "max": "1KB"}},
    ],
)
NODES = ["a", "b", "c", "d"]


@st.composite
def groups(draw: Any, kind: str, routers: int = 2) -> dict[str, Any]:
    where: dict[str, Any] = {}
    if kind == "parking_lot":
        first = draw(st.integers(0, max(routers - 2, 0)))
        last = draw(st.integers(first + 1, max(routers - 1, first + 1)))
        where = {"from_": draw(optional(mostly([first], [routers, -1]))), "to": draw(optional(mostly([last], [first])))}
    elif kind == "graph":
        src = draw(mostly(NODES, ["zz"]))
        where = {"src": src, "dst": draw(mostly([n for n in NODES if n != src], [src]))}
    else:
        where = {"direction": draw(optional(mostly(["forward", "reverse"], ["up"])))}
    access = [{"delay": "20ms"}, {"rate": "1Mbps"}]
    udp = draw(st.integers(0, 3)) == 0
    group = sc.flows(
        name=draw(optional(NAMES)),
        count=draw(optional(mostly([1, 2, 3], [0, -1, 2**32, 70], key="count"))),
        start=draw(optional(TIMES)),
        start_spacing=draw(optional(TIMES)),
        stop=draw(optional(mostly(["0.2s", "1s"], ["0s"]))),
        size=None if udp else draw(optional(SIZES)),
        tcp=None if udp else draw(optional(TCP)),
        transport=draw(mostly(["udp"], ["UDP"])) if udp else draw(optional(mostly(["tcp"], ["tpc"]))),
        source=draw(SOURCES) if udp else None,
        src_access=draw(optional(mostly(access, [{"rate": 0}]) if kind != "graph" else mostly([None], access))),
        **where,
    )
    if not udp and draw(st.integers(0, 4)) == 0:
        group["arrivals"] = draw(ARRIVALS)
        for field in ("count", "size", "start_spacing"):
            if draw(st.integers(0, 9)) > 0:
                group.pop(field, None)
    return group


@st.composite
def built(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["dumbbell", "parking_lot", "graph"]))
    routers = draw(mostly([2, 3, 4], [1, 0, -1], key="routers"))
    some = st.lists(groups(kind, routers if isinstance(routers, int) else 2), min_size=1, max_size=4)
    flows = draw(mostly([None], [[]], generic=False).flatmap(lambda f: some if f is None else st.just(f)))
    change = st.builds(
        sc.change,
        at=TIMES,
        link=mostly(["r0-r1", "a-b", "lan"], ["bottleneck", "nowhere"]),
        rate=optional(RATES),
        up=optional(st.booleans()),
    )
    common = {
        "flows": flows,
        "duration": draw(mostly(["0.1s", "0.3s", "1s"], ["0s", "-1s", "1e12s"])),
        "seed": draw(optional(mostly([1, 2, 0, 2**64 - 1], [-1, 2**64, 1.5, "1"]))),
        "sample_interval": draw(optional(mostly(["0s", "10ms", "100ms"], ["1ns", "-1s"]))),
        "changes": draw(optional(st.lists(change, max_size=3))),
    }
    if kind == "dumbbell":
        return sc.dumbbell(bottleneck=draw(links()), access=draw(links()), **common)
    if kind == "parking_lot":
        return sc.parking_lot(routers=routers, link=draw(links()), access=draw(links()), **common)
    # A chain a-b-c-d, less a link or with one more.
    pairs = [("a", "b"), ("b", "c"), ("c", "d")]
    pairs = draw(mostly([pairs, pairs[:2], [*pairs, ("a", "c")], [*pairs, ("d", "a")]], [[("a", "a")], [("a", "zz")]], generic=False))
    lan = sc.lan(name="lan", nodes=["c", "d"], rate="10Mbps", delay="1us")
    return sc.graph(
        nodes=draw(mostly([NODES], [[*NODES, "a"], ["a", "../b"], []], generic=False)),
        links=[draw(links(from_=a, to=b)) for a, b in pairs],
        lans=draw(optional(mostly([[lan]], [[{**lan, "nodes": ["c"]}]], generic=False))),
        **common,
    )


# ---------------------------------------------------------------------------------------------
# The API


@fuzz(300)
@given(scenario=built())
def test_built_scenarios_give_one_line_errors_or_conserving_runs(scenario, tmp_path):
    validate_and_run(scenario, tmp_path / "pcap")


@fuzz(600)
@given(scenario=mutated_shipped())
def test_mutated_scenarios_give_one_line_errors_or_conserving_runs(scenario, tmp_path):
    validate_and_run(scenario, tmp_path / "pcap")


# ---------------------------------------------------------------------------------------------
# The command line


def _toml(value: Any) -> str:
    """``value`` as TOML, every table inline; ``None`` (which TOML lacks) left out."""
    if isinstance(value, dict):
        items = ", ".join(f"{_toml(str(k))} = {_toml(v)}" for k, v in value.items() if v is not None)
        return "{ " + items + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value if v is not None) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value))


def _toml_document(doc: dict[str, Any]) -> str:
    return "".join(f"{_toml(str(k))} = {_toml(v)}\n" for k, v in doc.items() if v is not None)


def _write_scenario(data: st.DataObject, work: Path) -> Path:
    """A scenario file in ``work``: a shipped, mutated or built scenario, as TOML or JSON, cut
    short, or not a scenario at all, under a name that fits its form or not."""
    doc = data.draw(weighted((1, st.sampled_from([d for _, d in SHIPPED])), (1, mutated_shipped()), (1, built())))
    form = data.draw(weighted((5, st.just("toml")), (3, st.just("json")), (1, st.just("cut")), (1, st.just("bytes"))))
    suffix = ".json" if form == "json" else ".toml"
    suffix = data.draw(weighted((8, st.just(suffix)), (1, st.sampled_from([".TOML", ".txt", "", ".json"]))))
    name = data.draw(st.sampled_from(["s", "s", "scenario with space", "é", "-s", "s.d"]))
    path = work / f"{name}{suffix}"
    doc = materialized(doc)
    if form in ("toml", "cut"):
        try:
            text = _toml_document(doc)
        except RecursionError:
            text = "[simulation"
        if form == "cut":
            text = text[: data.draw(st.integers(0, len(text)))]
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    elif form == "json":
        try:
            text = sc.to_json(doc)
        except flowshare.ConfigError:
            text = "{"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    else:
        path.write_bytes(data.draw(st.binary(max_size=64)))
    return path


def _runs_quickly(path: Path) -> bool:
    """Whether ``flowshare run`` on this file ends quickly: it is refused, or small."""
    try:
        return small_enough(flowshare.validate(str(path)))
    except Exception:  # noqa: BLE001 - refused, however: the command says why
        return True


@st.composite
def argvs(draw: Any, scenario: Path, work: Path) -> list[str]:
    """A command line: mostly a well-formed `run` or `validate` of the scenario, else any
    command with arguments good and bad, in any order."""
    out = str(work / "out")
    if draw(st.integers(0, 9)) < 6:
        if draw(st.booleans()):
            return ["validate", str(scenario)]
        extra = [["--seed", draw(st.sampled_from(["1", "7", "0"]))], ["--no-progress"], ["--report"]]
        chosen = [e for e in extra if draw(st.integers(0, 3)) == 0]
        return ["run", str(scenario), "--out", out] + [t for e in chosen for t in e]
    command = draw(st.sampled_from(["run", "run", "validate", "sweep", "report", "model", "bogus", ""]))
    files = [str(scenario), str(work / "missing.toml"), str(work), str(work / "missing"), "", "-"]
    outs = [
        out,
        str(work / "a" / "b" / "out"),
        str(work),
        str(scenario),
        "",
        " ",
        str(work / "out with space"),
        str(work / "é"),
        str(work / "missing" / ".." / "out"),
        str(work / ("x" * 240)),
    ]
    seeds = ["1", "0", "-1", str(2**64), str(2**64 - 1), "1.5", "x", "", "1e3", " 7 "]
    junk = ["--", "--bogus", "-x", "--out=", "--seed=3", "--no-progress=1", "--help", "--version"]
    argv = [command] if command else []
    tokens: list[list[str]] = []
    if command in ("run", "validate", "sweep"):
        tokens.append([draw(st.sampled_from(files))])
    if command in ("run", "sweep", "report") and draw(st.integers(0, 5)) > 0:
        tokens.append(["--out", draw(st.sampled_from(outs))])
    if command == "run":
        if draw(st.booleans()):
            tokens.append(["--seed", draw(st.sampled_from(seeds))])
        tokens.extend([flag] for flag in ("--no-progress", "--report") if draw(st.booleans()))
    if command == "sweep":
        tokens.append(["--workers", draw(st.sampled_from(["1", "0", "x"]))])
    if command == "report":
        tokens.append([draw(st.sampled_from([str(work), str(work / "missing"), str(scenario)]))])
    if command == "model":
        tokens.append([draw(st.sampled_from(["pftk", "mathis", "bogus", "--list"]))])
        keys = st.sampled_from(["p", "rtt", "rto", "b", "x"])
        values = st.sampled_from(
            ["0.01", "0.1", "0", "-1", "nan", "1e308", "0.001:0.1:5", "x", "", "100ms", "1e308s",
             "10ms:200ms:3", "2MB/s"]
        )
        tokens.extend([f"{k}={v}"] for k, v in draw(st.lists(st.tuples(keys, values), max_size=4)))
    if draw(st.integers(0, 4)) == 0:
        tokens.append([draw(st.sampled_from(junk))])
    tokens = draw(st.permutations(tokens))
    return argv + [token for group in tokens for token in group]


@fuzz(120)
@given(data=st.data())
def test_command_line_gives_one_line_errors_and_leaves_nothing_partial(data, tmp_path, capsys):
    capsys.readouterr()
    work = Path(tempfile.mkdtemp(dir=tmp_path))
    scenario = _write_scenario(data, work)
    argv = data.draw(argvs(scenario, work))
    if argv and argv[0] == "run" and str(scenario) in argv and not _runs_quickly(scenario):
        argv[0] = "validate"
        argv = [a for a in argv if a not in ("--no-progress", "--report")]
    status = cli.main(argv)
    out, err = capsys.readouterr()
    event(f"{argv[0] if argv else '(none)'}: status {status}")
    assert status in (0, 1, 2), (status, err)
    if status == 0:
        assert err == "", err
    else:
        assert err.startswith("flowshare: error: ") and err.endswith("\n"), err
        assert len(err.splitlines()) == 1, err
    hidden = [str(p.relative_to(work)) for p in work.rglob(".*")]
    assert not hidden, hidden
    if status == 0 and argv[0] == "run":
        out_dir = Path(argv[argv.index("--out") + 1]) if "--out" in argv else None
        if out_dir is not None and (out_dir / "flows.csv").is_file():
            f = pd.read_csv(out_dir / "flows.csv")
            accounted = f["packets_received"] + f["drops"] + f["link_losses"] + f["in_network_end"]
            assert (f["packets_sent"] == accounted).all(), argv
