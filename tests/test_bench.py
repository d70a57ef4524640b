"""The benchmark driver: parsing, the JSON object, per-child measurement, the report file.

These tests run without ns-2, ns-3 or a built flowshare-sim: the flowshare side is exercised
with a small executable written into tmp_path that prints the JSON line of the documented
contract. The one test that needs ns-2 is skipped where ``ns`` is not installed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tomllib
import math
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bench import algorithms, driver

PY = sys.executable
REPO = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------------------------
# Parsing the simulators' output


def test_parse_peer_output_with_drops():
    out = "acked_pkts 489109 goodput_mbps 95.213218666666677 drops 1352\n"
    assert driver.parse_peer_output(out) == {
        "acked_pkts": 489109, "goodput_mbps": pytest.approx(95.213218666666677), "drops": 1352}


def test_parse_peer_output_reference_format_has_no_drops():
    # The scripts in the shared reference folder print no drop count.
    parsed = driver.parse_peer_output("acked_pkts 451008 goodput_mbps 87.796224\n")
    assert parsed["acked_pkts"] == 451008
    assert parsed["goodput_mbps"] == pytest.approx(87.796224)
    assert parsed["drops"] is None


def test_parse_peer_output_ignores_noise_and_takes_last_line():
    out = textwrap.dedent("""\
        warning: no class variable Agent/TCP/Newreno::foo_
        acked_pkts 1 goodput_mbps 0.1 drops 0
        acked_pkts 200 goodput_mbps 1.5e1 drops 7
    """)
    assert driver.parse_peer_output(out) == {"acked_pkts": 200, "goodput_mbps": 15.0, "drops": 7}


@pytest.mark.parametrize("text", ["", "Segmentation fault\n", "acked_pkts goodput_mbps\n",
                                  "acked_pkts 10 goodput_mbps nan\n"])
def test_parse_peer_output_rejects_missing_or_bad_line(text):
    with pytest.raises(ValueError):
        driver.parse_peer_output(text)


def _fs_line(**over):
    obj = {"wall_s": 0.25, "events": 3_000_000, "acked_pkts": 489_000, "goodput_mbps": 95.2,
           "drops": 1300, "version": "0.1.0"}
    obj.update(over)
    return json.dumps(obj)


def test_parse_flowshare_output_takes_last_json_line():
    out = "loading scenario\n" + _fs_line() + "\n\n"
    parsed = driver.parse_flowshare_output(out)
    assert parsed["events"] == 3_000_000
    assert parsed["wall_s"] == 0.25
    assert parsed["drops"] == 1300


def test_parse_flowshare_output_turns_float_counts_into_integers():
    parsed = driver.parse_flowshare_output(_fs_line(acked_pkts=502829.0, events=3025435.0))
    assert parsed["acked_pkts"] == 502829 and isinstance(parsed["acked_pkts"], int)
    assert isinstance(parsed["events"], int)


@pytest.mark.parametrize("out", [
    "",
    "not json\n",
    "[1, 2]\n",
    json.dumps({"wall_s": 1.0, "events": 1, "acked_pkts": 1}) + "\n",   # goodput missing
    _fs_line(events="many") + "\n",
    _fs_line(wall_s=True) + "\n",
])
def test_parse_flowshare_output_rejects_bad_output(out):
    with pytest.raises(ValueError):
        driver.parse_flowshare_output(out)


# ---------------------------------------------------------------------------------------------
# The JSON object


def _runs(walls, peaks, parsed, cpus=None):
    r = driver.SimRuns()
    r.walls, r.peaks, r.parsed = list(walls), list(peaks), list(parsed)
    r.cpus = list(cpus or walls)
    return r


REQUIRED = ("flowshare_s", "ns2_s", "ns3_s", "speedup_vs_ns2", "speedup_vs_ns3",
            "flowshare_peak_mib", "ns2_peak_mib")


def test_case_result_with_all_simulators():
    case = driver.CASES["r1"]
    fs = _runs([0.30, 0.10, 0.13], [10.0, 12.0, 11.0],
               [json.loads(_fs_line(wall_s=w, goodput_mbps=96.0)) for w in (0.28, 0.08, 0.18)])
    ns2 = _runs([1.2, 1.9, 1.3], [19.0, 19.5, 19.2],
                [{"acked_pkts": 489109, "goodput_mbps": 95.0, "drops": 1352}] * 3)
    ns3 = _runs([45.0], [228.0], [{"acked_pkts": 491980, "goodput_mbps": 95.77, "drops": 1307}])
    res = driver.build_case_result(case, fs, ns2, ns3)
    for key in REQUIRED:
        assert key in res
    assert res["flowshare_s"] == pytest.approx(0.13)           # median, not mean or first
    assert res["ns2_s"] == pytest.approx(1.3)
    assert res["ns3_s"] == pytest.approx(45.0)
    assert res["speedup_vs_ns2"] == pytest.approx(10.0)
    assert res["speedup_vs_ns3"] == pytest.approx(45.0 / 0.13)
    assert res["flowshare_peak_mib"] == pytest.approx(12.0)    # the peak over runs
    assert res["ns2_peak_mib"] == pytest.approx(19.5)
    assert res["flowshare_inprocess_s"] == pytest.approx(0.18)
    assert res["flowshare_events_per_s"] == pytest.approx(3_000_000 / 0.18)
    assert res["events"] == 3_000_000
    assert res["ns_per_event"] == pytest.approx(0.18e9 / 3_000_000)        # 60 ns
    assert res["events_per_packet"] == pytest.approx(3_000_000 / 489_000)
    assert res["memory_ratio_vs_ns2"] == pytest.approx(12.0 / 19.5)
    assert res["goodput_diff_vs_ns2_pct"] == pytest.approx(100 * (96.0 - 95.0) / 95.0)
    assert res["ns2_drops"] == 1352 and res["ns3_drops"] == 1307
    assert res["meets_ns2_speed_target"] is True
    assert res["meets_ns3_speed_target"] is True
    assert res["meets_memory_target"] is True
    assert res["meets_goodput_target"] is True
    json.dumps(res, allow_nan=False)


def test_case_result_targets_can_fail():
    case = driver.CASES["r2"]
    fs = _runs([4.0], [80.0], [json.loads(_fs_line(goodput_mbps=850.0))])
    ns2 = _runs([10.0], [58.0], [{"acked_pkts": 1, "goodput_mbps": 883.5, "drops": 5}])
    ns3 = _runs([300.0], [900.0], [{"acked_pkts": 1, "goodput_mbps": 880.0, "drops": 5}])
    res = driver.build_case_result(case, fs, ns2, ns3)
    assert res["speedup_vs_ns2"] == pytest.approx(2.5)
    assert res["meets_ns2_speed_target"] is False
    assert res["meets_ns3_speed_target"] is False
    assert res["meets_memory_target"] is False
    assert res["meets_goodput_target"] is False


def test_case_result_missing_peers_are_null():
    case = driver.CASES["r1"]
    fs = _runs([0.2], [10.0], [json.loads(_fs_line())])
    ns2 = driver.SimRuns(status="missing", note="ns-2 (`ns`) not installed")
    ns3 = driver.SimRuns(status="skipped", note="skipped: --no-ns3")
    res = driver.build_case_result(case, fs, ns2, ns3)
    for key in ("ns2_s", "ns3_s", "speedup_vs_ns2", "speedup_vs_ns3", "ns2_peak_mib",
                "ns3_peak_mib", "ns2_goodput_mbps", "memory_ratio_vs_ns2",
                "goodput_diff_vs_ns2_pct", "meets_ns2_speed_target", "meets_ns3_speed_target",
                "meets_memory_target"):
        assert res[key] is None, key
    assert res["flowshare_s"] == pytest.approx(0.2)
    text = json.dumps(res, allow_nan=False)
    assert '"ns2_s": null' in text


def test_case_result_ns3_timeout_gives_a_lower_bound():
    case = driver.CASES["r2"]
    fs = _runs([2.0], [50.0], [json.loads(_fs_line())])
    ns2 = _runs([20.0], [59.0], [{"acked_pkts": 1, "goodput_mbps": 1.0, "drops": 0}])
    ns3 = driver.SimRuns(status="timeout", timeout_s=900.0)
    res = driver.build_case_result(case, fs, ns2, ns3)
    assert res["ns3_s"] is None and res["speedup_vs_ns3"] is None
    assert res["speedup_vs_ns3_lower_bound"] == pytest.approx(450.0)
    assert res["meets_ns3_speed_target"] is True      # 900 s / 2 s already exceeds 150
    fs_slow = _runs([10.0], [50.0], [json.loads(_fs_line())])
    res = driver.build_case_result(case, fs_slow, ns2, ns3)
    assert res["meets_ns3_speed_target"] is None      # ≥ 90× proves nothing either way


# ---------------------------------------------------------------------------------------------
# Measuring one child


HAVE_CC = any(shutil.which(c) for c in ("cc", "gcc", "clang"))
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler for the rusage_exec wrapper")


@pytest.fixture(scope="module")
def helper(tmp_path_factory):
    if not HAVE_CC:
        pytest.skip("no C compiler for the rusage_exec wrapper")
    path = driver.ensure_rusage_helper(tmp_path_factory.mktemp("build"))
    assert path is not None
    return path


ALLOC_120 = "x = b'\\x01' * (120 * 1024 * 1024)"


@needs_cc
def test_peak_memory_is_the_childs_own(helper):
    # This process holds 200 MiB more than the children will. Linux would charge a child
    # spawned directly from here with this process's peak; through the wrapper it must not.
    ballast = b"\x02" * (200 * 1024 * 1024)
    big = driver.measure_process([PY, "-c", ALLOC_120], rusage_helper=helper)
    small = driver.measure_process([PY, "-c", "pass"], rusage_helper=helper)
    true = driver.measure_process(["true"], rusage_helper=helper)
    assert len(ballast) and big.ok and small.ok and true.ok
    assert 120 <= big.peak_mib < 200
    assert small.peak_mib < 40                   # a bare interpreter, not this process's 200+ MiB
    assert true.peak_mib < 10
    assert small.cpu_s is not None and 0 <= small.cpu_s < big.cpu_s + 5


@needs_cc
def test_wrapper_passes_on_exit_status_and_signals(helper):
    res = driver.measure_process([PY, "-c", "import sys; sys.exit(3)"], rusage_helper=helper)
    assert res.returncode == 3
    crash = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
    res = driver.measure_process([PY, "-c", crash], rusage_helper=helper)
    assert res.returncode == -signal.SIGSEGV
    res = driver.measure_process(["/nonexistent/simulator"], rusage_helper=helper)
    assert res.returncode == 127 and "cannot run" in res.stderr


@needs_cc
def test_wrapper_is_rebuilt_only_when_needed(tmp_path):
    first = driver.ensure_rusage_helper(tmp_path)
    assert first is not None
    mtime = first.stat().st_mtime_ns
    assert driver.ensure_rusage_helper(tmp_path) == first
    assert first.stat().st_mtime_ns == mtime


def test_peak_memory_without_wrapper_is_unknown_below_the_drivers_own():
    # Without the wrapper a child's ru_maxrss starts at this process's own peak, so a small
    # child's value is meaningless (None) and only a child that outgrows us is reported.
    import resource

    own_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    small = driver.measure_process([PY, "-c", "pass"])
    want = int(own_mib) + 64
    big = driver.measure_process([PY, "-c", f"x = b'\\x01' * ({want} * 1024 * 1024)"])
    assert small.ok and big.ok
    assert small.peak_mib is None
    assert big.peak_mib is not None and big.peak_mib >= want


def test_measure_process_captures_output_and_status():
    res = driver.measure_process(
        [PY, "-c", "import sys; print('acked_pkts 5 goodput_mbps 1.0'); "
                   "print('oops', file=sys.stderr); sys.exit(3)"])
    assert res.returncode == 3 and not res.ok and not res.timed_out
    assert "acked_pkts 5" in res.stdout
    assert "oops" in res.stderr


def test_measure_process_stops_at_the_time_limit():
    res = driver.measure_process([PY, "-c", "import time; time.sleep(30)"], timeout=0.5)
    assert res.timed_out and not res.ok
    assert res.returncode is None
    assert 0.4 < res.wall_s < 10


def test_measure_process_large_output_does_not_stall():
    res = driver.measure_process([PY, "-c", "print('x' * 1_000_000); print('done')"], timeout=30)
    assert res.ok and res.stdout.rstrip().endswith("done")


# ---------------------------------------------------------------------------------------------
# The command line, with a flowshare-sim written for the test


SCENARIO = textwrap.dedent("""\
    [simulation]
    duration = "60s"

    [topology]
    kind = "dumbbell"

    [[flows]]
    count = 16
""")


def _fake_repo(tmp_path: Path, sim_body: str | None = None) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    (root / "scenarios").mkdir(parents=True)
    (root / "bench" / "peers").mkdir(parents=True)
    (root / "scenarios" / "r1-dumbbell.toml").write_text(SCENARIO)
    sim = tmp_path / "flowshare-sim"
    body = sim_body if sim_body is not None else textwrap.dedent(f"""\
        import json, sys
        assert sys.argv[1].endswith("r1-dumbbell.toml"), sys.argv
        print("reading " + sys.argv[1], file=sys.stderr)
        print(json.dumps({{"wall_s": 0.01, "events": 1000, "acked_pkts": 489000,
                          "goodput_mbps": 95.3, "drops": 1300, "version": "9.9.9"}}))
    """)
    sim.write_text(f"#!{PY}\n{body}")
    sim.chmod(0o755)
    return root, sim


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    driver.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_cli_json_is_one_object_and_peers_are_null(tmp_path, capsys):
    root, sim = _fake_repo(tmp_path)
    doc = tmp_path / "performance.md"
    status = driver.run_cli(_args("--json", "--skip-peers", "--cases", "r1", "--repeat", "2",
                                 "--root", str(root), "--sim", str(sim),
                                 "--write-doc", str(doc)))
    out, err = capsys.readouterr()
    assert status == 0
    report = json.loads(out)                       # exactly one JSON document on stdout
    r1 = report["r1"]
    for key in REQUIRED:
        assert key in r1
    assert r1["ns2_s"] is None and r1["ns3_s"] is None
    assert r1["speedup_vs_ns2"] is None and r1["ns2_peak_mib"] is None
    assert r1["flowshare_s"] > 0 and len(r1["flowshare_runs_s"]) == 2
    assert r1["flowshare_peak_mib"] > 0
    assert r1["flowshare_goodput_mbps"] == pytest.approx(95.3)
    assert r1["flowshare_events_per_s"] == pytest.approx(1000 / 0.01)
    assert "r2" not in report
    assert report["meta"]["versions"]["flowshare"] == "9.9.9"
    assert len(report["meta"]["flowshare_sim"]["sha256"]) == 64
    assert not list(tmp_path.glob(".bench-snapshot-*"))   # the copies run were removed
    assert "[bench]" in err                         # progress on stderr
    text = doc.read_text()
    assert driver.BEGIN_MARKER in text and driver.END_MARKER in text
    assert "| ns-2 | – (skipped: --skip-peers)" in text
    assert "not measured" in text


def test_cli_missing_binary_is_a_one_line_error(tmp_path, capsys):
    root, _ = _fake_repo(tmp_path)
    status = driver.run_cli(_args("--json", "--skip-peers", "--cases", "r1", "--root", str(root),
                                 "--sim", str(tmp_path / "nope")))
    out, err = capsys.readouterr()
    assert status != 0
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "not found" in err


def test_cli_missing_scenario_is_an_error(tmp_path, capsys):
    root, sim = _fake_repo(tmp_path)
    status = driver.run_cli(_args("--skip-peers", "--cases", "r2", "--root", str(root),
                                 "--sim", str(sim)))
    out, err = capsys.readouterr()
    assert status != 0 and out == ""
    assert "r2-dumbbell.toml" in err and len(err.strip().splitlines()) == 1


def test_cli_failing_simulator_is_an_error(tmp_path, capsys):
    root, sim = _fake_repo(tmp_path, "import sys\nprint('boom', file=sys.stderr)\nsys.exit(4)\n")
    status = driver.run_cli(_args("--json", "--skip-peers", "--cases", "r1", "--root", str(root),
                                 "--sim", str(sim)))
    out, err = capsys.readouterr()
    assert status != 0 and out == ""
    assert "exit status 4" in err and "boom" in err


def _alive(pid: int) -> bool:
    """True when `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def test_terminated_benchmark_kills_its_child(tmp_path):
    pidfile = tmp_path / "child.pid"
    root, sim = _fake_repo(tmp_path, textwrap.dedent(f"""\
        import os, time
        open({str(pidfile)!r}, "w").write(str(os.getpid()))
        time.sleep(60)
    """))
    proc = subprocess.Popen(
        [PY, "-m", "bench", "--skip-peers", "--cases", "r1", "--root", str(root),
         "--sim", str(sim)],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    child = None
    try:
        deadline = time.monotonic() + 30
        while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
            time.sleep(0.02)
        child = int(pidfile.read_text())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) != 0
        # The killed child is re-parented once the driver is gone; until its new parent
        # reaps it, it lingers as a zombie, which is dead for this test's purpose.
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(child), "the simulator child outlived the benchmark driver"
        child = None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if child is not None:          # the test failed: do not leave the sleeper behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)


def test_cli_rejects_unknown_case():
    with pytest.raises(SystemExit):
        _args("--cases", "r3")
    assert _args("--cases", "R2,r1").cases == ["r2", "r1"]


# ---------------------------------------------------------------------------------------------
# The report file


def test_update_doc_keeps_hand_written_text(tmp_path):
    doc = tmp_path / "performance.md"
    doc.write_text(f"# Performance\n\nintro\n\n{driver.BEGIN_MARKER}\nold table\n"
                   f"{driver.END_MARKER}\n\n## How to read this\n\nhand-written\n")
    driver.update_doc(doc, "new table\n")
    text = doc.read_text()
    assert "old table" not in text and "new table" in text
    assert text.startswith("# Performance\n\nintro\n\n")
    assert text.endswith("## How to read this\n\nhand-written\n")
    driver.update_doc(doc, "newer table\n")          # idempotent shape
    assert doc.read_text().count(driver.BEGIN_MARKER) == 1


def test_update_doc_without_markers_and_missing_file(tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text("# Performance\n\nnotes\n")
    driver.update_doc(doc, "table\n")
    text = doc.read_text()
    assert text.index("table") < text.index("notes") and text.startswith("# Performance\n")
    fresh = tmp_path / "sub" / "b.md"
    driver.update_doc(fresh, "table\n")
    assert driver.BEGIN_MARKER in fresh.read_text()


def test_render_markdown_reports_verdicts():
    case = driver.CASES["r1"]
    fs = _runs([0.1], [10.0], [json.loads(_fs_line(goodput_mbps=95.0))])
    ns2 = _runs([1.0], [19.0], [{"acked_pkts": 489109, "goodput_mbps": 95.2, "drops": 1352}])
    ns3 = driver.SimRuns(status="missing", note="ns-3 libraries (libns3*.so) not installed")
    report = {"r1": driver.build_case_result(case, fs, ns2, ns3),
              "meta": {"machine": {"nproc": 2, "cpu_model": "Test CPU"},
                       "settings": {"repeat": 1, "ns3_repeat": 1, "peer_timeout_s": 900.0},
                       "commands": ["ns bench/peers/ns2_dumbbell.tcl 16 60 100 20 250 Newreno"]}}
    text = driver.render_markdown(report)
    assert "Test CPU" in text
    assert "| ≥ 5× faster than ns-2 (wall time) | 10.0× | **met** |" in text
    assert "faster than ns-3 (wall time) | – | not measured |" in text
    assert "ns-3 libraries (libns3*.so) not installed" in text
    assert "489,109" in text and "1,352" in text
    assert "ns bench/peers/ns2_dumbbell.tcl 16 60 100 20 250 Newreno" in text
    # The generated commands need the peers: the page's command check skips them.
    assert driver.DOCS_TEST_SKIP + "\n\n```sh\n" in text


# ---------------------------------------------------------------------------------------------
# Small pure helpers


def test_peer_arguments_match_the_reference_dumbbells():
    assert driver.CASES["r1"].peer_args() == ["16", "60", "100", "20", "250"]
    assert driver.CASES["r2"].peer_args() == ["100", "60", "1000", "20", "1000"]


def test_ns3_compile_command_links_every_library(tmp_path):
    libs = [Path("/usr/lib/x86_64-linux-gnu/libns3-core.so"),
            Path("/opt/ns3/lib/libns3.37-internet-default.so")]
    cmd = driver.ns3_compile_command(tmp_path, libs)
    assert cmd[:3] == ["g++", "-O2", "-std=c++17"]
    assert "-lns3-core" in cmd and "-lns3.37-internet-default" in cmd
    assert "-L/opt/ns3/lib" in cmd and not any(a.startswith("-L/usr/lib") for a in cmd)


def test_ns3_peer_missing_libraries_or_stale_binary(tmp_path, monkeypatch):
    monkeypatch.delenv("FLOWSHARE_NS3", raising=False)
    monkeypatch.setattr(driver, "ns3_libraries", lambda: [])
    (tmp_path / "bench" / "peers").mkdir(parents=True)
    binary, reason = driver.ensure_ns3_binary(tmp_path, lambda msg: None)
    assert binary is None and "not installed" in reason
    source = tmp_path / driver.NS3_SOURCE
    source.write_text("int main() { return 0; }\n")
    built = tmp_path / driver.NS3_BINARY
    built.parent.mkdir(parents=True)
    built.write_text("")
    os.utime(source, (1_000_000, 1_000_000))
    os.utime(built, (2_000_000, 2_000_000))
    assert driver.ensure_ns3_binary(tmp_path, lambda msg: None) == (built, None)
    os.utime(source, (3_000_000, 3_000_000))          # edited after the build: rebuild needed
    binary, reason = driver.ensure_ns3_binary(tmp_path, lambda msg: None)
    assert binary is None and "not installed" in reason


def test_scenario_mismatches(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(SCENARIO)
    assert driver.scenario_mismatches(p, driver.CASES["r1"]) == []
    problems = driver.scenario_mismatches(p, driver.CASES["r2"])
    assert any("16 flows" in x for x in problems)
    p.write_text(SCENARIO.replace('"60s"', '"1min"'))
    assert driver.scenario_mismatches(p, driver.CASES["r1"]) == []
    p.write_text(SCENARIO.replace('"60s"', '"10s"'))
    assert driver.scenario_mismatches(p, driver.CASES["r1"]) == ["duration 10s, expected 60s"]


def test_median_and_ratio_helpers():
    assert driver._median([3.0, 1.0, 2.0, 10.0]) == pytest.approx(2.5)
    assert driver._median([]) is None
    assert driver._ratio(1.0, 0.0) is None and driver._ratio(None, 1.0) is None
    assert math.isclose(driver._ratio(3.0, 2.0), 1.5)


# ---------------------------------------------------------------------------------------------
# The ns-2 peer script itself


REPO = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")
def test_ns2_peer_prints_goodput_and_drops(tmp_path):
    script = REPO / "bench" / "peers" / "ns2_dumbbell.tcl"
    helper = driver.ensure_rusage_helper(tmp_path) if HAVE_CC else None
    res = driver.measure_process(["ns", str(script), "4", "5", "10", "20", "20", "Newreno"],
                                timeout=120, rusage_helper=helper)
    assert res.ok, res.stderr
    parsed = driver.parse_peer_output(res.stdout)
    # Four flows through 10 Mbps for 5 s: at most 10e6 * 5 / (1500 * 8) = 4167 data packets.
    assert 2000 < parsed["acked_pkts"] <= 4167
    assert parsed["drops"] is not None and parsed["drops"] > 0
    if helper is not None:
        assert res.peak_mib is not None and 1 < res.peak_mib < 100


# ---------------------------------------------------------------------------------------------
# Algorithm lines


def test_every_algorithm_scenario_is_r1_with_one_field_changed(tmp_path):
    from flowshare import load_scenario

    r1 = REPO / "scenarios" / "r1-dumbbell.toml"
    paths = algorithms.write_scenarios(r1, tmp_path)
    assert list(paths) == [label for label, _ in algorithms.ROWS]
    assert list(paths)[-1] == "tfrc"
    base = load_scenario(r1)
    for label, cc in algorithms.ALGORITHMS:
        scen = load_scenario(paths[label])        # the real loader accepts every algorithm
        algo = cc if isinstance(cc, str) else cc["algo"]
        assert scen["flows"][0]["tcp"]["cc"]["algo"] == algo
        scen["flows"][0]["tcp"]["cc"] = base["flows"][0]["tcp"]["cc"]
        assert scen == base, label
    # The SACK controllers and their baseline: R1 with the cc and SACK recovery.
    for label, cc in (("sack", "reno"), *algorithms.SACK_CONTROLLERS):
        scen = load_scenario(paths[label])
        tcp = scen["flows"][0]["tcp"]
        assert tcp["recovery"] == "sack"
        assert tcp["cc"]["algo"] == (cc if isinstance(cc, str) else cc["algo"])
        tcp["cc"], tcp["recovery"] = (base["flows"][0]["tcp"][k] for k in ("cc", "recovery"))
        assert scen == base, label
    # TFRC in place of TCP, with R1's segment and header sizes.
    load_scenario(paths["tfrc"])                  # the real loader accepts it
    tfrc = json.loads(paths["tfrc"].read_text())
    group = tfrc["flows"][0]
    assert group["transport"] == "tfrc" and "tcp" not in group
    assert group["tfrc"] == {"packet_size": "1460B", "header": "40B"}
    assert tfrc["topology"] == tomllib.loads(r1.read_text())["topology"]
    assert group["count"] == base["flows"][0]["count"]


def test_row_scenario_needs_flow_groups():
    with pytest.raises(ValueError, match="flows:"):
        algorithms.row_scenario({"simulation": {}}, {"tcp.cc": "reno"})


def test_relative_cost_flags_slow_algorithms():
    rows = [algorithms.summarize(label, label, [1.0], [{"wall_s": w, "events": 1000,
                                                              "goodput_mbps": 90.0, "drops": 3}],
                                       driver._median)
            for label, w in (("reno", 0.001), ("cubic", 0.0014), ("fast", 0.002))]
    # TFRC is judged by the packet: few events (no per-segment ACKs), 1.6 times Reno's time
    # per delivered packet.
    rows.append(algorithms.summarize("tfrc", {}, [1.0], [{"wall_s": 0.0008, "events": 500,
                                                          "acked_pkts": 50, "goodput_mbps": 90.0,
                                                          "drops": 3}], driver._median))
    rows[0]["packets"], rows[0]["ns_per_packet"] = 100, 0.001 * 1e9 / 100
    algorithms.add_relative_cost(rows)
    assert [r["ns_per_event"] for r in rows] == pytest.approx([1000, 1400, 2000, 1600])
    assert rows[-1]["packet_cost_vs_reno"] == pytest.approx(1.6)
    assert [r["slow"] for r in rows] == [False, False, True, True]
    text = "\n".join(algorithms.render(rows, 1))
    assert "| `fast` |" in text and "2.00× **slow**" in text and "1.40×" in text
    assert "| `tfrc` |" in text and "1.60× **slow**" in text


def test_sack_controllers_are_judged_against_sack():
    rows = [algorithms.summarize(label, label, [1.0], [{"wall_s": w, "events": 1000,
                                                       "goodput_mbps": 90.0, "drops": 3}],
                                 driver._median)
            for label, w in (("reno", 0.001), ("sack", 0.002), ("pamultcp", 0.0028),
                             ("mpat", 0.0032))]
    algorithms.add_relative_cost(rows)
    assert [r["baseline"] for r in rows] == ["reno", "reno", "sack", "sack"]
    assert [r["cost_vs_reno"] for r in rows] == pytest.approx([1.0, 2.0, 1.4, 1.6])
    assert [r["slow"] for r in rows] == [False, True, False, True]


def test_cli_algorithm_lines_run_r1_once_per_algorithm(tmp_path, capsys):
    body = textwrap.dedent("""\
        import json, sys
        scen = json.load(open(sys.argv[1]))
        cc = scen["flows"][0].get("tcp", {}).get("cc", "tfrc")
        algo = cc if isinstance(cc, str) else cc["algo"]
        events = 2000 if algo == "vegas" else 1000
        print(json.dumps({"wall_s": 0.001, "events": events, "acked_pkts": 1,
                          "goodput_mbps": 90.0, "drops": 1}))
    """)
    root, sim = _fake_repo(tmp_path, body)
    doc = tmp_path / "performance.md"
    status = driver.run_cli(_args("--json", "--cases", "algorithms", "--repeat", "1",
                                 "--root", str(root), "--sim", str(sim), "--write-doc", str(doc)))
    out, _ = capsys.readouterr()
    assert status == 0
    rows = json.loads(out)["algorithms"]["rows"]
    assert [r["algorithm"] for r in rows] == [label for label, _ in algorithms.ROWS]
    vegas = next(r for r in rows if r["algorithm"] == "vegas")
    assert vegas["cost_vs_reno"] == pytest.approx(0.5)     # twice the events in the same time
    assert "r1" not in json.loads(out)
    assert "### Algorithms: R1 with each congestion-control algorithm" in doc.read_text()


def test_cli_algorithm_failure_names_the_algorithm(tmp_path, capsys):
    body = "import sys\nprint('flowshare-sim: error: tcp.cc: unknown algorithm', file=sys.stderr)\nsys.exit(1)\n"
    root, sim = _fake_repo(tmp_path, body)
    status = driver.run_cli(_args("--cases", "algorithms", "--repeat", "1", "--root", str(root),
                                 "--sim", str(sim)))
    err = capsys.readouterr().err
    assert status == 1
    assert 'R1 with {"tcp.cc": "reno"} failed: flowshare-sim: error: tcp.cc: unknown algorithm' in err


def test_workload_cases_derive_their_scenarios_and_render() -> None:
    from bench import workloads as bw

    root = Path(__file__).resolve().parent.parent
    r1 = (root / "scenarios" / "r1-dumbbell.toml").read_text()
    text = bw.setup_scenario(r1, 26_000)
    assert "count = 26000" in text and 'duration = "1ms"' in text
    assert 'sample_interval = "0s"' in text
    web = bw.web_scenario((root / bw.WEB_SCENARIO).read_text(), 100_000)
    assert "limit = 100000" in web
    tiers = bw.web_scenario((root / bw.WEB_THREE_TIER).read_text(), 1_000_000)
    assert tiers.count("limit = 62500\n") == 16
    with pytest.raises(ValueError, match="share"):
        bw.web_scenario((root / bw.WEB_THREE_TIER).read_text(), 1_000_001)
    with pytest.raises(ValueError, match="count"):
        bw.setup_scenario("no count here", 5)
    setup = {
        "repeat": 1,
        "python": True,
        "meets_target": True,
        "rows": [{"flows": 26_000, "sim_s": 0.3, "peak_mib": 200.0, "python_s": 0.45}],
    }
    web_res = {"rows": [{"scenario": "scenarios/web-three-tier.toml", "limit": 10,
                         "transfers": 10, "wall_s": 0.1, "peak_mib": 9.0, "slots": 3,
                         "events": 1000, "ns_per_event": 120.0}]}
    md = "\n".join(bw.render(setup, web_res))
    assert "| 26,000 | 0.300 s | 200.0 MiB | 0.450 s |" in md
    assert "**met**" in md and "| `web-three-tier` | 10 | 0.10 s | 9.0 MiB | 3 | 1,000 | 120 ns |" in md


def test_population_case_scales_r1_and_judges_the_largest(tmp_path) -> None:
    from bench import workloads as bw

    root = Path(__file__).resolve().parent.parent
    r1 = (root / "scenarios" / "r1-dumbbell.toml").read_text()
    text = bw.population_scenario(r1, 10_000)
    assert "count = 10000" in text and 'duration = "2s"' in text
    assert 'rate = "10000Mbps", delay = "20ms", queue = { limit = 25000 }' in text
    assert 'start_spacing = "10000ns"' in text and 'sample_interval = "0s"' in text
    with pytest.raises(ValueError, match="bottleneck"):
        bw.population_scenario(r1.replace("bottleneck = {", "bottleneck  = {"), 5)

    def measure(argv):
        flows = 16 if argv[1].endswith("r1.toml") else int(Path(argv[1]).stem.split("-")[1])
        ns = 100 if flows == 16 else 150 * (2 if flows > 10_000 else 1)
        out = json.dumps({"events": 1000, "wall_s": ns * 1000 / 1e9, "goodput_mbps": 5.0,
                          "drops": 7, "acked_pkts": 250})
        return driver.ProcessResult(argv, 0, 1.0, flows * 1500 / 2**20, out + "\n", "")

    res = bw.run_population(Path("sim"), _write(tmp_path / "r1.toml", r1), 3, measure,
                            lambda xs: sorted(xs)[len(xs) // 2], lambda _m: None, tmp_path)
    assert res["r1_ns_per_event"] == pytest.approx(100)
    small, large = res["rows"]
    assert small["vs_r1"] == pytest.approx(1.5) and large["vs_r1"] == pytest.approx(3.0)
    assert large["bytes_per_flow"] == pytest.approx(1500)
    assert large["events_per_packet"] == pytest.approx(4.0)
    assert res["meets_target"] is False  # 3× R1's time per event, although 1,500 B per flow
    md = "\n".join(bw.render(None, None, None, res))
    assert "### Many concurrent flows" in md and "| 100,000 | 1,000 | 300 ns | 3.00× |" in md
    assert "**not met**" in md


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --- the end-to-end case: flowshare run on R1 beside the simulation and ns-2 -------------------


def test_e2e_case_reports_the_overhead_over_the_simulation(tmp_path):
    from bench import workloads as bw

    calls = []

    def measure(argv):
        calls.append(argv)
        if argv[0] == "ns":
            return driver.ProcessResult(argv, 0, 0.7, 20.0, "acked_pkts 1", "")
        if "run" in argv:
            return driver.ProcessResult(argv, 0, 0.25, 35.0, "", "")
        return driver.ProcessResult(argv, 0, 0.2, 7.0, "{\"wall_s\": 0.18}\n", "")

    res = bw.run_e2e(Path("sim"), Path("r1.toml"), ["ns", "x.tcl"], 3, measure,
                     lambda xs: sorted(xs)[len(xs) // 2], lambda _m: None, tmp_path)
    assert res["sim_s"] == 0.18 and res["run_s"] == 0.25 and res["ns2_s"] == 0.7
    assert res["overhead_s"] == pytest.approx(0.07)
    assert res["run_peak_mib"] == 35.0 and res["meets_target"] is True
    run_argv = [a for a in calls if "run" in a][0]
    assert run_argv[1:4] == ["-m", "flowshare", "run"] and "--no-progress" in run_argv
    text = "\n".join(bw.render(None, None, res))
    assert "### End to end: flowshare run on R1" in text
    assert "| ns-2 | 0.700 s | 20.0 MiB |" in text
    assert "**met**" in text


def test_e2e_is_a_case_choice():
    from bench import driver

    assert "e2e" in driver.CASE_CHOICES
