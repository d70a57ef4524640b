"""``flowshare reproduce nist`` at the tiny scale: every target of the study in targets.csv with
a note on every miss, the campaign's arms (conditions × alternates × thresholds, one seed), the
measured goodput and rank tables, resumption, and the ``--scale`` option."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from flowshare import cli
from flowshare.reproduce import nist
from flowshare.reproduce import nist_published as pub
from flowshare.reproduce import reproduce


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("nist") / "tiny"
    return out, reproduce("nist", out, scale="tiny", workers=2, progress=False)


def test_the_plan_is_the_studys_campaign():
    full = nist.plan("full")
    assert len(full.arms) == 448 and full.network_share == 1 and full.duration_s == 3600
    assert len(set(full.arms)) == 448
    assert {t for _, _, t in full.arms} == {"HIGH", "LOW"}
    small = nist.plan("full", nist.Options(network_share=0.1, duration_s=600))
    share = nist.nn.source_share(nist.nn.ACCESS_ROUTERS.scaled(0.1))
    assert small.network_share == 0.1 and small.hours == pytest.approx(600 / 3600 * share)
    assert share == pytest.approx(0.1, abs=0.005)
    doc = nist.sweep_document(nist.plan("tiny"))
    assert doc["common_random_numbers"] is True and len(doc["points"]) == 28


@pytest.mark.parametrize("bad, match", [({"network_share": 0}, "scale"),
                                        ({"network_share": 1.5}, "scale"),
                                        ({"duration_s": -1}, "duration_s"),
                                        ({"router_speed": "shared"}, "router_speed")])
def test_bad_options_name_the_field(bad, match):
    with pytest.raises(Exception, match=match):
        nist.Options(**bad)


def test_targets_cover_every_published_table(tiny):
    out, done = tiny
    assert done.runs == 28 and done.failed == 0
    with open(out / "targets.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    ids = {r["id"] for r in rows}
    assert len(ids) == len(rows) == len(nist.targets())
    # Every cell of Tables 8-26 to 8-29 and 8-31/8-32.
    for number in ("8-26", "8-27", "8-28", "8-29"):
        assert sum(i.startswith(f"T{number}.") for i in ids) == 24 * 7
    for number in ("8-31", "8-32"):
        assert sum(i.startswith(f"T{number}.") and ".order." not in i for i in ids) == 12 * 7
        assert sum(i.startswith(f"T{number}.order.") for i in ids) == 8
    for r in rows:
        assert r["passed"] in ("true", "false")
        if r["passed"] == "false":
            assert r["note"], r["id"]
    # The network and population as built pass their tables; the printed 720 Mbit/s does not.
    by_id = {r["id"]: r for r in rows}
    assert by_id["T8-17.x2=1.avg"]["passed"] == "true"
    assert by_id["T8-15.fast.x1=800"]["passed"] == "false" and "nist:A2" in by_id["T8-15.fast.x1=800"]["note"]
    assert "needs all 32 conditions" in by_id["congestion.HIGH.least"]["note"]
    assert (out / "report.html").read_text(encoding="utf-8").count("<table") >= 5


def test_measured_tables_have_the_published_layout(tiny):
    out, _ = tiny
    rows = pd.read_csv(out / "runs.csv")
    assert len(rows) == 28
    assert set(rows["alternate"]) == set(pub.NAMES.values())
    table = nist.goodput_table(rows, "HIGH", "alt")
    assert list(table.index) == list(pub.GROUPS) and list(table.columns) == list(pub.ALGORITHMS)
    # Web objects complete in a few seconds: every alternate has a measured WO goodput.
    assert table.loc[[g for g in pub.GROUPS if g.startswith("WO-T")]].notna().all().all()
    ranks = nist.rank_table(rows, "HIGH")
    assert ranks is not None
    # Mean ranks of seven alternates over the same cells sum to 1 + ... + 7.
    for block in ("WO",):
        assert ranks.loc[("y2(u)", block)].sum() == pytest.approx(28)


def test_the_same_command_resumes(tiny):
    out, _ = tiny
    again = reproduce("nist", out, scale="tiny", workers=1, progress=False)
    assert again.ran == 0 and again.runs == 28


def test_scale_is_for_nist_only(tmp_path, capsys):
    status = cli.main(["reproduce", "efcm", "--out", str(tmp_path / "x"), "--scale", "0.5"])
    err = capsys.readouterr().err
    assert status == 2 and "--scale applies to nist only" in err and err.count("\n") == 1
    assert not (tmp_path / "x").exists()


def test_a_real_dask_cluster_gives_the_same_targets(tiny, tmp_path):
    """The campaign on a ``dask scheduler`` and a ``dask worker`` started as processes, as on
    a cluster: the same targets as the local run (the simulation is deterministic)."""
    import json
    import shutil
    import subprocess
    import sys
    import time
    from pathlib import Path

    pytest.importorskip("distributed")
    dask = Path(sys.executable).with_name("dask")
    if not dask.exists():
        dask = shutil.which("dask")
    if dask is None:
        pytest.skip("no dask command")
    info = tmp_path / "scheduler.json"
    common = ["--no-dashboard"]
    procs = [subprocess.Popen([str(dask), "scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--scheduler-file", str(info), *common],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not info.is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(info.read_text())["address"]
        procs.append(subprocess.Popen([str(dask), "worker", "--scheduler-file", str(info),
                                       "--nworkers", "2", "--nthreads", "1", *common],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        out = tmp_path / "on-dask"
        done = reproduce("nist", out, scale="tiny", dask=address, progress=False)
        assert (done.runs, done.failed) == (28, 0)
        local, _ = tiny
        assert (out / "targets.csv").read_bytes() == (local / "targets.csv").read_bytes()
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
