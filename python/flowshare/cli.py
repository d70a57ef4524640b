"""The ``flowshare`` command line.

::

    flowshare run FILE.toml --out DIR [--seed N] [--no-progress] [--report]
                  [--seqplot FLOW ...] [--max-memory SIZE] [--max-events N] [--force]
    flowshare validate FILE.toml [--max-memory SIZE] [--max-events N]
    flowshare sweep FILE.toml --out DIR [--workers N] [--dask ADDR] [--resume]
    flowshare demo --out DIR
    flowshare model NAME KEY=VALUE ... [--plot FILE] | flowshare model --list
    flowshare algorithms [NAME] [--json]
    flowshare report DIR [--out OUT] [--level L] [--rank-by PARAM]
    flowshare reproduce STUDY --out DIR [--quick] [--workers N] [--dask ADDR]
    flowshare live FILE.toml --out DIR [--stack kernel|flowshare]
    flowshare compare DIR_A DIR_B [--plot FILE]

User errors (an invalid scenario, a missing file, a bad flag) print one line
``flowshare: error: ...`` on stderr and exit with status 1 (2 for a bad command line); no
output directory is left behind.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import __version__, sim
from . import scenario as sc
from ._args import event_count, flow_id, fraction, memory_size, output_dir, positive_int, seed
from ._core import ConfigError
from ._files import atomic_directory
from .guard import DEFAULT_MAX_EVENTS, Budget, check, cost
from .results import SEQPLOT_FILE, RunResult, seqplot

__all__ = ["main"]

PROG = "flowshare"
MAX_PRINTED_FLOWS = 20
#: The options that name a path a command writes, by their ``args`` attribute: an error about
#: that path names the option.
OUTPUT_OPTIONS = {"out": "--out", "plot": "--plot"}


class _UsageError(Exception):
    """A bad command line (exit status 2)."""


class _UserError(Exception):
    """A user error found by the CLI itself (exit status 1)."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and do not exit the process."""

    def error(self, message: str) -> NoReturn:
        hint = f" (see '{self.prog} --help')"
        raise _UsageError(message + hint)


class _Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, unwound like Ctrl-C so that no partial output is left behind."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_received: list[int] = []
"""The termination signals received while a command runs. A signal that arrives inside a C
extension's argument conversion (matplotlib's, numpy's) can reach Python as that library's
own error (a ``TypeError``) instead of :class:`_Terminated`; the command is interrupted all
the same."""


def _raise_terminated(signum: int, _frame: object) -> None:
    _received.append(signum)
    raise _Terminated(signum)


def _raise_interrupt(signum: int, _frame: object) -> None:
    """Ctrl-C as Python's own handler takes it, but recorded in :data:`_received`, so that
    one reaching a C extension's argument conversion still ends as an interruption."""
    _received.append(signum)
    raise KeyboardInterrupt


@contextlib.contextmanager
def _termination_unwinds() -> Iterator[None]:
    """While a command runs, SIGTERM (a timeout, ``kill``, a batch scheduler) and SIGHUP (a
    closed terminal) raise :class:`_Terminated`, which ``with`` blocks such as the output's
    staging directory clean up after, as they do for Ctrl-C; every one of them, Ctrl-C
    included, is recorded in :data:`_received`."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            s = getattr(signal, name, None)
            # A signal ignored when the command started (`nohup`) stays ignored.
            if s is not None and signal.getsignal(s) is not signal.SIG_IGN:
                previous[s] = signal.signal(s, _raise_terminated)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, _raise_interrupt)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``flowshare`` command line and return its exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _build_parser(_command(args_list)).parse_args(args_list)
    except _UsageError as exc:
        return _fail(str(exc), status=2)
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    _received.clear()
    try:
        with _termination_unwinds():
            return int(args.handler(args) or 0)
    except KeyboardInterrupt as exc:
        return _interrupted(args, 128 + exc.signum if isinstance(exc, _Terminated) else 130)
    except _UsageError as exc:
        return _fail(str(exc), status=2)
    except (ConfigError, _UserError) as exc:
        return _fail(str(exc))
    except OSError as exc:
        if _received:
            return _interrupted(args, 128 + _received[0])
        return _fail(_os_message(exc, args))
    except Exception:
        if _received:
            return _interrupted(args, 128 + _received[0])
        raise


def _interrupted(args: argparse.Namespace, status: int) -> int:
    written = getattr(args, "written", None)
    what = f"{written} was written whole" if written else "no output written"
    print(f"{PROG}: interrupted; {what}", file=sys.stderr)
    return status


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line (the first word not an option), if any."""
    return next((a for a in argv if not a.startswith("-")), None)


def _build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; a subcommand whose arguments need heavy imports (``model``: numpy) gets
    them only when it is the ``command`` run, so that ``flowshare run`` stays light."""
    parser = _Parser(
        prog=PROG,
        description="A congestion-control laboratory: packet-level simulation of TCP flows.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = commands.add_parser(
        "run",
        help="simulate a scenario and write its results",
        description="Simulate a scenario and write flows.csv, queues.csv, delays.csv, fct.csv, "
        "timeseries.parquet, summary.json and plot.png into the output directory.",
    )
    run.add_argument("scenario", metavar="FILE", help="scenario file (.toml or .json)")
    run.add_argument(
        "--out", required=True, type=output_dir, metavar="DIR", help="output directory"
    )
    run.add_argument("--seed", type=seed, metavar="N", help="override simulation.seed")
    run.add_argument(
        "--no-progress", action="store_true", help="never show a progress bar"
    )
    run.add_argument("--report", action="store_true", help="also write report.md")
    run.add_argument(
        "--seqplot",
        type=flow_id,
        nargs="+",
        metavar="FLOW",
        help="also write seqplot.png: segment numbers over time of these flows, from the "
        "event trace (the scenario needs [trace] events = true)",
    )
    _add_budget_arguments(run, force=True)
    run.set_defaults(handler=_cmd_run)

    validate = commands.add_parser(
        "validate",
        help="check a scenario without running it",
        description="Check a scenario file and print its size, or the first error.",
    )
    validate.add_argument("scenario", metavar="FILE", help="scenario file (.toml or .json)")
    _add_budget_arguments(validate, force=False)
    validate.set_defaults(handler=_cmd_validate)

    sweep = commands.add_parser(
        "sweep",
        help="run every arm and replication of a sweep into a run store",
        description="Validate every arm of a sweep, then run them and write DIR/catalog.parquet, "
        "DIR/responses.parquet and DIR/runs/<run_id>/ (docs/sweeps.md). Exit status 1 if a run "
        "failed; --resume retries it.",
    )
    sweep.add_argument("sweep", metavar="FILE", help="sweep file (.toml or .json)")
    sweep.add_argument(
        "--out", required=True, type=output_dir, metavar="DIR", help="run store directory"
    )
    sweep.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="local worker processes (default: every core)",
    )
    sweep.add_argument(
        "--dask", metavar="ADDR", help="run on the dask.distributed scheduler at ADDR"
    )
    sweep.add_argument(
        "--resume",
        action="store_true",
        help="continue the sweep in DIR: keep done runs, run pending and failed ones",
    )
    sweep.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    sweep.set_defaults(handler=_cmd_sweep)

    demo = commands.add_parser(
        "demo",
        help="run the demonstration dumbbell and write a report",
        description="Run scenarios/demo.toml and write its results and report.md.",
    )
    demo.add_argument(
        "--out", required=True, type=output_dir, metavar="DIR", help="output directory"
    )
    demo.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    demo.set_defaults(handler=_cmd_demo)

    model = commands.add_parser(
        "model",
        help="evaluate an analytic throughput model",
        description="Evaluate an analytic model: KEY=VALUE prints its value, "
        "KEY=START:STOP:COUNT a table (drawn with --plot FILE). Keys that are times, sizes "
        "or bit rates take a unit, as in scenarios (rtt=100ms, s=1460B, bandwidth=10Mbps); "
        "counts and probabilities are bare numbers. "
        "'flowshare model --list' lists the models, their keys and units.",
    )
    if command in (None, "model"):
        from .models import cli as model_cli

        model_cli.add_arguments(model)
    model.set_defaults(handler=_cmd_model)

    algorithms = commands.add_parser(
        "algorithms",
        help="list the congestion-control algorithms, their parameters and defaults",
        description="List every congestion-control algorithm the core accepts as tcp.cc, "
        "with the loss recoveries (tcp.recovery) and queue disciplines (queue.kind). "
        "With NAME: that algorithm's parameters, defaults, allowed values and reference.",
    )
    algorithms.add_argument("name", nargs="?", metavar="NAME", help="one algorithm, e.g. cubic")
    algorithms.add_argument("--json", action="store_true", help="print JSON instead of text")
    algorithms.set_defaults(handler=_cmd_algorithms)

    report = commands.add_parser(
        "report",
        help="write an HTML report of a sweep's run store",
        description="Summarize a sweep's run store: write report.html (self-contained, plots "
        "inlined) and each plot as PNG into DIR/report or --out.",
    )
    report.add_argument("store", metavar="DIR", help="run store written by 'flowshare sweep'")
    report.add_argument(
        "--out", type=output_dir, metavar="OUT", help="output directory (default DIR/report)"
    )
    report.add_argument(
        "--level", type=float, default=0.95, metavar="L",
        help="confidence level of the intervals (default 0.95)",
    )
    report.add_argument(
        "--rank-by", metavar="PARAM",
        help="also rank the values of this parameter (a dotted path such as "
        "'flows[0].tcp.cc') in each condition, rank 1 the best (rank matrices)",
    )
    report.set_defaults(handler=_cmd_report)
    live = commands.add_parser(
        "live",
        help="run a dumbbell scenario over real stacks through the link emulator (root)",
        description="Make two network namespaces joined by the link emulator, which applies the "
        "scenario's bottleneck (rate, delay, queue, loss model) to every packet, run the "
        "scenario's flows over the kernel's TCP for its duration, remove everything, and write "
        "flows.csv, queues.csv and summary.json as 'flowshare run' does (docs/live.md).",
    )
    live.add_argument("scenario", metavar="FILE", help="scenario file (.toml or .json)")
    live.add_argument(
        "--out", required=True, type=output_dir, metavar="DIR", help="output directory"
    )
    live.add_argument(
        "--stack", choices=("kernel", "flowshare"), default="kernel",
        help="what runs the TCP flows: the kernel's TCP (reno, cubic, bbr; the default) or "
        "flowshare's live transport (any algorithm of the library); TFRC and MulTFRC flows "
        "always run on flowshare's transport",
    )
    live.set_defaults(handler=_cmd_live)

    compare = commands.add_parser(
        "compare",
        help="set two run directories side by side (a simulation and a live run)",
        description="Print each flow's goodput in two runs of the same scenario, the aggregate "
        "goodput and Jain's index, and their differences.",
    )
    compare.add_argument("a", metavar="DIR_A", help="first run directory (e.g. flowshare run's)")
    compare.add_argument("b", metavar="DIR_B", help="second run directory (e.g. flowshare live's)")
    compare.add_argument("--plot", metavar="FILE", help="also write a bar chart (.png, .svg, .pdf)")
    compare.set_defaults(handler=_cmd_compare)

    reproduce = commands.add_parser(
        "reproduce",
        help="reproduce a study's published numbers and write targets.csv and report.html",
        description="Simulate a study, compare every numeric target with the published value "
        "and write DIR/targets.csv, DIR/runs.csv and DIR/report.html (docs/reproduce.md). "
        "Running the same command again reuses the finished runs in DIR/store.",
    )
    reproduce.add_argument(
        "study", metavar="STUDY", help="efcm, pamultcp, multfrc, nist or hasegawa"
    )
    reproduce.add_argument(
        "--out", required=True, type=output_dir, metavar="DIR", help="output directory"
    )
    reproduce.add_argument(
        "--quick", action="store_true", help="a reduced version: fewer, shorter runs"
    )
    reproduce.add_argument(
        "--scale", type=fraction, metavar="S",
        help="nist only: the share of the study's network each run keeps, its access routers "
        "as they are and the core's speeds shrunk to their traffic (0 < S <= 1; default 1, "
        "or 0.02 with --quick)",
    )
    reproduce.add_argument(
        "--workers", type=positive_int, metavar="N",
        help="local worker processes (default: every core)",
    )
    reproduce.add_argument(
        "--dask", metavar="ADDR", help="run on the dask.distributed scheduler at ADDR"
    )
    reproduce.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    reproduce.set_defaults(handler=_cmd_reproduce)
    return parser


# ---------------------------------------------------------------------------------------------
# Commands


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .reproduce import check_study, reproduce

    check_study(args.study)  # before anything is written
    if args.dask is not None and args.workers is not None:
        raise _UsageError("--workers applies to local runs; drop it with --dask")
    options = None
    if args.scale is not None:
        if args.study != "nist":
            raise _UsageError(f"--scale applies to nist only; {args.study} has --quick")
        from .reproduce.nist import Options

        options = Options(network_share=args.scale)
    try:
        done = reproduce(
            args.study, args.out, scale="quick" if args.quick else "full",
            workers=args.workers, dask=args.dask, progress=_progress(args), options=options,
            names={"out": "--out", "scale": "--quick", "workers": "--workers",
                   "dask": "--dask"},
        )
    except KeyboardInterrupt as exc:
        if (Path(args.out) / "store" / "sweep.json").is_file():
            message = f"finished runs are kept in {args.out}; run the same command to continue"
        else:
            message = f"no run had finished; nothing was written to {args.out}"
        print(f"{PROG}: interrupted; {message}", file=sys.stderr)
        return 128 + exc.signum if isinstance(exc, _Terminated) else 130
    tally = done.counts()
    reused = done.runs - done.ran
    print(
        f"{_plural(done.runs, 'run')}: {done.ran} ran"
        + (f", {reused} reused" if reused else "")
        + (f", {done.failed} failed" if done.failed else "")
    )
    print(
        f"{_plural(len(done.targets), 'target')}: {tally['passed']} passed, "
        f"{tally['failed']} failed, {tally['not_measured']} not measured"
    )
    print("wrote:")
    for name in ("targets.csv", "runs.csv", "report.html"):
        print(f"  {Path(args.out) / name}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    # The run streams its pcap captures, and its time series past a threshold, next to the
    # output (the same file system); the files appear only once everything has succeeded.
    with atomic_directory(args.out) as stage:
        result = sim.run(
            args.scenario,
            seed=args.seed,
            progress=_progress(args),
            pcap_dir=stage,
            budget=_budget(args),
            spill_dir=stage.parent,
        )
        try:
            with sim.status(f"writing {args.out}", enabled=_shows_progress(args)):
                names = result.write_into(stage, report=args.report)
                if args.seqplot:
                    seqplot(result, args.seqplot, stage / SEQPLOT_FILE)
                    names.append(SEQPLOT_FILE)
        except OSError as exc:
            raise _UserError(f"--out: cannot write {args.out}: {exc.strerror or exc}") from None
    args.written = args.out  # an interrupt from here on says the output is complete
    _print_flows(result)
    _print_files([Path(args.out) / name for name in names])
    return 0


def _cmd_live(args: argparse.Namespace) -> int:
    from . import live

    try:
        files = live.run(args.scenario, args.out, stack=args.stack)
    except live.LiveError as exc:
        raise _UserError(str(exc)) from None
    args.written = args.out
    _print_files(files)
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from .live import compare

    a, b = Path(args.a), Path(args.b)
    if args.plot and Path(args.plot).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise _UsageError(f"--plot: expected a .png, .svg or .pdf file, got {args.plot!r}")
    try:
        result = compare.compare(a, b)
    except ValueError as exc:
        raise _UserError(str(exc)) from None
    for line in result.lines(a.name or str(a), b.name or str(b)):
        print(line)
    if args.plot:
        compare.plot(result, Path(args.plot), a.name or str(a), b.name or str(b))
        _print_files([Path(args.plot)])
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    budget = _budget(args)
    normalized, simulation = sim._prepare(args.scenario, budget=budget)
    planned = cost(simulation.estimate, base_slices=sim.SLICES)
    check(
        planned,
        simulation.estimate,
        normalized,
        budget,
        duration_s=simulation.duration_s,
        spill_dir=None,
    )
    facts = sc.describe(normalized)
    parts = [_plural(facts["flows"], "flow")]
    if facts["links"] is not None:
        parts.append(_plural(facts["links"], "link"))
    parts.append(f"{simulation.duration_s:g} s")
    print("ok: " + ", ".join(parts) + f"; {planned.describe()}")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .study import stats
    from .study.execute import sweep_with_names
    from .study.store import CLI_NAMES

    if args.dask is not None and args.workers is not None:
        raise _UsageError("--workers applies to local runs; drop it with --dask")
    try:
        outcome = sweep_with_names(
            args.sweep,
            args.out,
            workers=args.workers,
            dask=args.dask,
            resume=args.resume,
            progress=_progress(args),
            names=CLI_NAMES,
        )
    except KeyboardInterrupt as exc:
        if (Path(args.out) / "sweep.json").is_file():
            message = f"finished runs are kept in {args.out}; continue with --resume"
        else:
            message = f"no run had finished; nothing was written to {args.out}"
        print(f"{PROG}: interrupted; {message}", file=sys.stderr)
        return 128 + exc.signum if isinstance(exc, _Terminated) else 130
    skipped = outcome.total - outcome.ran
    print(
        f"{_plural(outcome.total, 'run')}: {outcome.done} done, {outcome.failed} failed"
        + (f" ({skipped} done before)" if skipped else "")
    )
    out = Path(args.out)
    if outcome.identical_arms:
        arms = ", ".join(str(a) for a in outcome.identical_arms)
        print(
            f"{PROG}: warning: the replications of arm {arms} are identical, so their "
            f"confidence intervals are zero; {stats.IDENTICAL_HINT}",
            file=sys.stderr,
        )
    print("wrote:")
    for name in ("catalog.parquet", "responses.parquet"):
        print(f"  {out / name}")
    print(f"  {out / 'runs'}/")
    if outcome.failures:
        run_id, error = outcome.failures[0]
        return _fail(
            f"{_plural(outcome.failed, 'run')} failed (first: {run_id}: {error}); see "
            f"{out / 'catalog.parquet'}; rerun with --resume to retry"
        )
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    path = demo_scenario_path()
    source: Any = path if path.is_file() else builtin_demo()
    result = sim.run(source, progress=_progress(args))
    files = _write(result, args.out, report=True)
    _print_flows(result)
    _print_files(files)
    print(f"report: {files[-1]}")
    return 0


def _cmd_model(args: argparse.Namespace) -> int:
    from .models import cli as model_cli

    try:
        return model_cli.run_cli(args)
    except model_cli.ModelUsageError as exc:
        return _fail(str(exc), status=2)


def _cmd_algorithms(args: argparse.Namespace) -> int:
    import json

    from . import algorithms as alg

    if args.name is None:
        data = alg.listing()
        print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else alg.format_listing(data))
        return 0
    try:
        entry = alg.describe(args.name)
    except KeyError as exc:
        raise _UserError(exc.args[0]) from None
    print(json.dumps(entry, indent=2, ensure_ascii=False) if args.json else alg.format_one(entry))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .study.report import StoreError, write_report

    try:
        files = write_report(args.store, args.out, level=args.level, rank_by=args.rank_by)
    except StoreError as exc:
        raise _UserError(str(exc)) from None
    print(f"report: {files[0]}")
    print(f"plots: {len(files) - 1} PNG files in {files[0].parent}")
    return 0


def demo_scenario_path() -> Path:
    """Where ``flowshare demo`` looks for its scenario: ``scenarios/demo.toml`` in the checkout."""
    return Path(__file__).resolve().parents[2] / "scenarios" / "demo.toml"


def builtin_demo() -> dict[str, Any]:
    """The demo scenario used when ``scenarios/demo.toml`` is not found.

    Four NewReno flows share a 20 Mbit/s, 10 ms bottleneck for 20 s; two of them have a
    20 ms longer path, so the report shows RTT unfairness.
    """
    return sc.dumbbell(
        bottleneck=sc.link(rate="20Mbps", delay="10ms", queue=sc.droptail(limit=60)),
        access=sc.link(rate="1Gbps", delay="1ms"),
        flows=[
            sc.flows(name="short-rtt", count=2, start_spacing="1s"),
            sc.flows(
                name="long-rtt",
                count=2,
                start="0.5s",
                start_spacing="1s",
                src_access={"delay": "21ms"},
            ),
        ],
        duration="20s",
        seed=1,
    )


# ---------------------------------------------------------------------------------------------
# Helpers


def _progress(args: argparse.Namespace) -> bool | None:
    return False if args.no_progress else None


def _shows_progress(args: argparse.Namespace) -> bool:
    return not args.no_progress and sim._stderr_is_tty()


def _add_budget_arguments(parser: argparse.ArgumentParser, *, force: bool) -> None:
    parser.add_argument(
        "--max-memory",
        type=memory_size,
        metavar="SIZE",
        help="refuse a run estimated to need more memory, e.g. 4GiB "
        "(default: what the machine has available)",
    )
    parser.add_argument(
        "--max-events",
        type=event_count,
        default=DEFAULT_MAX_EVENTS,
        metavar="N",
        help="refuse a run estimated to take more events and time-series rows "
        f"(default {DEFAULT_MAX_EVENTS:.0e})",
    )
    if force:
        parser.add_argument(
            "--force", action="store_true", help="run whatever the resource estimate"
        )


def _budget(args: argparse.Namespace) -> Budget:
    return Budget(
        max_memory=args.max_memory,
        max_events=args.max_events,
        force=getattr(args, "force", False),
        hint="raise --max-events or --max-memory, or run with --force",
    )


def _write(result: RunResult, out: str, *, report: bool) -> list[Path]:
    try:
        return result.write(out, report=report)
    except OSError as exc:
        raise _UserError(f"--out: cannot write {out}: {exc.strerror or exc}") from None


def _print_flows(result: RunResult) -> None:
    # Read from the core's columns: printing the table needs no DataFrame.
    columns = {
        name: result._column("flows", name) or [] for name in ("flow", "name", "cc", "goodput_bps")
    }
    count = max((len(v) for v in columns.values()), default=0)
    rows = [("flow", "name", "cc", "goodput (Mbit/s)")]
    for i in range(min(count, MAX_PRINTED_FLOWS)):

        def cell(name: str, i: int = i) -> Any:
            values = columns[name]
            return values[i] if i < len(values) else ""

        goodput = cell("goodput_bps")
        rows.append(
            (
                str(cell("flow")),
                str(cell("name")),
                str(cell("cc")),
                f"{(goodput if goodput != '' else float('nan')) / 1e6:.3f}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print(
            f"{row[0]:>{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:<{widths[2]}}  "
            f"{row[3]:>{widths[3]}}"
        )
    if count > MAX_PRINTED_FLOWS:
        print(f"... and {count - MAX_PRINTED_FLOWS} more flows in flows.csv")
    agg = result.aggregate()
    jain = "n/a" if agg["jain_index"] is None else f"{agg['jain_index']:.4f}"
    print(
        f"total goodput {agg['goodput_bps'] / 1e6:.3f} Mbit/s, Jain index {jain}, "
        f"{agg['drops']} drops"
    )


def _print_files(files: list[Path]) -> None:
    print("wrote:")
    for path in files:
        print(f"  {path}")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


MAX_MESSAGE_CHARS = 1000
"""Longest error line printed: a huge value quoted whole is cut short."""


def _one_line(message: str) -> str:
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    text = "; ".join(lines) if lines else "unknown error"
    if len(text) > MAX_MESSAGE_CHARS:
        text = f"{text[:MAX_MESSAGE_CHARS]}… ({len(text)} characters in all)"
    return text


def _os_message(exc: OSError, args: argparse.Namespace | None = None) -> str:
    """One line for an operating-system error; an error about a path the command was asked
    to write names the option that gave it."""
    if not (exc.strerror and exc.filename):
        return str(exc)
    for attr, option in OUTPUT_OPTIONS.items():
        given = getattr(args, attr, None)
        if (isinstance(given, str) and given and isinstance(exc.filename, str | bytes | os.PathLike)
                and Path(given) == Path(os.fsdecode(exc.filename))):
            return f"{option}: cannot write {given}: {exc.strerror}"
    return f"{exc.filename}: {exc.strerror}"


def _fail(message: str, *, status: int = 1) -> int:
    print(f"{PROG}: error: {_one_line(message)}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
