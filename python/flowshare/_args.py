"""Argument types shared by the command-line parsers."""

from __future__ import annotations

import argparse

__all__ = ["event_count", "fraction", "memory_size", "output_dir", "positive_int", "seed"]


def positive_int(text: str) -> int:
    """An integer >= 1 (for ``--workers``, ``--repeat``, ...); argparse reports the error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def fraction(text: str) -> float:
    """A number in (0, 1] (``--scale``); argparse reports the error."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text}")
    return value


def seed(text: str) -> int:
    """A random seed: an integer from 0 to 2^64 - 1 (``simulation.seed``'s range)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to {2**64 - 1}, got {value}")
    return value


def output_dir(text: str) -> str:
    """A directory to write into: any path but the empty one."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a directory path, got an empty one")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A byte that is not UTF-8 (os.fsdecode keeps it as a lone surrogate): the files
        # written there could not name it.
        raise argparse.ArgumentTypeError(f"expected a UTF-8 path, got {text!r}") from None
    return text


def memory_size(text: str) -> int:
    """A number of bytes such as ``4GiB`` or ``500MB`` (for ``--max-memory``)."""
    from .guard import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def event_count(text: str) -> float:
    """A positive number of events such as ``1e11`` (for ``--max-events``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number such as 1e11, got {text!r}") from None
    if not (value >= 1 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 1, got {text!r}")
    return value


def flow_id(text: str) -> int:
    """A flow id (a row of ``flows.csv``): an integer >= 0; argparse reports the error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid flow id: {text!r}; expected an integer >= 0") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid flow id: {value}; expected an integer >= 0")
    return value
