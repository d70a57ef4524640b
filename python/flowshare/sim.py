"""Run a scenario on the native core."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from . import _core
from ._files import check_directory, check_flag
from ._series import RunData
from .guard import Budget, Cost, check, cost, max_connections
from .results import RunResult
from .scenario import ConfigError, Source, scenario_text

__all__ = ["run", "validate"]

SLICES = 200
"""A long run advances in this many equal slices of simulated time, so that the progress bar can
move and Ctrl-C is noticed between slices (the core holds no Python state while it runs); after
each, the time series, traced events, transfers and concurrency rows recorded are taken from
the core. A run of few events is cut into fewer (``guard.EVENTS_PER_SLICE``), one with many
time-series rows into more (``guard.ROWS_PER_SLICE``)."""

PROGRESS_DELAY_S = 3.0
"""A progress bar appears only once a run has taken this many seconds of wall time."""


def run(
    scenario: Source,
    *,
    seed: int | None = None,
    progress: bool | None = None,
    pcap_dir: str | os.PathLike[str] | None = None,
    budget: Budget | None = None,
    spill_dir: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Simulate a scenario and return its results.

    Parameters
    ----------
    scenario : str, path-like or mapping
        A ``.toml`` or ``.json`` scenario file, or the scenario as a mapping (see
        ``docs/scenarios.md`` and :mod:`flowshare.scenario`).
    seed : int, optional
        Overrides ``simulation.seed``.
    progress : bool, optional
        Show a progress bar on stderr for runs that last longer than a few seconds. By default
        only when stderr is a terminal; ``False`` never shows one.
    pcap_dir : str or path-like, optional
        Directory (created if missing) for the pcap captures the scenario's ``trace.pcap``
        selects, one ``<from>-<to>.pcap`` per link direction, streamed while the run goes on
        (``docs/traces.md``). Without it no pcap file is written.
    budget : Budget, optional
        What the run may cost (:class:`flowshare.guard.Budget`): by default the memory the
        machine has available and ``guard.DEFAULT_MAX_EVENTS``; ``Budget(force=True)`` runs
        whatever the estimate.
    spill_dir : str or path-like, optional
        Where time series and traced events go once they outgrow memory
        (``_series.SPILL_BYTES``): a hidden directory is made there and removed with the
        result. By default the system's temporary directory.

    Returns
    -------
    RunResult
        Per-flow and per-queue tables, time series and run facts.

    Raises
    ------
    ConfigError
        If the scenario or an argument is invalid; nothing is run.
    flowshare.guard.BudgetError
        If the run's estimated cost exceeds ``budget`` (a ``ConfigError``); nothing is run.
    FileNotFoundError
        If ``scenario`` names a missing file.
    KeyboardInterrupt
        Propagated within one slice of the run; nothing has been written anywhere.
    """
    for name, directory in (("pcap_dir", pcap_dir), ("spill_dir", spill_dir)):
        if directory is not None:
            check_directory(name, directory)
    check_flag("progress", progress)
    if progress is None:
        progress = _stderr_is_tty()
    with status("building the network", enabled=progress):
        normalized, sim = _prepare(scenario, seed=seed, budget=budget)
    planned = cost(sim.estimate, base_slices=SLICES)
    check(
        planned,
        sim.estimate,
        normalized,
        budget or Budget(),
        duration_s=sim.duration_s,
        spill_dir=spill_dir,
    )
    if pcap_dir is not None and wants_pcap(normalized):
        Path(pcap_dir).mkdir(parents=True, exist_ok=True)
        sim.open_pcap(os.fspath(pcap_dir))
    if pcap_dir is None and wants_pcap(normalized):
        warnings.warn(
            "trace.pcap selects links to capture, but no pcap_dir was given: no pcap file "
            "is written",
            UserWarning,
            stacklevel=2,
        )
    data = RunData(spill_dir=spill_dir, events=_traces_events(normalized))
    raw = _advance(sim, progress=progress, data=data, plan=planned)
    return RunResult.from_core(raw, normalized, data=data)


def validate(scenario: Source, *, budget: Budget | None = None) -> dict[str, Any]:
    """Check a scenario without running it.

    The scenario is parsed and its network is built (which also checks what only the whole
    network reveals, such as a graph flow without a route), and its estimated cost is checked
    against ``budget`` as :func:`run` would; no time is simulated.

    Parameters
    ----------
    scenario : str, path-like or mapping
        As for :func:`run`.
    budget : Budget, optional
        As for :func:`run`.

    Returns
    -------
    dict
        The normalized scenario, with every default filled in.

    Raises
    ------
    ConfigError
        With a one-line message naming the field and what is allowed
        (:class:`flowshare.guard.BudgetError` when the run would exceed ``budget``).
    FileNotFoundError
        If ``scenario`` names a missing file.
    """
    normalized, sim = _prepare(scenario, budget=budget)
    estimate = sim.estimate
    check(
        cost(estimate, base_slices=SLICES),
        estimate,
        normalized,
        budget or Budget(),
        duration_s=sim.duration_s,
        spill_dir=None,
    )
    return normalized


def _prepare(
    scenario: Source,
    *,
    seed: int | None = None,
    budget: Budget | None = None,
) -> tuple[dict[str, Any], _core.Simulation]:
    """Parse, validate and build ``scenario`` once in the core, with ``seed`` applied; returns
    the normalized scenario and the simulation. A scenario with more connections than
    ``budget``'s memory can build is refused before the core allocates them."""
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64
    ):
        raise ConfigError(f"seed: expected an integer from 0 to {2**64 - 1}, got {seed!r}")
    if budget is not None and not isinstance(budget, Budget):
        raise ConfigError(f"budget: expected a flowshare.guard.Budget, got {budget!r}")
    text, fmt, base_dir = scenario_text(scenario)
    try:
        sim = _core.Simulation(
            text, fmt, seed=seed, base_dir=base_dir, max_connections=max_connections(budget)
        )
    except _core.ConfigError as exc:
        if isinstance(scenario, Mapping):
            raise
        raise type(exc)(f"{scenario}: {exc}") from None
    normalized: dict[str, Any] = json.loads(sim.scenario_json)
    return normalized, sim


def wants_pcap(normalized: Mapping[str, Any]) -> bool:
    """Whether a normalized scenario selects link directions for pcap capture."""
    trace = normalized.get("trace")
    return isinstance(trace, Mapping) and bool(trace.get("pcap"))


def _traces_events(normalized: Mapping[str, Any]) -> bool:
    trace = normalized.get("trace")
    return isinstance(trace, Mapping) and bool(trace.get("events"))


def _advance(
    sim: _core.Simulation, *, progress: bool, data: RunData, plan: Cost
) -> Mapping[str, Any]:
    duration = sim.duration_s
    slices = plan.slices
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=duration,
            desc="simulating",
            unit="s",
            delay=PROGRESS_DELAY_S,
            file=sys.stderr,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.3g}/{total:.3g} s simulated "
            "[{elapsed}<{remaining}]",
            leave=False,
        )
    # Transfers opened by arrival processes, and the concurrency table's rows, are taken from
    # the core slice by slice, so that the core holds only the connections open at a time.
    transfers = []
    concurrency = []
    try:
        for i in range(1, slices + 1):
            sim.run_until(duration * i / slices)
            transfers.append(sim.take_transfers())
            part = sim.take_concurrency()
            if part is not None:
                concurrency.append(part)
            data.add(sim.take_series(), sim.take_events())
            if bar is not None:
                bar.update(sim.now_s - bar.n)
        raw = dict(sim.finish())
        raw["transfers"] = [*transfers, raw["transfers"]]
        if raw.get("concurrency") is not None:
            raw["concurrency"] = [*concurrency, raw["concurrency"]]
        data.add(raw, raw.get("events"))
        if "event_codes" in raw:
            data.event_codes = {k: list(v) for k, v in raw["event_codes"].items()}
        return raw
    finally:
        if bar is not None:
            bar.close()


@contextlib.contextmanager
def status(what: str, *, enabled: bool) -> Iterator[None]:
    """Say on stderr ``flowshare: <what>...`` if the block is still running after
    :data:`PROGRESS_DELAY_S` (building a large network, writing large results), so that a
    long silent phase shows what it is doing."""
    if not enabled:
        yield
        return
    timer = threading.Timer(
        PROGRESS_DELAY_S, lambda: print(f"flowshare: {what}...", file=sys.stderr, flush=True)
    )
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _stderr_is_tty() -> bool:
    stream = sys.stderr
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False
