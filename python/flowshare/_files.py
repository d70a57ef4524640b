"""Files: reading scenario and sweep documents, and atomic output directories (all files
appear whole, or none do)."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any, Literal

from ._core import ConfigError

__all__ = [
    "INTERRUPT_SIGNALS",
    "atomic_directory",
    "check_directory",
    "check_flag",
    "interrupts_deferred",
    "read_document_text",
    "reported_as",
]

INTERRUPT_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""The signals that stop a command: Ctrl-C, a termination request, a closed terminal."""


_FORMATS: dict[str, Literal["toml", "json"]] = {".toml": "toml", ".json": "json"}

#: The largest scenario or sweep document read, bytes. The largest shipped scenario is a few
#: kilobytes; a file far larger is a mistake (or a device), not a scenario.
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024


def read_document_text(path: Path, what: str) -> tuple[str, Literal["toml", "json"]]:
    """The text of the ``.toml`` or ``.json`` file ``path`` and its format.

    ``what`` names the document in errors (``"scenario"``, ``"sweep"``): an unknown suffix,
    something other than a regular file (a FIFO, a device), a file larger than
    :data:`MAX_DOCUMENT_BYTES` or text that is not UTF-8 raises :class:`ConfigError`, a
    missing file :class:`FileNotFoundError`, a directory :class:`IsADirectoryError`, each one
    line; so does a document's text given in place of its path (:class:`ConfigError`).
    """
    if _looks_like_text(str(path)):
        raise ConfigError(
            f"{what}: got a {what}'s text where its file name goes; give the path of a .toml "
            "or .json file (or, to a function that takes a mapping, tomllib.loads(text))"
        )
    fmt = _FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ConfigError(
            f"{path}: unknown {what} format {path.suffix or '(no suffix)'!r}; "
            "expected a .toml or .json file"
        )
    try:
        # stat follows symbolic links: a link to /dev/zero is a device, not a file.
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(path)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path}: not a regular file (a {what} is read from a file)")
        if info.st_size > MAX_DOCUMENT_BYTES:
            raise ConfigError(
                f"{path}: {info.st_size} bytes; a {what} file may have at most "
                f"{MAX_DOCUMENT_BYTES} bytes"
            )
        with path.open("rb") as f:
            # Read one byte past the limit: the file may have grown since the stat.
            data = f.read(MAX_DOCUMENT_BYTES + 1)
        if len(data) > MAX_DOCUMENT_BYTES:
            raise ConfigError(f"{path}: a {what} file may have at most {MAX_DOCUMENT_BYTES} bytes")
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} file not found: {path}") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"{what} path is a directory: {path}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason})") from None
    return text, fmt


def check_directory(name: str, value: object) -> None:
    """Raise a one-line :class:`ConfigError` naming ``name`` unless ``value`` is a non-empty
    path (an empty one would quietly mean the working directory)."""
    if not isinstance(value, str | os.PathLike) or not os.fspath(value):
        raise ConfigError(f"{name}: expected a directory path, got {value!r}")


def check_flag(name: str, value: object, *, optional: bool = True) -> None:
    """Raise a one-line :class:`ConfigError` naming ``name`` unless ``value`` is True or False
    (or None, the default's "decide for me", when ``optional``): any other object would quietly
    count as true or false by its truth value."""
    if not (value is True or value is False or (optional and value is None)):
        allowed = "True, False or None" if optional else "True or False"
        raise ConfigError(f"{name}: expected {allowed}, got {value!r}")


@contextlib.contextmanager
def reported_as(path: str | os.PathLike[str]) -> Iterator[None]:
    """Re-raise an :class:`OSError` of the block as one about ``path``, the path the caller was
    asked for: a parent it creates or a staging name of its own means nothing to the user."""
    try:
        yield
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None


def _looks_like_text(name: str) -> bool:
    """Whether ``name`` is a document's TOML or JSON text rather than a file name: it spans
    lines, or it is one JSON object."""
    stripped = name.strip()
    return "\n" in stripped or (stripped.startswith("{") and stripped.endswith("}"))


@contextlib.contextmanager
def atomic_directory(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Write the files of ``target`` in a staging directory, then move them into place.

    The staging directory is created next to ``target`` (same file system, so each move is an
    atomic rename). When the ``with`` block completes, a new ``target`` is the staging
    directory renamed; an existing ``target`` has each staged file renamed into it, replacing
    files of the same name and leaving other files alone. If the block raises (including
    ``KeyboardInterrupt``), the staging directory is removed, ``target`` is left as it was
    and any parent directories created for it are removed again. A signal that arrives while
    the files are moved into place or the staging directory is removed takes effect once that
    is done (:func:`interrupts_deferred`): an existing ``target`` never holds some of the new
    files next to old ones, and a second Ctrl-C leaves no staging directory behind.

    Yields
    ------
    pathlib.Path
        The staging directory to write into.

    Raises
    ------
    NotADirectoryError
        If ``target`` exists and is not a directory.
    OSError
        If ``target`` or its staging directory cannot be created; its ``filename`` is
        ``target``.
    """
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "exists and is not a directory", str(target))
    parent = target.absolute().parent
    created: list[Path] = []
    missing: list[Path] = []
    probe = parent
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    stage: Path | None = None
    # A signal (Ctrl-C, SIGTERM, SIGHUP) waits while directories are created, while the staged
    # files are moved into place (an existing target never holds half of them) and while the
    # staging directory is removed (a second Ctrl-C cannot leave it half removed).
    try:
        with interrupts_deferred(), reported_as(target):
            for directory in reversed(missing):
                directory.mkdir()
                created.append(directory)
            # The name is cut short so that a legal target name of up to 255 bytes still
            # leaves room for the staging suffix.
            stem = target.name.encode("utf-8", "surrogateescape")[:200].decode("utf-8", "ignore")
            stage = parent / f".{stem}.partial-{os.getpid()}-{os.urandom(4).hex()}"
            stage.mkdir()
        yield stage
        with interrupts_deferred():
            if target.is_dir():
                for staged in sorted(stage.iterdir()):
                    os.replace(staged, target / staged.name)
                stage.rmdir()
            else:
                os.rename(stage, target)
            stage = None
    except BaseException:
        with interrupts_deferred():
            if stage is not None:
                shutil.rmtree(stage, ignore_errors=True)
            for directory in reversed(created):
                with contextlib.suppress(OSError):
                    directory.rmdir()
        raise


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold back the signals of :data:`INTERRUPT_SIGNALS` until the block is done.

    A signal whose handler is a Python function (Ctrl-C's ``KeyboardInterrupt``, and the
    handlers by which the command line unwinds on SIGTERM and SIGHUP) is recorded while the
    block runs; when it ends, the handlers are restored and the first signal recorded is passed
    to its handler, which raises as it would have. Signals left to their default action or
    ignored are not touched, and outside the main thread (where no handler runs) the block
    runs as it is. Meant for short steps that must not stop halfway: moving files into place,
    removing a staging directory.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    deferral = _Deferral()
    try:
        deferral.install()
        yield
    finally:
        deferral.release()


class _Deferral:
    """The handlers of :func:`interrupts_deferred`. Masking the signals would not do: another
    thread of the process may take them, and Python runs the handler in the main thread."""

    def __init__(self) -> None:
        self.saved: dict[int, Any] = {}
        self.pending: int | None = None
        self.active = True

    def handler(self, signum: int, frame: FrameType | None) -> None:
        if self.active:
            if self.pending is None:
                self.pending = signum
            return
        self.forward(signum, frame)  # installed still (an interrupted release): pass it on

    def forward(self, signum: int, frame: FrameType | None) -> None:
        original = self.saved.get(signum)
        if callable(original):
            original(signum, frame)

    def install(self) -> None:
        for signum in INTERRUPT_SIGNALS:
            current = signal.getsignal(signum)
            if callable(current):
                self.saved[signum] = current
                signal.signal(signum, self.handler)

    def release(self) -> None:
        self.active = False
        for signum, original in self.saved.items():
            signal.signal(signum, original)
        if self.pending is not None:
            self.forward(self.pending, None)
