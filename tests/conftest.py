"""Fixtures shared by the Python tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from core_tables import TINY_TOML, core_result, tiny_scenario_dict

from flowshare.results import RunResult


@pytest.fixture
def result() -> RunResult:
    """A RunResult built from ``core_result`` (no simulation involved)."""
    return RunResult.from_core(core_result(), tiny_scenario_dict())


@pytest.fixture
def tiny_toml(tmp_path: Path) -> Path:
    """A tiny valid scenario file."""
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_TOML, encoding="utf-8")
    return path
