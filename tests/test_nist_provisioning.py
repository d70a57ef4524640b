"""The NIST study's provisioning, workload and population rules against the chapter's printed
tables (Mills et al. 2010, NIST SP 500-282 ch. 8: Tables 8-3 to 8-11, 8-15, 8-16, 8-18,
§8.1.1.1)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from flowshare.reproduce import nist_network as nn
from flowshare.reproduce import nist_workload as nw

# Table 8-15 (Gbit/s at x1 = +1 and −1), with the fast access router's 720 Mbit/s at x1 = −1
# read as 480 (nist:A2).
TABLE_8_15 = {
    "backbone": (38.4, 19.2),
    "pop": (4.8, 2.4),
    "normal": (0.48, 0.24),
    "fast": (0.96, 0.48),
    "direct": (4.8, 2.4),
}

# Table 8-18 (packets): min, avg, max at x3 = 1 and at x3 = 0.5 (POP min 4.096k read as 4.069k,
# nist:A3).
TABLE_8_18 = {
    "backbone": ((65_105, 146_487, 260_422), (32_553, 73_244, 130_211)),
    "pop": ((8_138, 18_311, 32_553), (4_069, 9_155, 16_276)),
}


def test_router_speeds_reproduce_table_8_15():
    hi, lo = nn.speeds(1600), nn.speeds(800)
    for router, (g_hi, g_lo) in TABLE_8_15.items():
        assert nn.gbps(hi[router]) == pytest.approx(g_hi)
        assert nn.gbps(lo[router]) == pytest.approx(g_lo)
    assert hi == {"backbone": 3200, "pop": 400, "direct": 400, "fast": 80, "normal": 40}
    with pytest.raises(ValueError, match="x1"):
        nn.speeds(0)


@pytest.mark.parametrize("router", sorted(TABLE_8_18))
def test_buffers_reproduce_table_8_18(router):
    capacity = {x1: nn.speeds(x1)[router] for x1 in nn.BASE_SPEEDS}
    for x3, printed in zip((1.0, 0.5), TABLE_8_18[router]):
        got = nn.buffer_table(capacity, x3)
        # The chapter prints four significant figures (in thousands above 10,000).
        for value, want in zip((got.min, got.avg, got.max), printed):
            assert value == pytest.approx(want, abs=1.0), (router, x3)


def test_access_buffers_need_the_mean_access_speed_to_halve_with_x1():
    # Table 8-18's access row: 1,294 / 2,912 / 5,176 at x3 = 1, one mean access speed per x1.
    assert 1_294 / nn.RTT_MS == pytest.approx(31.80, abs=0.01)
    assert 5_176 / (2 * nn.RTT_MS) == pytest.approx(2 * 31.80, abs=0.01)
    mean = {800: 1_294 / nn.RTT_MS, 1600: 5_176 / (2 * nn.RTT_MS)}
    assert nn.buffer_table(mean, 1.0).avg == pytest.approx(2_912, abs=1.0)
    # Every access class halves with x1 (the 720 Mbit/s of Table 8-15 would not).
    for c in ("normal", "fast", "direct"):
        assert nn.speeds(1600)[c] == 2 * nn.speeds(800)[c]


def test_path_classes_and_the_placement_shares():
    assert nn.path_class("direct", "direct") == "VF"
    assert nn.path_class("direct", "fast") == nn.path_class("fast", "fast") == "F"
    assert nn.path_class("fast", "normal") == nn.path_class("normal", "direct") == "T"
    with pytest.raises(ValueError, match="access class"):
        nn.path_class("slow", "fast")
    assert sum(nn.PATH_CLASS_P.values()) == pytest.approx(1.0, abs=1e-6)
    for shares in (nn.SOURCE_SHARES, nn.RECEIVER_SHARES, nn.SOURCE_PLACEMENT, nn.RECEIVER_PLACEMENT):
        assert sum(shares.values()) == pytest.approx(1.0)
    # Independent ends with Table 8-10's shares come close to Table 8-11 (the study's own
    # figures follow its topology): within 15 % of VF and 3 % of F.
    p = nn.path_class_from_shares(nn.SOURCE_SHARES, nn.RECEIVER_SHARES)
    assert p["VF"] == pytest.approx(nn.PATH_CLASS_P["VF"], rel=0.15)
    assert p["F"] == pytest.approx(nn.PATH_CLASS_P["F"], rel=0.03)
    assert nn.SOURCES[3] * 4 == 104_340 and nn.SOURCES[2] * 4 == 69_420


def test_large_file_maxima_of_section_8_1_1_1():
    assert nw.max_active(26_085, 2) == {"D": 1044, "SP": 105, "M": 11}
    assert nw.max_active(26_085, 1) == {"D": 1000, "SP": 100, "M": 10}
    assert nw.max_active(17_355, 2) == {"D": 1000, "SP": 100, "M": 10}
    with pytest.raises(ValueError, match="x6"):
        nw.max_active(100, 3)


def _condition_1_minima(kind: str) -> dict[tuple[str, bool, bool], int]:
    # Condition 1: x6 = x7 = x8 = x9 = +1 (0.7, 0.7, 26,085 sources).
    maximum = nw.max_active(26_085, 2)[kind]
    return {(pc, fast, alt): nw.min_active(maximum, pc, fast, alt, 0.7, 0.7)
            for pc in ("VF", "F", "T") for fast in (True, False) for alt in (False, True)}


def test_document_minima_of_condition_1():
    m = _condition_1_minima("D")
    assert all(m[("VF", f, a)] == 1 for f in (True, False) for a in (False, True))
    assert [m[("F", True, False)], m[("F", True, True)], m[("F", False, False)], m[("F", False, True)]] == [2, 4, 1, 2]
    assert [m[("T", True, False)], m[("T", True, True)], m[("T", False, False)], m[("T", False, True)]] == [21, 48, 9, 21]
    assert sum(m.values()) == 112


def test_service_pack_and_movie_minima_of_condition_1():
    sp = _condition_1_minima("SP")
    assert sp[("T", True, False)] == 3 and sp[("T", True, True)] == 5 and sp[("T", False, True)] == 3
    assert sum(sp.values()) == 20
    movies = _condition_1_minima("M")
    assert set(movies.values()) == {1} and sum(movies.values()) == 12 > nw.max_active(26_085, 2)["M"]
    with pytest.raises(ValueError, match="x7"):
        nw.min_active(10, "T", True, True, 1.5, 0.5)


def test_web_object_sizes_follow_the_pareto_of_table_8_4():
    assert nw.web_object_size(100, 1.0) == 34  # the scale, 100/3, rounded up
    assert nw.web_object_size(150, 1.0) == 50
    rng = random.Random(7)
    sizes = sorted(nw.web_object_size(100, 1.0 - rng.random()) for _ in range(200_000))
    median = sizes[len(sizes) // 2]
    assert 52 <= median <= 55  # (100/3) · 2^(2/3) = 52.9, rounded up
    # The tail: P(X > 10 × scale) = 10^-1.5.
    tail = sum(s > 1000 / 3 for s in sizes) / len(sizes)
    assert tail == pytest.approx(10 ** -1.5, rel=0.05)
    with pytest.raises(ValueError, match="u"):
        nw.web_object_size(100, 0.0)
    assert nw.MULTIPLIER == {"M": 10_000, "SP": 1_000, "D": 10, "WO": 1}


def test_flow_groups_of_table_8_6():
    assert nw.flow_group("M", "VF", True) == 1 and nw.flow_group("SP", "VF", True) == 7
    assert nw.flow_group("D", "F", False) == 16 and nw.group_label(16) == "F-N D"
    assert nw.flow_group("WO", "T", False) == 24 and nw.group_label(19) == "VF-F WO"
    groups = [nw.flow_group(t, pc, fast) for t in nw.TYPES for pc, fast in nw.GROUP_ORDER]
    assert groups == list(range(1, 25))
    assert all(nw.flow_group(*_parse(nw.group_label(g))) == g for g in groups)
    with pytest.raises(ValueError, match="path class"):
        nw.flow_group("D", "X", True)
    with pytest.raises(ValueError, match="file type"):
        nw.flow_group("Z", "T", True)
    with pytest.raises(ValueError, match="flow group"):
        nw.group_label(25)


def _parse(label: str) -> tuple[str, str, bool]:
    path, kind = label.split(" ")
    pc, iface = path.split("-")
    return kind, pc, iface == "F"


def test_one_mix_of_access_routers_fits_four_tables():
    fitted, misfit = nn.fit_access_routers()
    assert fitted == nn.ACCESS_ROUTERS
    assert misfit < 1e-4
    p = nn.placement(nn.ACCESS_ROUTERS)
    # Table 8-11, within 0.5 %.
    assert p.path_classes["VF"] == pytest.approx(nn.PATH_CLASS_P["VF"], rel=0.005)
    assert p.path_classes["F"] == pytest.approx(nn.PATH_CLASS_P["F"], rel=0.005)
    # Table 8-16, within 0.5 %.
    assert p.sources[3] == pytest.approx(26_085, rel=0.005)
    assert p.sources[2] == pytest.approx(17_355, rel=0.005)
    # Table 8-10, within half a percentage point.
    for got, want in ((p.source_shares, nn.SOURCE_SHARES), (p.receiver_shares, nn.RECEIVER_SHARES)):
        for c in want:
            assert got[c] == pytest.approx(want[c], abs=0.005), c
    # Table 8-18's access row: the mean access speed, within 0.5 %.
    assert p.mean_access_speed == pytest.approx(nn.MEAN_ACCESS_SPEED, rel=0.005)
    # A mix off by a few routers is visibly worse.
    worse = nn.placement(nn.AccessRouters(direct=12, fast=84, normal=313))
    assert worse.path_classes["VF"] < 0.8 * nn.PATH_CLASS_P["VF"]


def test_hosts_per_router_of_a_condition():
    from flowshare.reproduce import nist_population as npop

    classes = npop.router_classes()
    assert len(classes) == 18 + 84 + 313
    for x9 in (2, 3):
        sources, receivers = npop.hosts_per_router(x9)
        n = sources.sum()
        assert n == pytest.approx(nn.SOURCES[x9], rel=0.005)  # Table 8-16
        assert receivers.sum() == pytest.approx(4 * n, rel=0.002)
        for hosts, shares in ((sources, nn.SOURCE_SHARES), (receivers, nn.RECEIVER_SHARES)):
            for c, share in shares.items():
                assert hosts[classes == c].sum() / hosts.sum() == pytest.approx(share, abs=0.005), c
    with pytest.raises(ValueError, match="x9"):
        npop.hosts_per_router(0)
