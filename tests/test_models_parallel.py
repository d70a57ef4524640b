"""Parallel-flow models and MulTFRC (Damjanović 2010).

The worked values are computed from the thesis's printed algorithms (Algorithms 1–3 with
b = 1, RTT = 0.1 s, T = 0.4 s) or are the thesis's own numbers (improved j, the S1 and S2
j-sensitivity examples).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from flowshare.models import (
    altman_utilisation,
    hit_window_a,
    improved_j,
    mathis,
    model_a,
    model_a_ca,
    model_a_closed_form,
    model_b,
    model_b_ca,
    multfrc,
    old_j,
    pftk,
    rounds_a,
    rounds_b,
    timeout_duration,
    timeout_f,
    timeout_probability,
)
from flowshare.models.parallel import TIMEOUT_VARIANTS

RTT, RTO = 0.1, 0.4  # the setting of the worked values, b = 1


# --- worked values computed from the printed algorithms --------------------------------------


@pytest.mark.parametrize(
    ("n", "p", "j", "expected"),
    [
        (1, 0.001, 1, 383.67),
        (1, 0.01, 1, 116.57),
        (1, 0.05, 1, 44.54),
        (5, 0.01, 1, 596.26),
        (5, 0.01, 2, 423.83),
        (10, 0.001, 1, 3877.89),
        (100, 0.001, 1, 38819.09),
        (0.5, 0.001, 1, 189.50),
    ],
)
def test_multfrc_reproduces_the_worked_values(n, p, j, expected):
    assert multfrc(n, p, j, RTT, RTO) == pytest.approx(expected, abs=0.005)


@pytest.mark.parametrize(("p", "expected"), [(0.001, 379.54), (0.01, 105.73), (0.05, 25.48)])
def test_algorithm_1_for_one_flow_reproduces_the_worked_values(p, expected):
    assert model_a(1, p, RTT, RTO) == pytest.approx(expected, abs=0.005)


def test_half_a_flow_gets_about_half_the_single_flow_rate():
    # worked value: N = 0.5 gives 189.50, about 0.49 x the single flow
    assert multfrc(0.5, 0.001, 1, RTT, RTO) / multfrc(1, 0.001, 1, RTT, RTO) == pytest.approx(
        0.494, abs=0.001
    )


def test_multfrc_in_bytes_per_second_is_the_draft_x_bps():
    assert multfrc(5, 0.01, 1, RTT, RTO, s=1460) == pytest.approx(596.26 * 1460, rel=1e-5)


# --- j: the thesis's own numbers ---------------------------------------------------------------


def test_improved_j_reproduces_the_thesis_values():
    # §3.3.4 (S1 and S2 RED examples, n = 5): old j -> improved j
    assert improved_j(5, 1.175302) == pytest.approx(1.153449, abs=5e-7)
    assert improved_j(5, 4.140351) == pytest.approx(3.015146, abs=5e-7)


def test_s2_red_throughput_ratios_match_the_thesis():
    # The thesis: 22903.79 (old j), 25139.24 (measured j), 26850.08 (improved j) pkt/s. The
    # ratios do not depend on RTT at low loss; the loss rate is not printed.
    p = 5e-6
    old = model_b(5, p, 4.140351, RTT, RTO)
    measured = model_b(5, p, 3.43859, RTT, RTO)
    improved = model_b(5, p, 3.015146, RTT, RTO)
    assert measured / old == pytest.approx(25139.24 / 22903.79, abs=2e-4)
    assert improved / old == pytest.approx(26850.08 / 22903.79, abs=2e-4)


def test_s2_red_ratios_hardly_depend_on_the_loss_rate():
    # computed from Algorithm 2: 1.0978 / 1.1725 at p_e = 1e-5
    old = model_b(5, 1e-5, 4.140351, 1.0, 1.0)
    assert model_b(5, 1e-5, 3.43859, 1.0, 1.0) / old == pytest.approx(1.0978, abs=1e-4)
    assert model_b(5, 1e-5, 3.015146, 1.0, 1.0) / old == pytest.approx(1.1726, abs=1e-4)


def test_s1_error_ratios_match_the_worked_values():
    # computed: B(measured j)/B(old j) = 1.022, B(improved j)/B(old j) = 1.009 (n = 5, p_e ~ 1e-5)
    old = model_b(5, 1e-5, 1.175302, RTT, RTO)
    assert model_b(5, 1e-5, 1.124352, RTT, RTO) / old == pytest.approx(1.022, abs=5e-4)
    assert model_b(5, 1e-5, 1.153449, RTT, RTO) / old == pytest.approx(1.009, abs=5e-4)


def test_old_j_is_capped_at_n():
    assert old_j(0.02, 0.01, 5) == 2.0
    assert old_j(0.09, 0.01, 5) == 5.0


# --- closed forms and limiting cases -----------------------------------------------------------


def test_model_a_ca_for_one_flow():
    # eq. 3.19, n = 1, b = 1, p = 0.01: 6 / (0.1 * (0.01 + sqrt(0.0001 + 0.24))) = 6/0.05 = 120
    assert model_a_ca(1, 0.01, 0.1) == pytest.approx(120.0, rel=1e-12)
    # E[X] = (0.01 + 0.49)/0.06, E[W_f] = 2 E[X]
    assert rounds_a(1, 0.01) == pytest.approx(0.5 / 0.06, rel=1e-12)
    assert hit_window_a(1, 0.01) == pytest.approx(1 / 0.06, rel=1e-12)


def test_one_flow_without_time_outs_tends_to_mathis():
    assert model_a_ca(1, 1e-7, 0.1) / mathis(1e-7, 0.1) == pytest.approx(1.0, rel=1e-3)
    assert model_a_ca(1, 1e-4, 0.1, b=2) / mathis(1e-4, 0.1, b=2) == pytest.approx(1.0, rel=1e-2)


def test_one_flow_with_time_outs_is_close_to_pftk_at_low_loss():
    # §3.4: for n = 1 model A differs from PFTK only in the burst-loss assumption
    assert model_a(1, 1e-4, RTT, RTO) / pftk(1e-4, RTT, RTO) == pytest.approx(1.0, abs=0.01)


def test_model_b_with_j_one_is_model_a():
    n = np.array([1.0, 2.0, 5.0, 50.0])
    p = np.array([1e-4, 1e-3, 0.01, 0.08])
    assert model_b_ca(n, p, 1.0, RTT) == pytest.approx(model_a_ca(n, p, RTT), rel=1e-12)
    assert rounds_b(n, p, 1.0) == pytest.approx(rounds_a(n, p), rel=1e-12)
    # Algorithm 2 with j = 1 and Algorithm 1 differ only in the time-out estimate
    assert model_b(n, 1e-5, 1.0, RTT, RTO) == pytest.approx(model_a(n, 1e-5, RTT, RTO), rel=1e-3)


def test_model_b_radicand_factorisation_matches_eq_3_49_as_printed():
    n, p, j, b = 7.0, 0.003, 2.5, 1.0
    printed = (
        2 * j**2 * p * b - n * p * b * j
        + math.sqrt(n**2 * p**2 * b**2 * j**2 - 4 * n * p**2 * b**2 * j**3
                    + 4 * j**4 * p**2 * b**2 + 24 * n**2 * p * b * j)
    ) / (6 * n**2 * p)
    assert rounds_b(n, p, j, b=b) == pytest.approx(printed, rel=1e-12)


def test_n_parallel_flows_get_about_n_times_one_flow_at_low_loss():
    # per-flow loss rate fixed: 10 flows ~ 10 x 1 flow (CA only, small p)
    assert model_a_ca(10, 1e-6, RTT) / model_a_ca(1, 1e-6, RTT) == pytest.approx(10, rel=0.01)


def test_algorithm_1_uncapped_with_exact_f_is_the_closed_form_3_34():
    n = np.array([1, 2, 5, 10, 50])[:, None]
    p = np.array([1e-4, 1e-3, 0.01, 0.05])[None, :]
    closed = model_a_closed_form(n, p, RTT, RTO)
    uncapped = model_a(n, p, RTT, RTO, f="exact", cap_timeouts=False)
    assert uncapped == pytest.approx(closed, rel=1e-10)


def test_closed_form_goes_negative_where_the_algorithm_caps():
    # At very high loss more than n flows would be "in time-out"; 3.34 has no cap.
    assert model_a_closed_form(5, 0.3, RTT, RTO) < 0
    capped = model_a(5, 0.3, RTT, RTO)
    # q = n: every flow in time-out, rate = n / (z (1 - p)) = n / (T (1 + 32 p^2))
    assert capped == pytest.approx(5 / (RTO * (1 + 32 * 0.09)), rel=1e-12)


# --- time-outs -------------------------------------------------------------------------------


def test_timeout_duration_and_f():
    # eq. 3.26: f(p) = 1 + p + 2p^2 + ... + 32p^6
    p = 0.1
    exact = 1 + 0.1 + 0.02 + 0.004 + 0.0008 + 0.00016 + 0.000032
    assert timeout_f(p, f="exact") == pytest.approx(exact, rel=1e-12)
    assert timeout_f(p) == pytest.approx(1.32, rel=1e-12)
    assert timeout_duration(p, 0.4) == pytest.approx(0.4 * 1.32 / 0.9, rel=1e-12)


def test_timeout_duration_series_matches_eq_3_24():
    # eq. 3.24 summed directly: back-off doubling up to 64T
    p, t = 0.2, 1.0
    direct = sum(p ** (k - 1) * (1 - p) * (2**k - 1) * t for k in range(1, 8))
    direct += sum(p ** (k - 1) * (1 - p) * (127 * t + (k - 7) * 64 * t) for k in range(8, 400))
    assert timeout_duration(p, t, f="exact") == pytest.approx(direct, rel=1e-12)


@pytest.mark.parametrize("w", [4, 5, 8, 13, 40, 100])
def test_droptail_timeout_probability_3_31_is_the_sum_3_30(w):
    # eq. 3.30 summed with A(w, k) = (1 - p_lr)^k p_lr, p_lr = 1/w
    plr = 1.0 / w

    def a(k):
        return (1 - plr) ** k * plr

    direct = sum(a(k) for k in range(3)) + sum(
        a(k) * sum(a(m) for m in range(3)) for k in range(3, w)
    )
    assert timeout_probability(float(w)) == pytest.approx(min(1.0, direct), rel=1e-12)


def test_timeout_probability_is_one_for_small_windows():
    assert timeout_probability(np.array([0.5, 1, 2, 3])).tolist() == [1.0, 1.0, 1.0, 1.0]


def test_bernoulli_plr_small_window_by_hand():
    # w_max = 4, p_lr = 1/4: windows 2 and 3 time out surely, window 4 with
    # P(<3 of 4 delivered) + P(3 delivered) * P(<3 of 3 delivered), uniform over 0..4
    q = 0.75
    b4 = {k: math.comb(4, k) * q**k * 0.25 ** (4 - k) for k in range(5)}
    b3_few = sum(math.comb(3, m) * q**m * 0.25 ** (3 - m) for m in range(3))
    p4 = b4[0] + b4[1] + b4[2] + b4[3] * b3_few
    assert timeout_probability(4.0, variant="bernoulli-plr") == pytest.approx((2 + p4) / 5)


def test_pftk_form_of_the_timeout_probability():
    # droptail-p: PFTK's Q(p, w) = (1-(1-p)^3)(1+(1-p)^3(1-(1-p)^(w-3))) / (1-(1-p)^w)
    p, w = 0.02, 10.0
    y = 1 - p
    expected = (1 - y**3) * (1 + y**3 * (1 - y ** (w - 3))) / (1 - y**w)
    assert timeout_probability(w, p, variant="droptail-p") == pytest.approx(min(1, expected))


@pytest.mark.parametrize("variant", TIMEOUT_VARIANTS)
def test_every_timeout_variant_gives_a_rate_between_zero_and_the_ca_model(variant):
    for p in (1e-3, 0.02):
        rate = model_a(5, p, RTT, RTO, timeout_variant=variant)
        assert 0 < rate <= model_a_ca(5, p, RTT) * 1.0001


def test_timeout_variants_with_p_need_p():
    with pytest.raises(ValueError, match="needs p"):
        timeout_probability(10.0, variant="droptail-p")


# --- options and resolutions -------------------------------------------------------------------


def test_improved_j_threshold_option():
    # 12 <= n < 13: the draft (n < 12) uses raw j, §4.2.1 (n <= 12) / captions (n < 13) do not
    n, p, j = 12.0, 0.01, 4.0
    draft = multfrc(n, p, j, RTT, RTO)
    captions = multfrc(n, p, j, RTT, RTO, threshold=13)
    assert draft == pytest.approx(model_b(n, p, j, RTT, RTO))
    assert captions > draft  # improved j < raw j -> fewer flows hit -> more throughput
    assert multfrc(5, p, j, RTT, RTO, threshold=0) == pytest.approx(model_b(5, p, j, RTT, RTO))


def test_cap_ceil_versus_n_for_fractional_n():
    # Algorithm 2 caps j_af at n = 1.4; Algorithm 3 at ceil(1.4) = 2
    n, p, j = 1.4, 0.01, 3.0
    a3 = multfrc(n, p, j, RTT, RTO, threshold=0)
    a2 = multfrc(n, p, j, RTT, RTO, threshold=0, cap="n")
    assert a2 == pytest.approx(model_b(n, p, j, RTT, RTO))
    assert a3 < a2


def test_q_j_option_only_matters_when_time_outs_do():
    low = [model_b(5, 1e-5, 4.0, RTT, RTO, q_j=m) for m in ("raw", "flows")]
    assert low[0] == pytest.approx(low[1], rel=1e-3)
    high = [model_b(5, 0.05, 8.0, RTT, RTO, q_j=m) for m in ("raw", "flows")]
    assert high[0] != pytest.approx(high[1], rel=1e-3)


def test_exact_f_changes_the_rate_by_a_few_percent_at_high_loss():
    # f exact vs 1 + 32p^2: 1.0102 > 1.0032 at p = 0.01, 1.0553 < 1.08 at p = 0.05
    assert timeout_f(0.01, f="exact") > timeout_f(0.01)
    assert timeout_f(0.05, f="exact") < timeout_f(0.05)
    exact, approx = model_b(5, 0.05, 2, RTT, RTO, f="exact"), model_b(5, 0.05, 2, RTT, RTO)
    assert exact > approx  # shorter time-outs
    assert exact == pytest.approx(approx, rel=0.05)


# --- degenerate inputs -----------------------------------------------------------------------


def test_j_zero_is_read_as_one():
    assert multfrc(5, 0.01, 0, RTT, RTO) == multfrc(5, 0.01, 1, RTT, RTO)
    assert model_b(5, 0.01, 0, RTT, RTO) == model_b(5, 0.01, 1, RTT, RTO)


def test_improved_j_for_n_at_most_one_is_one():
    assert improved_j(np.array([0.1, 0.5, 1.0]), 3.0).tolist() == [1.0, 1.0, 1.0]
    assert improved_j(5, 0.0) == 1.0
    assert math.isfinite(multfrc(0.3, 0.01, 2.5, RTT, RTO))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: multfrc(5, 0.0, 1, RTT, RTO), r"p must be in \(0, 1\), got 0.0"),
        (lambda: multfrc(5, 1.0, 1, RTT, RTO), r"p must be in \(0, 1\), got 1.0"),
        (lambda: multfrc(0, 0.01, 1, RTT, RTO), r"n must be > 0, got 0.0"),
        (lambda: multfrc(5, 0.01, -1, RTT, RTO), r"j must be >= 0, got -1.0"),
        (lambda: multfrc(5, 0.01, 1, RTT, RTO, cap="floor"), r"cap must be one of 'ceil', 'n'"),
        (lambda: model_b(5, 0.01, 1, RTT, RTO, q_j="x"), r"q_j must be one of 'raw', 'flows'"),
        (lambda: model_a(5, 0.01, RTT, 0.0), r"rto must be > 0"),
        (lambda: model_a(5, 0.01, RTT, RTO, f="1+32p2"), r"f must be one of 'approx', 'exact'"),
        (lambda: model_a(5, 0.01, RTT, RTO, timeout_variant="x"), r"timeout_variant must be"),
        (lambda: model_a_ca(5, 1.5, RTT), r"p must be in \(0, 1\)"),
        (lambda: model_b_ca(5, 0.01, 0.0, RTT), r"j must be > 0"),
        (lambda: old_j(0.0, 0.01, 5), r"p_r must be in \(0, 1\)"),
        (lambda: altman_utilisation(-1), r"n must be > 0"),
    ],
)
def test_degenerate_inputs_raise_value_errors_naming_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- vectorisation ----------------------------------------------------------------------------


def test_models_broadcast_over_arrays():
    n = np.array([1, 5, 10])[:, None]
    p = np.geomspace(1e-4, 0.1, 7)[None, :]
    for out in (
        multfrc(n, p, 1.5, RTT, RTO),
        model_b(n, p, 1.5, RTT, RTO),
        model_a(n, p, RTT, RTO),
        model_a(n, p, RTT, RTO, timeout_variant="bernoulli-p"),
    ):
        assert out.shape == (3, 7)
        assert np.all(np.isfinite(out))
    grid = multfrc(n, p, 1.5, RTT, RTO)
    assert grid[1, 3] == pytest.approx(multfrc(5, p[0, 3], 1.5, RTT, RTO))
    # throughput falls with loss
    assert np.all(np.diff(grid, axis=1) < 0)


def test_scalar_inputs_give_floats():
    assert isinstance(multfrc(5, 0.01, 1, RTT, RTO), float)
    assert isinstance(model_a(5, 0.01, RTT, RTO), float)


# --- Altman et al. ----------------------------------------------------------------------------


def test_altman_utilisation_values_quoted_by_the_draft():
    assert altman_utilisation(1) == 0.75
    assert altman_utilisation(3) == pytest.approx(0.90)
    assert altman_utilisation(6) == pytest.approx(0.95, abs=0.003)
    # "going from 1 to 2 flows is a 14.3% gain ... less than 1% beyond 6 flows"
    assert altman_utilisation(2) / altman_utilisation(1) - 1 == pytest.approx(0.143, abs=5e-4)
    assert altman_utilisation(7) / altman_utilisation(6) - 1 < 0.01
