"""A run of Mills et al. (2010), NIST SP 500-282 ch. 8, as a scenario: the condition's
factors (Tables 8-13, 8-14), the population on the network, the alternate algorithm and the
initial threshold, and common random numbers across the seven alternates (Table 8-12)."""

from __future__ import annotations

import pytest

from flowshare import sim
from flowshare.reproduce import nist_scenario as ns


def population(s: dict) -> dict:
    return s["flows"][0]["arrivals"]["population"]


def test_condition_1_is_the_first_row_of_table_8_13():
    assert ns.condition(1) == {"x1": 800, "x2": 1, "x3": 0.5, "x4": 5000, "x5": 100, "x6": 2,
                               "x7": 0.7, "x8": 0.7, "x9": 3}
    assert ns.condition(32)["x1"] == 1600 and ns.condition(32)["x2"] == 2


def test_a_full_scale_scenario_places_table_8_16s_population():
    s = ns.scenario(1, "CTCP", "LOW", duration_s=60)
    p = population(s)
    assert sum(p["sources"].values()) == 26_130  # published 26,085 (nist:A18)
    assert sum(p["receivers"].values()) == pytest.approx(4 * 26_130, rel=0.002)
    assert p["interface"] == {"rate": "96000000bps", "fast_rate": "960000000bps", "fast": 0.7}
    assert p["alternate"] == {"cc": "compound", "share": 0.7}
    assert set(p["classes"].values()) == {"direct", "fast", "normal"}
    assert [t["name"] for t in p["file_types"]] == ["movie", "service_pack", "document"]
    tcp = s["flows"][0]["tcp"]
    assert tcp["initial_ssthresh"] == 100 and tcp["max_ssthresh"] == 100
    assert ns.scenario(1, "CTCP", "HIGH")["flows"][0]["tcp"]["initial_ssthresh"] == 2**30
    assert s["simulation"]["duration"] == "60s"


@pytest.mark.parametrize("args, kwargs, match", [
    ((0, "BIC", "HIGH"), {}, "condition: expected 1 to 32"),
    ((1, "CUBIC", "HIGH"), {}, "alternate: expected one of BIC"),
    ((1, "BIC", "MEDIUM"), {}, "threshold: expected HIGH or LOW"),
    ((1, "BIC", "HIGH"), {"duration_s": 0}, "duration_s: must be positive"),
    ((1, "BIC", "HIGH"), {"scale": 0}, "scale: a fraction"),
])
def test_bad_arguments_name_the_field(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ns.scenario(*args, **kwargs)


def run(alternate: str):
    return sim.run(ns.scenario(2, alternate, "HIGH", duration_s=1.5, seed=7, scale=0.05)).transfers


def test_the_seven_alternates_share_their_random_numbers():
    """Common random numbers: each source's first transfer starts at the same time, with the
    same size and type, whatever the alternate; and the same sources run the alternate."""
    a, b = run("BIC"), run("HTCP")
    first = [t.sort_values("start_s").groupby("user").first() for t in (a, b)]
    assert len(first[0]) > 100
    assert first[0].start_s.equals(first[1].start_s)
    assert first[0].size_bytes.equals(first[1].size_bytes)
    kind = [f.name.str.rsplit("/", n=1).str[0] for f in first]
    assert kind[0].equals(kind[1])
    uses = [f.name.str.rsplit("/", n=1).str[1] for f in first]
    assert set(uses[0]) == {"reno", "bic"} and set(uses[1]) == {"reno", "htcp"}
    assert (uses[0] == "reno").equals(uses[1] == "reno")


def test_basic_interfaces_cap_a_transfers_goodput():
    """A source or receiver with a basic interface runs at most 8 packets/ms."""
    t = run("Scalable")
    done = t[t.completion_time_s.notna() & t.name.str.contains("-N/")]
    assert len(done) > 50
    assert done.goodput_bps.max() <= 96e6
