"""A scenario and a seed give byte-identical output files, also from two separate processes.

In-process reruns could share state (a cache, a global random generator, hash seeds); two
interpreters started from scratch cannot, so this is the test the determinism promise rests on.
Only ``summary.json``'s ``wall_s`` (the machine's own time) may differ.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"

PCAP_LINK = {"udp": "bottleneck", "changes": "path_a", "fq-codel": "bottleneck"}


def run_in_fresh_process(scenario: Path, out: Path) -> None:
    # A different hash seed in each process: nothing may depend on Python's hash order.
    env = {**os.environ, "PYTHONHASHSEED": str(abs(hash(str(out))) % 4096)}
    subprocess.run(
        [sys.executable, "-m", "flowshare", "run", str(scenario), "--out", str(out), "--seed", "4"],
        check=True,
        capture_output=True,
        env=env,
        timeout=300,
    )


@pytest.mark.parametrize("name", sorted(PCAP_LINK))
def test_two_processes_write_identical_files(name: str, tmp_path: Path) -> None:
    scenario = tmp_path / f"{name}.toml"
    traced = f'\n[trace]\nevents = true\npcap = ["{PCAP_LINK[name]}"]\n'
    scenario.write_text((GOLDEN / f"{name}.toml").read_text(encoding="utf-8") + traced, encoding="utf-8")
    first, second = tmp_path / "first", tmp_path / "second"
    run_in_fresh_process(scenario, first)
    run_in_fresh_process(scenario, second)
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file()) == files
    assert {"flows.csv", "queues.csv", "timeseries.parquet", "events.parquet", "summary.json"} <= {
        p.name for p in files
    }
    assert any(p.suffix == ".pcap" for p in files)
    for rel in files:
        a, b = (first / rel).read_bytes(), (second / rel).read_bytes()
        if rel.name == "summary.json":
            sa, sb = json.loads(a), json.loads(b)
            for s in (sa, sb):
                s["summary"].pop("wall_s")
            assert sa == sb
        else:
            assert a == b, f"{rel} differs between two processes"
