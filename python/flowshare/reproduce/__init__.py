"""Reproduce a study's published numbers: simulate, compare with the targets, write a report.

``flowshare reproduce <study> --out DIR`` (``docs/reproduce.md``) runs a study's simulations as
one sweep in the run store ``DIR/store`` (so an interrupted reproduction resumes where it
stopped, locally or on Dask), measures every run, evaluates the study's numeric targets and
writes ``DIR/targets.csv``, ``DIR/runs.csv`` and ``DIR/report.html``.

>>> from flowshare import reproduce
>>> reproduce.STUDIES
('efcm', 'pamultcp', 'multfrc', 'nist', 'hasegawa')
>>> reproduce.reproduce("multfrc", "out/multfrc", scale="quick")  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .._core import ConfigError
from .._files import (
    atomic_directory,
    check_directory,
    check_flag,
    interrupts_deferred,
    reported_as,
)
from .targets import Target, counts, write_targets

__all__ = ["STUDIES", "Reproduction", "reproduce"]

STUDIES = ("efcm", "pamultcp", "multfrc", "nist", "hasegawa")
"""Every study flowshare reproduces, by key (``docs/references.md``)."""

MANIFEST = "reproduce.json"
STORE = "store"


@dataclass(frozen=True)
class Reproduction:
    """What :func:`reproduce` did.

    Attributes
    ----------
    out : pathlib.Path
        The output directory.
    targets : list of Target
        Every target, evaluated.
    runs, ran : int
        Simulation runs of the study, and those this call executed (the rest were reused).
    failed : int
        Runs that failed (their targets are reported as not measured).
    """

    out: Path
    targets: list[Target]
    runs: int
    ran: int
    failed: int

    def counts(self) -> dict[str, int]:
        """Passed, failed and unmeasured targets."""
        return dict(counts(self.targets))


def check_study(study: str) -> None:
    """Raise :class:`ConfigError` for an unknown study."""
    if study not in STUDIES:
        raise ConfigError(f"study: unknown study {study!r}; one of {', '.join(STUDIES)}")


def reproduce(
    study: str,
    out: str | os.PathLike[str],
    *,
    scale: str = "full",
    workers: int | None = None,
    dask: Any = None,
    progress: bool | None = None,
    options: Any = None,
    names: dict[str, str] | None = None,
) -> Reproduction:
    """Reproduce ``study`` into ``out``; calling it again with the same arguments resumes.

    Parameters
    ----------
    study : str
        One of :data:`STUDIES`.
    out : str or path-like
        Output directory: ``targets.csv``, ``runs.csv``, ``report.html``, ``reproduce.json``
        and the run store ``store/``.
    scale : {"full", "quick", "tiny"}
        The study's scale (``tiny``: a few seconds of simulation, for tests).
    workers : int, optional
        Local worker processes; default every core.
    dask : str or distributed.Client, optional
        Run the simulations on this dask.distributed scheduler instead.
    progress : bool, optional
        Progress bar on stderr; default when stderr is a terminal.
    options : optional
        The study's choices where the publication leaves them open (the study module's
        ``Options``: :class:`flowshare.reproduce.multfrc.Options`,
        :class:`flowshare.reproduce.efcm_network.Options`,
        :class:`flowshare.reproduce.pamultcp_network.Options`,
        :class:`flowshare.reproduce.hasegawa.Options`,
        :class:`flowshare.reproduce.nist.Options`); default the documented
        resolutions.
    names : dict, optional
        How errors name the arguments (the command line passes its option names).

    Raises
    ------
    ConfigError
        For an unknown study, a bad scale, another study's ``options``, or an ``out`` that is
        not a path or holds something else (nothing is written then).
    """
    from . import efcm, hasegawa, multfrc, nist, pamultcp

    names = names or {"out": "out", "scale": "scale", "workers": "workers", "dask": "dask"}
    check_study(study)
    module = {"efcm": efcm, "multfrc": multfrc, "pamultcp": pamultcp, "nist": nist,
              "hasegawa": hasegawa}[study]
    if scale not in module.SCALES:
        raise ConfigError(
            f"{names['scale']}: expected one of {', '.join(module.SCALES)}, got {scale!r}"
        )
    check_directory(names["out"], out)
    check_flag("progress", progress)
    out = Path(out)
    options = module.OPTIONS if options is None else options
    if not isinstance(options, module.Options):
        # A whole Options of another study would make a very long line: its type says enough.
        got = (f"a {type(options).__module__}.{type(options).__qualname__}"
               if hasattr(options, "__dataclass_fields__") else repr(options))
        raise ConfigError(f"options: expected a {module.__name__}.Options, got {got}")
    # As it reads back from DIR/reproduce.json (tuples of options come back as lists), so that
    # the same command finds its own directory resumable.
    manifest = json.loads(json.dumps({"study": study, "scale": scale, "options": asdict(options)}))
    _check_out(out, manifest, names)
    created = not out.exists()
    try:
        return _run(module, out, manifest, scale, options, workers, dask, progress, names)
    except BaseException:
        # Nothing worth resuming (no run finished): leave no directory behind.
        if created and not any((out / STORE / "runs").glob("a*")):
            with interrupts_deferred():
                shutil.rmtree(out, ignore_errors=True)
        raise


def _check_out(out: Path, manifest: dict[str, Any], names: dict[str, str]) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{names['out']}: {out} exists and is not a directory")
    if not out.is_dir() or not any(out.iterdir()):
        return
    path = out / MANIFEST
    if not path.is_file():
        raise ConfigError(
            f"{names['out']}: {out} is not empty and holds no reproduction; choose another "
            f"{names['out']}"
        )
    found = json.loads(path.read_text(encoding="utf-8"))
    if found != manifest:
        raise ConfigError(
            f"{names['out']}: {out} holds the {found.get('scale')} reproduction of "
            f"{found.get('study')} with other choices; choose another {names['out']}"
        )


def _run(module: Any, out: Path, manifest: dict[str, Any], scale: str, options: Any,
         workers: int | None, dask: Any, progress: bool | None,
         names: dict[str, str]) -> Reproduction:
    from ..study.execute import sweep_with_names
    from ..study.store import PYTHON_NAMES
    from ..study.sweep import load_sweep
    from .report import render

    # A study whose run sizes are among its choices (nist's population scale) plans with them.
    takes_options = "options" in inspect.signature(module.plan).parameters
    plan = module.plan(scale, options) if takes_options else module.plan(scale)
    sweep = load_sweep(module.sweep_document(plan, options))
    with reported_as(out):
        out.mkdir(parents=True, exist_ok=True)
    _write_atomic(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    store = out / STORE
    outcome = sweep_with_names(
        sweep, store, workers=workers, dask=dask,
        resume=(store / "sweep.json").is_file(), progress=progress,
        # A study's runs are sized by the study, not by the default budget: a full-scale NIST
        # condition took 6.6·10⁸ events for 30 simulated seconds (docs/performance.md), and its
        # runs last an hour.
        force=True,
        names={**PYTHON_NAMES, **{k: v for k, v in names.items() if k in PYTHON_NAMES}},
    )
    rows = module.rows_from_store(store, plan, options)
    targets = module.evaluate(rows)
    if outcome.failed:
        first = outcome.failures[0]
        targets = [
            t if t.passed or t.note else t.evaluate(t.measured, f"{outcome.failed} runs failed "
                                                               f"(first: {first[0]}: {first[1]})")
            for t in targets
        ]
    html = render(module.TITLE, module.intro(scale, options), targets, module.sections(rows))
    with atomic_directory(out) as stage:
        write_targets(targets, stage / "targets.csv")
        module.write_rows(rows, stage / "runs.csv")
        (stage / "report.html").write_text(html, encoding="utf-8")
    return Reproduction(out=out, targets=targets, runs=outcome.total, ran=outcome.ran,
                        failed=outcome.failed)


def _write_atomic(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
