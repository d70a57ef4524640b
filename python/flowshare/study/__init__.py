"""Experiments: statistics over runs, rank matrices and reports of a run store."""

from __future__ import annotations

__all__: list[str] = []
