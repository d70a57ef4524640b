"""Files: reading scenario and sweep documents, and atomic output directories (all files
appear whole, or none do)."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from ._core import ConfigError

__all__ = ["atomic_directory", "read_document_text"]


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
    line.
    """
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


@contextlib.contextmanager
def atomic_directory(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Write the files of ``target`` in a staging directory, then move them into place.

    The staging directory is created next to ``target`` (same file system, so each move is an
    atomic rename). When the ``with`` block completes, a new ``target`` is the staging
    directory renamed; an existing ``target`` has each staged file renamed into it, replacing
    files of the same name and leaving other files alone. If the block raises (including
    ``KeyboardInterrupt``), the staging directory is removed, ``target`` is left as it was
    and any parent directories created for it are removed again.

    Yields
    ------
    pathlib.Path
        The staging directory to write into.

    Raises
    ------
    NotADirectoryError
        If ``target`` exists and is not a directory.
    """
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"{target}: exists and is not a directory")
    parent = target.absolute().parent
    created: list[Path] = []
    missing: list[Path] = []
    probe = parent
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    stage: Path | None = None
    try:
        for directory in reversed(missing):
            directory.mkdir()
            created.append(directory)
        stage = parent / f".{target.name}.partial-{os.getpid()}-{secrets.token_hex(4)}"
        stage.mkdir()
        yield stage
        if target.is_dir():
            for staged in sorted(stage.iterdir()):
                os.replace(staged, target / staged.name)
            stage.rmdir()
        else:
            os.rename(stage, target)
        stage = None
    except BaseException:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
        for directory in reversed(created):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise
