"""Sweep definitions: parameters by dotted path, grid/zip/points/factorial arms, seeds and
common random numbers, responses, and one precise error line for every malformed field."""

from __future__ import annotations

import math

import numpy as np
import pytest
from core_tables import TINY_TOML

from flowshare import ConfigError, cli
from flowshare.study import derive_seed, load_sweep
from flowshare.study.sweep import DEFAULT_RESPONSES, Response, apply_parameter, parse_path


def write_sweep(tmp_path, body: str):
    """A sweep file next to a tiny base scenario ``tiny.toml``."""
    (tmp_path / "tiny.toml").write_text(TINY_TOML, encoding="utf-8")
    path = tmp_path / "sweep.toml"
    path.write_text(body, encoding="utf-8")
    return path


# --- paths ------------------------------------------------------------------------------------


def test_parse_path_splits_names_and_indices():
    assert parse_path("topology.bottleneck.rate") == ["topology", "bottleneck", "rate"]
    assert parse_path("flows[0].tcp.cc") == ["flows", 0, "tcp", "cc"]
    assert parse_path("topology.links[2].queue.limit") == ["topology", "links", 2, "queue", "limit"]
    for bad in ("", "a..b", "flows[x]", "a.b[", "1a", "a-b"):
        with pytest.raises(ValueError):
            parse_path(bad)


def test_apply_parameter_sets_nested_fields_and_creates_missing_tables():
    scenario = {"flows": [{"name": "a"}, {"name": "b"}], "topology": {"bottleneck": {}}}
    apply_parameter(scenario, "flows[1].tcp.cc", "cubic")
    apply_parameter(scenario, "topology.bottleneck.rate", "5Mbps")
    apply_parameter(scenario, "flows[0].name", "c")
    assert scenario == {
        "flows": [{"name": "c"}, {"name": "b", "tcp": {"cc": "cubic"}}],
        "topology": {"bottleneck": {"rate": "5Mbps"}},
    }
    with pytest.raises(ValueError, match="index 2 is out of range: flows has 2 entries"):
        apply_parameter(scenario, "flows[2].name", "x")
    with pytest.raises(ValueError, match="topology is not a list"):
        apply_parameter(scenario, "topology[0].x", 1)


# --- arms -------------------------------------------------------------------------------------


def test_blocks_combine_as_a_product_first_block_slowest(tmp_path):
    path = write_sweep(
        tmp_path,
        """
base = "tiny.toml"
[grid]
"topology.bottleneck.rate" = ["5Mbps", "10Mbps"]
"topology.bottleneck.queue.limit" = [10, 20, 30]
[zip]
"topology.bottleneck.delay" = ["2ms", "8ms"]
"topology.access.delay" = ["1ms", "3ms"]
[[points]]
"flows[0].count" = 1
[[points]]
"flows[0].count" = 3
""",
    )
    sweep = load_sweep(path)
    assert sweep.parameters == [
        "topology.bottleneck.rate", "topology.bottleneck.queue.limit",
        "topology.bottleneck.delay", "topology.access.delay", "flows[0].count",
    ]
    assert len(sweep.arms) == 2 * 3 * 2 * 2
    assert sweep.arms[0] == {
        "topology.bottleneck.rate": "5Mbps", "topology.bottleneck.queue.limit": 10,
        "topology.bottleneck.delay": "2ms", "topology.access.delay": "1ms", "flows[0].count": 1,
    }
    assert sweep.arms[1]["flows[0].count"] == 3
    assert sweep.arms[2]["topology.bottleneck.delay"] == "8ms"
    assert sweep.arms[2]["topology.access.delay"] == "3ms"  # lock-step
    assert sweep.arms[-1]["topology.bottleneck.rate"] == "10Mbps"
    assert len({tuple(a.values()) for a in sweep.arms}) == len(sweep.arms)
    normalized = sweep.validate()
    last = normalized[-1]
    assert last["topology"]["bottleneck"]["queue"]["limit"] == 30
    assert len(normalized) == 24


def test_factorial_maps_levels_and_keeps_coded_rows(tmp_path):
    path = write_sweep(
        tmp_path,
        """
base = "tiny.toml"
[factorial]
generators = { D = "ABC" }
[factorial.factors]
A = { parameter = "topology.bottleneck.rate", levels = ["5Mbps", "10Mbps"] }
B = { parameter = "topology.bottleneck.delay", levels = ["2ms", "8ms"] }
C = { parameter = "topology.bottleneck.queue.limit", levels = [10, 40] }
D = { parameters = { "flows[0].tcp.recovery" = ["newreno", "sack"], "flows[0].name" = ["x", "y"] } }
""",
    )
    sweep = load_sweep(path)
    assert len(sweep.arms) == 8
    assert sweep.coded is not None
    coded = np.array([[c[f] for f in "ABCD"] for c in sweep.coded])
    np.testing.assert_array_equal(coded[:, 3], coded[:, 0] * coded[:, 1] * coded[:, 2])
    for arm, code in zip(sweep.arms, sweep.coded, strict=True):
        assert arm["topology.bottleneck.rate"] == ("5Mbps" if code["A"] < 0 else "10Mbps")
        assert arm["topology.bottleneck.queue.limit"] == (10 if code["C"] < 0 else 40)
        assert arm["flows[0].tcp.recovery"] == ("newreno" if code["D"] < 0 else "sack")
        assert arm["flows[0].name"] == ("x" if code["D"] < 0 else "y")
    block = sweep.to_json()["design"]["blocks"][0]
    assert block["resolution"] == 4 and block["runs"] == 8
    assert sweep.to_json()["arms"][1]["coded"] == {"A": 1, "B": -1, "C": -1, "D": 1}


# --- seeds ------------------------------------------------------------------------------------


def test_seeds_are_deterministic_independent_and_common_across_arms(tmp_path):
    body = """
base = "tiny.toml"
replications = 4
root_seed = 11
{crn}
[grid]
"topology.bottleneck.rate" = ["5Mbps", "10Mbps", "20Mbps"]
"""
    crn = load_sweep(write_sweep(tmp_path, body.format(crn="")))
    runs = crn.runs()
    assert len(runs) == 12
    by = {(r.arm, r.replication): r.seed for r in runs}
    for rep in range(4):
        assert by[0, rep] == by[1, rep] == by[2, rep]  # common random numbers
    assert len({by[0, rep] for rep in range(4)}) == 4  # replications independent
    assert [r.scenario["simulation"]["seed"] for r in runs] == [r.seed for r in runs]
    assert by[0, 0] == derive_seed(11, 0)
    assert derive_seed(11, 0) != derive_seed(12, 0)
    assert all(0 <= s < 2**63 for s in by.values())
    again = load_sweep(write_sweep(tmp_path, body.format(crn="")))
    assert [r.seed for r in again.runs()] == [r.seed for r in runs]
    assert len({r.run_id for r in runs}) == 12
    assert len({r.scenario_hash for r in runs}) == 12

    off = load_sweep(write_sweep(tmp_path, body.format(crn="common_random_numbers = false")))
    seeds = [r.seed for r in off.runs()]
    assert len(set(seeds)) == 12
    assert seeds[0] == derive_seed(11, 0, 0) and seeds[4] == derive_seed(11, 0, 1)


def test_common_random_numbers_give_the_same_randomness_to_every_arm():
    """With CRN, two arms that differ only in a field the random streams do not see (the flow
    name) get identical losses; replications differ."""
    from flowshare.study.execute import execute_run

    base = {
        "simulation": {"duration": "2s", "sample_interval": "0s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "10Mbps", "delay": "5ms",
                           "loss": {"model": "bernoulli", "p": 0.01}},
            "access": {"rate": "100Mbps", "delay": "1ms"},
        },
        "flows": [{"name": "bulk", "count": 2}],
    }
    sweep = load_sweep({"base": base, "replications": 2, "grid": {"flows[0].name": ["a", "b"]}})
    outcomes = {
        (r.arm, r.replication): execute_run(
            {"run_id": r.run_id, "scenario": r.scenario, "responses": []}
        )
        for r in sweep.runs()
    }
    assert all(o["ok"] for o in outcomes.values())
    drops = {k: o["responses"]["retransmits"] for k, o in outcomes.items()}
    assert drops[0, 0] == drops[1, 0] and drops[0, 1] == drops[1, 1]
    assert drops[0, 0] != drops[0, 1]
    assert outcomes[0, 0]["files"]["queues.csv"] == outcomes[1, 0]["files"]["queues.csv"]


# --- responses --------------------------------------------------------------------------------


def test_responses_filter_and_aggregate(result):
    # The hand-built result: goodput 3e6 (newreno) and 1e6 (sack), both cc = "reno".
    def value(**kwargs):
        return Response(name="r", **kwargs).evaluate(result)

    assert value(table="flows", column="goodput_bps") == 2e6
    assert value(table="flows", column="goodput_bps", where={"recovery": "sack"}) == 1e6
    assert value(table="flows", column="goodput_bps", agg="sum") == 4e6
    assert value(table="flows", column="goodput_bps", agg="max") == 3e6
    assert value(table="flows", column="goodput_bps", agg="std") == pytest.approx(
        math.sqrt(2e12)
    )
    assert value(table="flows", column="retransmits", where={"recovery": ["sack", "x"]}) == 1
    assert value(table="flows", column="goodput_bps", where={"cc": "cubic"}, agg="count") == 0
    assert math.isnan(value(table="flows", column="goodput_bps", where={"cc": "cubic"}))
    with pytest.raises(ValueError, match="responses.r: flows has no column 'nope'"):
        value(table="flows", column="nope")


def test_default_responses_are_the_aggregate(result):
    from flowshare.study.sweep import evaluate_responses

    values = evaluate_responses(result, [])
    assert list(values) == list(DEFAULT_RESPONSES)
    aggregate = result.aggregate()
    for name in DEFAULT_RESPONSES:
        assert values[name] == pytest.approx(float(aggregate[name]))


# --- malformed sweeps: one checker ------------------------------------------------------------

GRID = '[grid]\n"topology.bottleneck.rate" = ["5Mbps"]\n'
MALFORMED = [
    ('base = "tiny.toml"\nfrobnicate = 1\n',
     "frobnicate: unknown field; allowed: base, set, replications, root_seed, "
     "common_random_numbers, grid, zip, points, factorial, responses"),
    ("replications = 2\n", "base: missing; give a scenario file path or an inline [base] table"),
    ("base = 3\n", "base: expected a scenario file path or a table, got the number 3"),
    ('base = "nope.toml"\n', "base: scenario file not found: "),
    ('base = "tiny.txt"\n', "base: 'tiny.txt' is not a .toml or .json scenario file"),
    ('[base]\nsimulation = { duration = "1s" }\n', "base: missing field `topology`"),
    ('base = "tiny.toml"\nreplications = 0\n', "replications: expected an integer >= 1, got 0"),
    ('base = "tiny.toml"\nreplications = "3"\n', "replications: expected an integer >= 1, got '3'"),
    ('base = "tiny.toml"\nroot_seed = -1\n', "root_seed: expected an integer >= 0, got -1"),
    ('base = "tiny.toml"\ncommon_random_numbers = "yes"\n',
     "common_random_numbers: expected true or false, got 'yes'"),
    ('base = "tiny.toml"\ngrid = 3\n', "grid: expected a non-empty table, got the number 3"),
    ('base = "tiny.toml"\n[grid]\n"topology.bottleneck.rate" = "5Mbps"\n',
     "grid.\"topology.bottleneck.rate\": expected a non-empty list of values, got the string "
     "'5Mbps'"),
    ('base = "tiny.toml"\n[grid]\n"topology.bottleneck.rate" = []\n',
     'grid."topology.bottleneck.rate": expected a non-empty list of values, got an empty list'),
    ('base = "tiny.toml"\n[grid]\n"topology..rate" = [1]\n',
     "grid.\"topology..rate\": '' is not a field name"),
    ('base = "tiny.toml"\n[grid]\n"simulation.seed" = [1, 2]\n',
     'grid."simulation.seed": the seed is set per run from root_seed'),
    ('base = "tiny.toml"\n[zip]\n"topology.bottleneck.rate" = ["5Mbps", "6Mbps"]\n'
     '"topology.bottleneck.delay" = ["1ms"]\n',
     'zip: lists must have the same length ("topology.bottleneck.rate" has 2, '
     '"topology.bottleneck.delay" has 1)'),
    ('base = "tiny.toml"\n[[zip]]\n"topology.bottleneck.rate" = ["5Mbps"]\n[[zip]]\nx = 1\n',
     "zip[1].x: expected a non-empty list of values, got the number 1"),
    ('base = "tiny.toml"\npoints = 3\n',
     "points: expected a non-empty list of tables ([[points]]), got the number 3"),
    ('base = "tiny.toml"\n[[points]]\n"topology.bottleneck.rate" = "5Mbps"\n'
     '[[points]]\n"topology.bottleneck.delay" = "1ms"\n',
     "points[1]: sets topology.bottleneck.delay; every point must set the same parameters as "
     "points[0] (topology.bottleneck.rate)"),
    ('base = "tiny.toml"\n' + GRID + '[zip]\n"topology.bottleneck.rate" = ["1Mbps"]\n',
     'zip."topology.bottleneck.rate": parameter already set by grid'),
    ('base = "tiny.toml"\n[factorial.factors]\na = { parameter = "x", levels = [1, 2] }\n',
     "factorial.factors.a: factor names are single capital letters A-Z"),
    ('base = "tiny.toml"\n[factorial]\ngenerators = { C = "AB" }\n'
     '[factorial.factors]\nA = { parameter = "x", levels = [1, 2] }\n',
     "factorial.generators.C: not a factor; the factors are A"),
    ('base = "tiny.toml"\n[factorial]\ngenerators = { B = "A" }\n'
     '[factorial.factors]\nA = { parameter = "x", levels = [1, 2] }\n'
     'B = { parameter = "y", levels = [1, 2] }\n',
     "factorial.generators: generator B = 'A' aliases B with a main effect"),
    ('base = "tiny.toml"\n[factorial.factors]\n'
     'A = { parameter = "topology.bottleneck.rate", levels = ["1Mbps", "2Mbps", "3Mbps"] }\n',
     "factorial.factors.A.levels: expected two values [low, high], got a list of 3"),
    ('base = "tiny.toml"\n[factorial.factors]\nA = { parameter = "topology.bottleneck.rate" }\n',
     "factorial.factors.A.levels: missing; a factor needs parameter and levels = [low, high]"),
    ('base = "tiny.toml"\n[factorial]\nfactors = { A = { parameter = "x", levels = [1, 2] } }\n'
     'runs = 8\n',
     "factorial.runs: unknown field; allowed: factors, generators"),
    ('base = "tiny.toml"\n[responses]\nx = { table = "links", column = "drops" }\n',
     "responses.x.table: expected one of flows, queues, got 'links'"),
    ('base = "tiny.toml"\n[responses]\nx = { table = "flows", column = "drops", agg = "avg" }\n',
     "responses.x.agg: expected one of mean, sum, min, max, median, std, count, got 'avg'"),
    ('base = "tiny.toml"\n[responses]\nx = { table = "flows" }\n',
     "responses.x.column: expected a column name, got None"),
    ('base = "tiny.toml"\n[responses]\ngoodput_bps = { table = "flows", column = "x" }\n',
     "responses.goodput_bps: goodput_bps is a default response (recorded always); choose "
     "another name"),
    ('base = "tiny.toml"\n[responses]\nx = { table = "flows", column = "c", where = 3 }\n',
     "responses.x.where: expected a table of column = value, got the number 3"),
    ('base = "tiny.toml"\n[responses]\nx = { table = "flows", column = "c", colour = 1 }\n',
     "responses.x.colour: unknown field; allowed: table, column, where, agg"),
    ('base = "tiny.toml"\n[responses]\nx = { table = "flows", column = "c", better = "more" }\n',
     'responses.x.better: expected "higher" or "lower" (which values are better), got \'more\''),
    ('base = "tiny.toml"\n[responses]\nseed = { table = "flows", column = "c" }\n',
     "responses.seed: clashes with a catalog column; choose another name"),
    ('base = "tiny.toml"\nset = { "flows[3].name" = "x" }\n',
     'set."flows[3].name": index 3 is out of range: flows has 1 entries in the base scenario'),
    ('base = "tiny.toml"\nset = { "topology.bottleneck.rate" = "fast" }\n',
     "set: topology.bottleneck.rate"),
    ('base = "tiny.toml"\nreplications = 2\n[grid\n', "invalid TOML: "),
    # Arms are validated before anything runs; the error names the arm and its values.
    ('base = "tiny.toml"\n[grid]\n"topology.bottleneck.rate" = ["5Mbps", "fast"]\n',
     'arm 1 (topology.bottleneck.rate = "fast"): topology.bottleneck.rate: '),
    ('base = "tiny.toml"\n[grid]\n"flows[4].name" = ["x"]\n',
     'arm 0 (flows[4].name = "x"): flows[4].name: index 4 is out of range: flows has 1 '
     "entries in the base scenario"),
    ('base = "tiny.toml"\n[grid]\n"topology.bottleneck.colour" = ["red"]\n',
     'arm 0 (topology.bottleneck.colour = "red"): topology.bottleneck.colour: unknown field'),
]


@pytest.mark.parametrize(("body", "expected"), MALFORMED)
def test_malformed_sweeps_get_one_precise_line(body, expected, tmp_path, capsys):
    path = write_sweep(tmp_path, body)
    out = tmp_path / "out"
    assert cli.main(["sweep", str(path), "--out", str(out), "--no-progress"]) == 1
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    prefix = f"flowshare: error: {path}: "
    assert lines[0].startswith(prefix), lines[0]
    assert expected in lines[0][len(prefix):], lines[0]
    assert captured.out == ""
    assert not out.exists()  # nothing ran, nothing written


def test_sweep_from_python_mapping_with_inline_base_and_relative_path(tmp_path):
    (tmp_path / "tiny.toml").write_text(TINY_TOML, encoding="utf-8")
    sweep = load_sweep(
        {"base": "tiny.toml", "zip": {"topology.bottleneck.rate": ["5Mbps", "6Mbps"]}},
        base_dir=tmp_path,
    )
    assert [a["topology.bottleneck.rate"] for a in sweep.arms] == ["5Mbps", "6Mbps"]
    assert sweep.source_suffix == ".json"
    with pytest.raises(ConfigError, match=r"^sweep: replications: expected an integer"):
        load_sweep({"base": "tiny.toml", "replications": 1.5}, base_dir=tmp_path)
