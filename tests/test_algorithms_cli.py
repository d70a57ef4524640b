"""``flowshare algorithms``: the registry's algorithms, parameters and defaults, and the hints
for unknown names."""

from __future__ import annotations

import json

import pytest

from flowshare import ConfigError, cli
from flowshare import algorithms as alg
from flowshare import scenario as sc


def _scenario_with_cc(cc: object) -> dict:
    # The aggregates (several window loops in one connection) need SACK recovery.
    algo = cc.get("algo") if isinstance(cc, dict) else cc
    loops = algo in ("pamultcp", "mpat")
    tcp = {"cc": cc, "recovery": "sack"} if loops else {"cc": cc}
    return sc.dumbbell(
        bottleneck=sc.link(rate="10Mbps", delay="10ms"),
        access=sc.link(rate="100Mbps", delay="1ms"),
        flows=sc.flows(tcp=tcp),
        duration="1s",
    )


def _core_names() -> list[str]:
    """The algorithms the core accepts, as its refusal of a far-off name lists them."""
    with pytest.raises(ConfigError) as info:
        sc.load_scenario(_scenario_with_cc("zzzzzzzzzzzz"))
    message = str(info.value)
    listed = message.split("algorithms are ", 1)[1].split(" (", 1)[0]
    return listed.split(", ")


def test_every_algorithm_the_core_accepts_is_listed():
    names = alg.names()
    assert names == _core_names()
    for name in names:
        normalized = sc.load_scenario(_scenario_with_cc(name))
        assert normalized["flows"][0]["tcp"]["cc"]["algo"] == name


def _variants(entry: dict) -> list[str | None]:
    return list(entry["variants"]) or [None]


@pytest.mark.parametrize("name", alg.names())
def test_every_listed_default_is_accepted_by_the_core(name):
    entry = alg.describe(name)
    assert entry["summary"] and entry["reference"]
    for variant in _variants(entry):
        table: dict[str, object] = {"algo": name}
        for p in entry["params"]:
            default = p["default"]
            if p["name"] == "variant":
                default = variant
            elif isinstance(default, dict):
                default = default[variant]
            if default is not None:
                table[p["name"]] = default
            assert p["kind"] in ("number", "boolean", "time", "choice"), p
            if p["kind"] == "choice" and p["name"] != "variant":
                assert str(p["default"]) in p["allowed"].split(", ") or isinstance(p["default"], dict)
        # Options of a group whose switch is off by default (hystart_*) are refused then.
        off = [f"{k}_" for k, v in table.items() if v is False]
        table = {k: v for k, v in table.items() if not k.startswith(tuple(off))} if off else table
        given = sc.load_scenario(_scenario_with_cc(table))["flows"][0]["tcp"]["cc"]
        plain = {"algo": name} if variant is None else {"algo": name, "variant": variant}
        assert given == sc.load_scenario(_scenario_with_cc(plain))["flows"][0]["tcp"]["cc"]


def test_listing_text_names_every_algorithm_recovery_and_queue(capsys):
    assert cli.main(["algorithms"]) == 0
    out = capsys.readouterr().out
    for name in alg.names():
        assert f"\n  {name} " in out
    for word in ("newreno", "sack", "tahoe", "droptail", "red", "fq_codel"):
        assert word in out
    assert "flowshare algorithms NAME" in out


def test_one_algorithm_shows_parameters_defaults_and_reference(capsys):
    assert cli.main(["algorithms", "cubic"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cubic — ")
    assert "RFC 9438" in out
    assert "    c = 0.4; > 0 segments/s^3" in out
    assert "variant = rfc; rfc, ns2" in out
    assert "beta = ns2: 0.7998046875, rfc: 0.7; 0 < beta < 1" in out


def test_json_output(capsys):
    assert cli.main(["algorithms", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [a["name"] for a in data["algorithms"]] == alg.names()
    assert {r["name"] for r in data["recoveries"]} == {"tahoe", "reno", "newreno", "sack"}
    assert cli.main(["algorithms", "multcp", "--json"]) == 0
    entry = json.loads(capsys.readouterr().out)
    assert entry["params"][0] == {
        "name": "n",
        "kind": "number",
        "default": 1.0,
        "allowed": "1 to 10000 (real)",
        "description": "number of Reno flows emulated",
    }


def test_the_recoveries_listed_are_what_the_core_accepts():
    for r in alg.listing()["recoveries"]:
        scn = _scenario_with_cc("reno")
        scn["flows"][0]["tcp"]["recovery"] = r["name"]
        assert sc.load_scenario(scn)["flows"][0]["tcp"]["recovery"] == r["name"]
    scn = _scenario_with_cc("reno")
    scn["topology"]["bottleneck"]["queue"] = {"kind": "zzz"}
    with pytest.raises(ConfigError) as info:
        sc.load_scenario(scn)
    accepted = info.value.args[0].split("expected one of ", 1)[1].replace("`", "").split(", ")
    assert sorted(q["name"] for q in alg.listing()["queues"]) == sorted(accepted)


def test_unknown_algorithm_on_the_command_line(capsys):
    assert cli.main(["algorithms", "cubicc"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "flowshare: error: unknown algorithm 'cubicc'; did you mean 'cubic'? "
        f"(algorithms: {', '.join(alg.names())})"
    ]


@pytest.mark.parametrize(
    ("cc", "expected"),
    [
        ("newreno", 'flows[0].tcp.cc: unknown algorithm "newreno"; NewReno is recovery = "newreno" '
                    'with cc = "reno" (`flowshare algorithms` lists them with their parameters)'),
        ("NewReno", 'NewReno is recovery = "newreno" with cc = "reno"'),
        ("sack", 'sack is recovery = "sack" with cc = "reno"'),
        ("cubicc", 'flows[0].tcp.cc: unknown algorithm "cubicc"; did you mean "cubic"?'),
        ("htpc", 'did you mean "htcp"'),
        ("fq_codel", 'fq_codel is a queue discipline, queue.kind = "fq_codel"'),
        ({"algo": "vegass"}, 'flows[0].tcp.cc: unknown algorithm "vegass"; did you mean "vegas"'),
    ],
)
def test_unknown_names_get_a_hint(cc, expected):
    with pytest.raises(ConfigError) as info:
        sc.load_scenario(_scenario_with_cc(cc))
    message = str(info.value)
    assert expected in message
    assert "\n" not in message and " line " not in message and "column" not in message
