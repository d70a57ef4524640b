"""Argument types shared by the command-line parsers."""

from __future__ import annotations

import argparse

__all__ = ["output_dir", "positive_int", "seed"]


def positive_int(text: str) -> int:
    """An integer >= 1 (for ``--workers``, ``--repeat``, ...); argparse reports the error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
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
    return text
