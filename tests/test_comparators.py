"""The comparators of MulTFRC from Python: Stochastic TCP in ``flowshare algorithms`` and as a
``tcp.cc``, CP as ``equation = "cp"`` of a TFRC group, with their errors."""

from __future__ import annotations

import json

import pytest

import flowshare
from flowshare import ConfigError, cli
from flowshare import algorithms as alg
from flowshare import scenario as sc


def _dumbbell(*groups: dict) -> dict:
    return sc.dumbbell(
        bottleneck=sc.link(rate="10Mbps", delay="20ms", queue={"limit": 60}),
        access=sc.link(rate="100Mbps", delay="1ms"),
        flows=list(groups),
        duration="10s",
    )


def test_stochastic_is_listed_with_its_parameters(capsys):
    assert "stochastic" in alg.names()
    assert cli.main(["algorithms", "stochastic"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("stochastic — ")
    assert "Hacker and P. Smith" in out and "PFLDnet 2008" in out
    assert "    n = 1; 1 to 64 (whole)" in out
    assert "    acks_per_increase = 1; 1 to 1000000 (whole)" in out
    assert cli.main(["algorithms", "stochastic", "--json"]) == 0
    entry = json.loads(capsys.readouterr().out)
    assert [(p["name"], p["kind"], p["default"]) for p in entry["params"]] == [
        ("n", "number", 1),
        ("acks_per_increase", "number", 1),
    ]


def test_stochastic_runs_and_takes_several_shares():
    scn = _dumbbell(
        sc.flows(name="stochastic", tcp={"cc": {"algo": "stochastic", "n": 4}, "recovery": "sack"}),
        sc.flows(name="reno", start="10ms", tcp={"recovery": "sack"}),
    )
    cc = sc.load_scenario(scn)["flows"][0]["tcp"]["cc"]
    assert cc == {"algo": "stochastic", "n": 4, "acks_per_increase": 1}
    result = flowshare.run(scn)
    g = result.flows.set_index("name").goodput_bps
    assert g["stochastic"] > 2 * g["reno"]
    assert result.flows.set_index("name").cc["stochastic"] == "stochastic"
    assert "stochastic_w_max" in result.flow_series.columns
    with pytest.raises(ConfigError, match=r"flows\[0\]\.tcp\.cc: n: must be a whole number of virtual streams"):
        sc.load_scenario(_dumbbell(sc.flows(tcp={"cc": {"algo": "stochastic", "n": 2.5}})))


def test_cp_sends_more_than_tfrc_and_refuses_n_of_one():
    scn = _dumbbell(
        sc.flows(name="cp", transport="tfrc", tfrc={"equation": "cp", "n": 3}),
        sc.flows(name="tfrc", transport="tfrc"),
    )
    tfrc = sc.load_scenario(scn)["flows"][0]["tfrc"]
    assert (tfrc["equation"], tfrc["n"]) == ("cp", 3.0)
    assert "max_n" not in tfrc
    flows = flowshare.run(scn).flows.set_index("name")
    assert flows.goodput_bps["cp"] > 1.5 * flows.goodput_bps["tfrc"]
    assert 0 < flows.loss_event_rate["cp"] < 1
    with pytest.raises(
        ConfigError,
        match=r'flows\[0\]\.tfrc\.n: expected a number of flow shares above 1 and at most 1000 for equation = "cp", got 1',
    ):
        sc.load_scenario(_dumbbell(sc.flows(transport="tfrc", tfrc={"equation": "cp", "n": 1})))
