"""Single-flow and AIMD models (Kuo and Fu (2008) eqs. 1-9, Damjanović (2010) eqs. 2.1-2.2,
RFC 5348 §3.1).

Expected values are worked examples of the equations or arithmetic done by hand in the
comments, never from another implementation of the same formula.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from flowshare.models import (
    aimd_decrease_for_weight,
    aimd_rate,
    aimd_window,
    mathis,
    multcp_factor,
    multcp_rate,
    pa_multcp_params,
    pa_multcp_wmax,
    pftk,
)

# --- Mathis and PFTK --------------------------------------------------------------------------


def test_mathis_is_sqrt_three_halves_over_rtt_sqrt_p():
    # 1/0.1 * sqrt(1.5/0.01) = 10 * sqrt(150)
    assert mathis(0.01, 0.1) == pytest.approx(10 * math.sqrt(150), rel=1e-12)
    # delayed ACKs: C = sqrt(3/(2b)); b = 2 halves C^2
    assert mathis(0.01, 0.1, b=2) == pytest.approx(10 * math.sqrt(75), rel=1e-12)


@pytest.mark.parametrize(
    ("p", "bytes_per_s", "pkts"),
    [(0.001, 560_412, 383.8), (0.01, 164_005, 112.3), (0.1, 25_843, 17.70)],
)
def test_rfc5348_equation_reproduces_the_worked_values(p, bytes_per_s, pkts):
    # RFC 5348 §3.1 equation at s = 1460 B, R = 0.1 s, t_RTO = 0.4 s
    assert pftk(p, 0.1, 0.4, form="rfc5348", s=1460) == pytest.approx(bytes_per_s, abs=1)
    assert pftk(p, 0.1, 0.4, form="rfc5348") == pytest.approx(pkts, abs=0.05)


@pytest.mark.parametrize(("p", "expected"), [(0.001, 383.84), (0.01, 112.33), (0.05, 36.86)])
def test_pftk_reproduces_the_worked_values(p, expected):
    # PFTK (Damjanović (2010) eq. 2.2): 383.84 / 112.33 / 36.86 at b = 1, R = 0.1 s, t_RTO = 0.4 s
    assert pftk(p, 0.1, 0.4) == pytest.approx(expected, abs=0.005)


def test_pftk_min_term_only_matters_above_8_over_27():
    below, above = 0.29, 0.5
    assert pftk(below, 0.1, 0.4) == pftk(below, 0.1, 0.4, form="rfc5348")
    # at p = 0.5: 3*sqrt(3*0.5/8) = 1.299 > 1, so PFTK's denominator is smaller
    assert pftk(above, 0.1, 0.4) > pftk(above, 0.1, 0.4, form="rfc5348")
    # by hand: 0.1*sqrt(1/3) + 0.4*1*0.5*(1+8) = 0.0577350 + 1.8 -> 1/1.857735
    assert pftk(above, 0.1, 0.4) == pytest.approx(1 / (0.1 * math.sqrt(1 / 3) + 1.8), rel=1e-12)


def test_pftk_tends_to_mathis_at_low_loss():
    assert pftk(1e-7, 0.1, 0.4) / mathis(1e-7, 0.1) == pytest.approx(1.0, rel=1e-3)


def test_segment_size_turns_packets_into_bytes():
    assert mathis(0.01, 0.1, s=1000) == pytest.approx(1000 * mathis(0.01, 0.1))
    packets = aimd_rate(1, 0.5, 0.01, 0.1)
    assert aimd_rate(1, 0.5, 0.01, 0.1, s=1500) == pytest.approx(1500 * packets)


# --- AIMD ------------------------------------------------------------------------------------


def test_aimd_one_half_is_standard_tcp():
    # eq. 1 with a = 1, b = 1/2: W = sqrt(8/(3p)); eq. 3: T = sqrt(3/(2p))/rtt
    assert aimd_window(1, 0.5, 0.01) == pytest.approx(math.sqrt(800 / 3), rel=1e-12)
    assert aimd_rate(1, 0.5, 0.01, 0.1) == pytest.approx(mathis(0.01, 0.1), rel=1e-12)


def test_aimd_rate_is_eq_2_applied_to_eq_1():
    a, b, p, rtt = 3.0, 0.2, 0.004, 0.05
    w = math.sqrt(2 * a / (b * (2 - b) * p))
    assert aimd_rate(a, b, p, rtt) == pytest.approx((2 - b) / (2 * rtt) * w, rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 4, 10, 30])
def test_eq5_decrease_gives_n_fold_throughput_at_equal_loss(n):
    # eq. 4: T_m = N/rtt * sqrt(3/(2p)) when b = 2a/(3N^2 + a), for any a
    for a in (1.0, math.sqrt(n), float(n)):
        b = aimd_decrease_for_weight(a, n)
        assert aimd_rate(a, b, 0.01, 0.1) == pytest.approx(n * mathis(0.01, 0.1), rel=1e-12)


def test_eq6_tcp_friendly_pairs():
    # b = 2a/(3 + a): a = 1 -> 1/2, a = 0.2 -> 0.125 (the pair used by TCP-friendly AIMD)
    assert aimd_decrease_for_weight(1) == 0.5
    assert aimd_decrease_for_weight(0.2) == pytest.approx(0.125)


# --- MulTCP and PA-MulTCP -----------------------------------------------------------------------


def test_multcp_factor_values():
    # Kuo and Fu (2008) eqs. 1-5 (§3.1) give 1.080 (N=2), 1.118 (N=4), 1.140 (N=10), 1.147 (N=20),
    # 1.150 (N=30), rounded; sqrt((2 - 1/(2N))/1.5) by hand: N=20 -> sqrt(1.975/1.5) = 1.14746
    got = [multcp_factor(n) for n in (2, 4, 10, 20, 30)]
    assert got == pytest.approx([1.0801, 1.1180, 1.1402, 1.1475, 1.1499], abs=5e-5)
    assert multcp_factor(1) == 1.0


def test_multcp_factor_is_multcp_rate_over_n_tcp_rates():
    n, p, rtt = 7, 0.002, 0.08
    assert multcp_rate(n, p, rtt) / (n * mathis(p, rtt)) == pytest.approx(multcp_factor(n))


def test_multcp_factor_with_a_lower_loss_rate():
    # Kuo and Fu (2008) §3.2: T_m/(N T_t) = sqrt(p_t/p_m) on top of the model factor
    assert multcp_factor(4, loss_ratio=4.0) == pytest.approx(2 * multcp_factor(4))


def test_pa_multcp_adjusting_loop_parameters():
    a, b = pa_multcp_params(4)
    assert (a, b) == (2.0, pytest.approx(0.08))
    # the pair satisfies eq. 5
    assert b == pytest.approx(aimd_decrease_for_weight(a, 4))


@pytest.mark.parametrize(
    ("n", "wmax_sqrt_p"),
    [(2, 2.738), (4, 5.103), (5, 6.306), (10, 12.377), (20, 24.586), (30, 36.817)],
)
def test_pa_multcp_wmax_table(n, wmax_sqrt_p):
    # Kuo and Fu (2008) eq. 9 with AIMD(sqrt(N), 2/(1+3N^1.5)): W_max * sqrt(p_t); closed form
    # (1 + 3N^1.5)/sqrt(6N p_t)
    p = 0.0025
    assert pa_multcp_wmax(n, p) * math.sqrt(p) == pytest.approx(wmax_sqrt_p, abs=5e-4)
    assert pa_multcp_wmax(n, p) == pytest.approx((1 + 3 * n**1.5) / math.sqrt(6 * n * p))


def test_pa_multcp_wmax_for_one_flow_is_the_tcp_peak_window():
    assert pa_multcp_wmax(1, 0.01) == pytest.approx(aimd_window(1, 0.5, 0.01))


def test_pa_multcp_weight_change_4_to_5_raises_wmax_by_23_6_percent():
    # by the closed form: N 4->5 raises W_max by 23.6%
    assert pa_multcp_wmax(5, 0.01) / pa_multcp_wmax(4, 0.01) == pytest.approx(1.236, abs=5e-4)


# --- vectorisation and arguments -----------------------------------------------------------------


def test_functions_broadcast_and_return_floats_for_scalars():
    p = np.array([0.001, 0.01, 0.1])
    rtt = np.array([[0.05], [0.1]])
    out = pftk(p, rtt, 0.4)
    assert out.shape == (2, 3)
    assert out[1, 1] == pytest.approx(pftk(0.01, 0.1, 0.4))
    assert isinstance(pftk(0.01, 0.1, 0.4), float)
    assert aimd_rate([1, 2], [0.5, 0.5], 0.01, 0.1).shape == (2,)
    assert multcp_factor(np.arange(1, 5)).shape == (4,)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mathis(0.0, 0.1), r"p must be in \(0, 1\], got 0.0"),
        (lambda: mathis(1.5, 0.1), r"p must be in \(0, 1\], got 1.5"),
        (lambda: mathis(0.01, -1), r"rtt must be > 0, got -1.0"),
        (lambda: pftk(0.01, 0.1, 0), r"rto must be > 0"),
        (lambda: pftk(0.01, 0.1, 0.4, form="ns2"), r"form must be one of 'pftk', 'rfc5348'"),
        (lambda: pftk([0.01, np.nan], 0.1, 0.4), r"p must be in \(0, 1\], got nan"),
        (lambda: aimd_window(1, 1.5, 0.01), r"b must be in \(0, 1\], got 1.5"),
        (lambda: aimd_window(0, 0.5, 0.01), r"a must be > 0"),
        (lambda: multcp_factor(0.5), r"n must be >= 1, got 0.5"),
        (lambda: pa_multcp_wmax(2, 0), r"p must be in \(0, 1\]"),
        (lambda: mathis("x", 0.1), r"p must be a number"),
    ],
)
def test_bad_arguments_raise_value_errors_naming_them(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_p_equal_one_is_allowed_for_single_flow_models():
    assert math.isfinite(pftk(1.0, 0.1, 0.4))
    assert mathis(1.0, 0.1) == pytest.approx(10 * math.sqrt(1.5))
