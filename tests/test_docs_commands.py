"""Every command and Python example of ``README.md`` and ``docs/*.md`` runs as written.

(The design records in ``docs/adr/`` are records of decisions, their code sketches of
interfaces; they are not run.)

For each page, the fenced ``bash``, ``sh``, ``shell`` and ``console`` blocks (in ``console``
blocks, the lines that start with ``$ ``) and the ``python`` blocks run in the order of the
page, in one temporary directory per page that holds a copy of ``scenarios/``. Shell commands
run one by one with ``bash`` and must exit with status 0; Python blocks run in one namespace
per page (so a block may use the names of the blocks above it), with ``__name__`` set to
``"__main__"`` and every warning an error.

Shortening: in the copy of ``scenarios/``, every simulated duration (``duration`` in a
scenario's ``[simulation]`` table, ``"simulation.duration"`` in a sweep's ``set``) is capped at
:data:`QUICK_DURATION`, a scenario without one gets it, and a sweep's ``replications`` are
capped at :data:`QUICK_REPLICATIONS`, and ``flowshare reproduce STUDY --quick`` runs the study
at its ``tiny`` scale (every target evaluated from a few seconds of simulation; the quick scale
is a reproduction of minutes, measured in ``docs/reproduce.md``), so that the whole file runs
in about two minutes on two cores. ``FLOWSHARE_DOCS_FULL=1`` runs the examples at their full
length instead.

A block that cannot run here (it builds the project, or needs a machine that is not there) is
preceded on the page by ``<!-- docs-test: skip REASON -->``; skipped blocks are reported by
:func:`test_skipped_blocks_are_few_and_say_why`, and each must give a reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
QUICK_DURATION_S = 3.0
QUICK_DURATION = "3s"
QUICK_REPLICATIONS = 1
SHELL = frozenset({"bash", "sh", "shell", "console"})
PYTHON = frozenset({"python", "py"})
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\b\s*(.*?)\s*-->")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$")
MAX_SKIPPED = 6
"""Skips must stay rare: more than this many fails the inventory test."""


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    text: str
    skip: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(page: Path) -> list[Block]:
    """The runnable fenced blocks of ``page``, in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        indent, fence = match.group("indent"), match.group("fence")
        lang = match.group("info").strip().split(" ")[0].lower() if match.group("info") else ""
        start = i
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            text = lines[i]
            body.append(text[len(indent):] if text.startswith(indent) else text.lstrip())
            i += 1
        i += 1
        if lang not in SHELL | PYTHON:
            continue
        previous = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        skip = SKIP.search(previous)
        out.append(Block(page, start + 1, lang, "\n".join(body) + "\n",
                         skip.group(1) if skip else None))
    return out


def shell_commands(block: Block) -> list[str]:
    """The commands of a shell block: one per line (``\\`` continues a line); in a
    ``console`` block only the lines after a ``$`` prompt."""
    commands: list[str] = []
    pending = ""
    for raw in block.text.splitlines():
        line = raw.rstrip()
        if block.lang == "console" and not pending:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        commands.append(pending + line)
        pending = ""
    if pending:
        commands.append(pending)
    return commands


_SIM_DURATION = re.compile(r'^(\s*duration\s*=\s*)"([^"]*)"')
_SET_DURATION = re.compile(r'("simulation\.duration"\s*=\s*)"([^"]*)"')
_REPLICATIONS = re.compile(r"^(\s*replications\s*=\s*)(\d+)")
_UNITS = {"ms": 1e-3, "us": 1e-6, "µs": 1e-6, "s": 1.0, "min": 60.0, "h": 3600.0}


def _seconds(text: str) -> float | None:
    match = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([a-zµ]+)\s*", text)
    if match is None or match.group(2) not in _UNITS:
        return None
    return float(match.group(1)) * _UNITS[match.group(2)]


def _cap(match: re.Match[str]) -> str:
    seconds = _seconds(match.group(2))
    if seconds is None or seconds <= QUICK_DURATION_S:
        return match.group(0)
    return f'{match.group(1)}"{QUICK_DURATION}"'


def shorten(text: str) -> str:
    """A TOML scenario or sweep with every simulated duration capped at QUICK_DURATION (a
    scenario without one gets it)."""
    out: list[str] = []
    table: str | None = None
    header_at: int | None = None
    has_duration = False
    for line in text.splitlines():
        header = re.match(r"^\s*\[([^\[\]]+)\]", line)
        if line.lstrip().startswith("[["):
            table = "[[array]]"
        elif header:
            table = header.group(1).strip()
            if table == "simulation":
                header_at = len(out)
        elif table == "simulation" and _SIM_DURATION.match(line):
            has_duration = True
            line = _SIM_DURATION.sub(_cap, line)
        if table is None and not header:
            line = _REPLICATIONS.sub(
                lambda m: f"{m.group(1)}{min(int(m.group(2)), QUICK_REPLICATIONS)}", line)
        out.append(_SET_DURATION.sub(_cap, line))
    if header_at is not None and not has_duration:
        out.insert(header_at + 1, f'duration = "{QUICK_DURATION}"')
    elif header_at is None and re.search(r"^\s*\[topology\]", text, re.M):
        # A scenario file has no top-level keys, so the table can go first.
        out[:0] = ["[simulation]", f'duration = "{QUICK_DURATION}"', ""]
    return "\n".join(out) + "\n"


def workspace(tmp: Path) -> Path:
    """A working directory with a copy of ``scenarios/``, shortened unless
    FLOWSHARE_DOCS_FULL=1."""
    shutil.copytree(ROOT / "scenarios", tmp / "scenarios")
    if os.environ.get("FLOWSHARE_DOCS_FULL") != "1":
        for path in (tmp / "scenarios").rglob("*.toml"):
            original = path.read_text(encoding="utf-8")
            path.write_text(shorten(original), encoding="utf-8")
    return tmp


#: The ``flowshare`` command the pages' shell commands run when shortened: the real one, with
#: ``reproduce``'s quick scale replaced by the tiny one.
TINY_REPRODUCE = """\
import sys

import flowshare.reproduce
from flowshare import cli

full = flowshare.reproduce.reproduce


def tiny(study, out, *, scale="full", **kwargs):
    return full(study, out, scale="tiny" if scale == "quick" else scale, **kwargs)


flowshare.reproduce.reproduce = tiny
sys.exit(cli.main(sys.argv[1:]))
"""


def environment(tmp: Path | None = None) -> dict[str, str]:
    """The pages' environment: this interpreter's ``flowshare`` first on the PATH, or, given a
    directory ``tmp`` to put it in, the shortened one (unless FLOWSHARE_DOCS_FULL=1)."""
    env = dict(os.environ)
    path = [str(Path(sys.executable).parent)]
    if tmp is not None and os.environ.get("FLOWSHARE_DOCS_FULL") != "1":
        shim = tmp / "bin" / "flowshare"
        shim.parent.mkdir()
        shim.write_text(f"#!{sys.executable}\n{TINY_REPRODUCE}", encoding="utf-8")
        shim.chmod(0o755)
        path.insert(0, str(shim.parent))
    env["PATH"] = os.pathsep.join([*path, env.get("PATH", "")])
    env["MPLBACKEND"] = "Agg"
    return env


PAGES = [p for p in pages() if blocks(p)]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_commands_and_examples_of_the_page_run(page, tmp_path, monkeypatch):
    work = workspace(tmp_path / "work")
    monkeypatch.chdir(work)
    env = environment(tmp_path)
    namespace: dict[str, object] = {"__name__": "__main__"}
    ran = 0
    for block in blocks(page):
        if block.skip is not None:
            continue
        if block.lang in SHELL:
            for command in shell_commands(block):
                done = subprocess.run(["bash", "-c", command], cwd=work, env=env,
                                      capture_output=True, text=True, check=False)
                assert done.returncode == 0, (
                    f"{block.where}: `{command}` exited with {done.returncode}:\n"
                    f"{done.stderr[-2000:]}"
                )
                ran += 1
        else:
            code = compile(block.text, block.where, "exec")
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    exec(code, namespace)  # noqa: S102 (the documentation's own examples)
                except Exception as exc:
                    pytest.fail(f"{block.where}: {type(exc).__name__}: {exc}")
            ran += 1
    assert ran > 0 or all(b.skip for b in blocks(page))


def test_skipped_blocks_are_few_and_say_why():
    skipped = [b for p in pages() for b in blocks(p) if b.skip is not None]
    for block in skipped:
        assert block.skip, f"{block.where}: a skipped block must say why"
    assert len(skipped) <= MAX_SKIPPED, [b.where for b in skipped]


def test_sweep_example_runs_as_a_plain_script(tmp_path):
    """The Python sweep example of docs/sweeps.md, saved as a script without an
    ``if __name__ == "__main__":`` guard and run with ``python script.py``, works: the local
    workers do not run the script again."""
    example = next(b for b in blocks(ROOT / "docs" / "sweeps.md")
                   if b.lang in PYTHON and "run_sweep(" in b.text and "dask" not in b.text)
    assert "__main__" not in example.text
    work = workspace(tmp_path)
    script = work / "example.py"
    # Two workers even on one core: the pool of processes is what is being tested.
    text = re.sub(r"run_sweep\(([^)]*)\)", r"run_sweep(\1, workers=2)", example.text, count=1)
    assert "workers=2)" in text
    script.write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=work, env=environment(),
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "BrokenProcessPool" not in done.stderr
    assert (work / "out" / "loss-recovery-py" / "catalog.parquet").is_file()


def test_shortening_caps_simulated_durations():
    scenario = '[simulation]\nduration = "60s"\nseed = 1\n\n[topology]\nkind = "dumbbell"\n'
    assert 'duration = "3s"' in shorten(scenario) and '"60s"' not in shorten(scenario)
    sweep = 'base = "../demo.toml"\nset = { "simulation.duration" = "10s" }\nreplications = 4\n'
    assert '"simulation.duration" = "3s"' in shorten(sweep)
    assert "replications = 1" in shorten(sweep)
    no_duration = '[topology]\nkind = "dumbbell"\n'
    assert shorten(no_duration).startswith('[simulation]\nduration = "3s"\n')
    short = '[simulation]\nduration = "500ms"\n\n[topology]\nkind = "dumbbell"\n'
    assert 'duration = "500ms"' in shorten(short)
    missing = '[simulation]  # no duration\nseed = 1\n\n[topology]\nkind = "dumbbell"\n'
    assert shorten(missing).startswith('[simulation]  # no duration\nduration = "3s"\nseed = 1')


def test_blocks_are_found_with_their_skip_marks(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# t\n\n```sh\nflowshare --help   # comment\nflowshare model \\\n  --list\n```\n\n"
        "<!-- docs-test: skip needs a cluster -->\n\n```bash\nflowshare sweep x --dask y\n```\n"
        "\n```toml\nnot = 'run'\n```\n\n```console\n$ flowshare --version\nflowshare 0.1\n```\n",
        encoding="utf-8",
    )
    found = [b for b in blocks(page)]
    assert [b.lang for b in found] == ["sh", "bash", "console"]
    assert found[0].skip is None and found[1].skip == "needs a cluster"
    assert shell_commands(found[0]) == ["flowshare --help   # comment",
                                        "flowshare model    --list"]
    assert shell_commands(found[2]) == ["flowshare --version"]
