"""Hasegawa (2000) analytic models against the thesis's numbers, worked values, limiting cases."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from flowshare.models.hasegawa import MODELS, ch2, ch3, ch4, ch5, ch6

MU_1024 = 20e6 / (8 * 1024)  # 20 Mbit/s in 1 Kbyte packets (§2.1)
BW4 = np.array([64e3, 128e3, 256e3, 512e3])  # Ch. 6 access rates [bit/s]


# --- chapter 2 --------------------------------------------------------------------------------


def test_loss_window_and_planes_homogeneous():
    assert ch2.loss_window(0.005, MU_1024, 10) == pytest.approx(34.414, abs=1e-3)
    # efficiency and loss lines are W1 + W2 = W_e and W_e + B when tau1 = tau2
    x = np.array([0.0, 5.0, 12.0])
    np.testing.assert_allclose(ch2.efficiency_line(x, 0.005, 0.005, MU_1024) + x, 2 * 0.005 * MU_1024)
    np.testing.assert_allclose(ch2.loss_line(x, 0.005, 0.005, MU_1024, 10) + x, 2 * 0.005 * MU_1024 + 10)


def test_efficiency_line_heterogeneous_is_full_link():
    w2 = ch2.efficiency_line(10.0, 0.004, 0.008, 2000.0)
    assert 10.0 / 0.008 + w2 / 0.016 == pytest.approx(2000.0)
    assert ch2.efficiency_line(10.0, 0.004, 0.008, 2000.0, tau_is_rtt=True) == pytest.approx(0.008 * (2000 - 10 / 0.004))


def test_tahoe_fixed_point_adds_up_to_loss_window_and_scales_with_delay():
    w1 = ch2.tahoe_fixed_point(0.004, 0.008, 30.0)
    w2 = ch2.tahoe_fixed_point(0.008, 0.004, 30.0)
    assert w1 + w2 == pytest.approx(30.0)
    assert w1 / w2 == pytest.approx(2.0)  # W1/W2 = tau2/tau1 (§2.2.2)
    assert ch2.tahoe_fixed_point(0.005, 0.005, 34.4) == pytest.approx(17.2)


def test_tahoe_recursion_matches_corrected_closed_form_not_printed():
    rec = ch2.tahoe_windows(3.0, 0.004, 0.008, 30.0, 12, closed_form="recursion")
    corr = ch2.tahoe_windows(3.0, 0.004, 0.008, 30.0, 12)
    printed = ch2.tahoe_windows(3.0, 0.004, 0.008, 30.0, 12, closed_form="printed")
    np.testing.assert_allclose(rec, corr)
    assert corr[-1] == pytest.approx(20.0, rel=1e-3)  # 2 c_j
    assert printed[-1] == pytest.approx(10.0, rel=1e-3)  # c_j: the thesis's error (hasegawa:A11 iv)
    # the error halves each cycle (factor 1/2 per loss)
    err = np.abs(corr - 20.0)
    np.testing.assert_allclose(err[1:] / err[:-1], 0.5)


def test_tahoe_windows_broadcasts():
    out = ch2.tahoe_windows([1.0, 5.0], 0.005, 0.005, 34.0, 3)
    assert out.shape == (3, 2)
    np.testing.assert_allclose(out[0], [1.0, 5.0])


def test_tahoe_throughput_scales_as_inverse_square_delay():
    for constant in ("corrected", "printed"):
        s1 = ch2.tahoe_throughput(0.004, 0.008, 30.0, constant=constant)
        s2 = ch2.tahoe_throughput(0.008, 0.004, 30.0, constant=constant)
        assert s1 / s2 == pytest.approx(4.0)  # (tau2/tau1)^2, Eq 2.9
    assert ch2.tahoe_throughput(0.004, 0.008, 30.0, constant="printed") == pytest.approx(
        4 * ch2.tahoe_throughput(0.004, 0.008, 30.0)
    )
    assert ch2.tahoe_throughput(0.005, 0.005, 34.0) == pytest.approx(3 * 17 / (8 * 0.005))


def test_vegas_queue_range_golden_factor():
    lo, hi = ch2.vegas_queue_range(2, 4)
    assert lo == pytest.approx(5.236, abs=1e-3) and hi == pytest.approx(10.472, abs=1e-3)  # §2.2.4
    x = ch2.GOLDEN_QUEUE_FACTOR
    assert 1 / x + 1 / (x - 1) == pytest.approx(1.0)


def test_vegas_single_window_range_with_and_without_plus_one():
    assert ch2.vegas_single_window_range(0.005, 2000.0) == (23.0, 25.0)
    assert ch2.vegas_single_window_range(0.005, 2000.0, plus_one=False) == (22.0, 24.0)


def test_vegas_window_bounds_2_24_2_25():
    b = ch2.vegas_window_bounds(0.005, 0.005, MU_1024, 3.0, 8.0)
    p = 2 * 0.005 * MU_1024 + 8
    assert b["w1"] == pytest.approx((p * 2 / 8, p * 4 / 8))
    assert b["w2"] == pytest.approx((p * 2 / 5, p * 4 / 5))
    with pytest.raises(ValueError, match="base_queue"):
        ch2.vegas_window_bound(0.005, MU_1024, 3.0, 2.0, base_queue=3.0)


def test_vegas_ratio_range_is_a_soft_target():
    lo, hi = ch2.vegas_ratio_range(0.005, 0.005, MU_1024)
    # the feasible scan (hasegawa:A13) spans the simulated 1.03-1.58 only partly; thesis: 0.95-2.12
    assert 0.2 < lo < 0.95 and 1.03 < hi < 2.12
    assert ch2.vegas_ratio_range(0.005, 0.005, 1e4) == pytest.approx((lo, hi), rel=1e-9)  # no mu dependence


def test_enhanced_vegas_centre_sanity_values():
    w1, w2, l2 = ch2.enhanced_vegas_centre(0.005, 0.005, MU_1024)
    assert (w1, w2, l2) == (pytest.approx(15.21, abs=0.01), pytest.approx(15.21, abs=0.01), 6.0)  # Eq 2.36
    w1, w2, _ = ch2.enhanced_vegas_centre(0.004, 0.008, MU_1024)
    assert w1 == pytest.approx(12.77, abs=0.01) and w2 == pytest.approx(22.53, abs=0.01)
    # the centre satisfies Eq 2.27 with base_rtt = 2 tau + 1/mu... in the thesis's approximation
    tau, mu, d = 0.005, MU_1024, 3.0
    assert (2 * tau * mu + 2 * d) * d / (2 * d) == pytest.approx(ch2.enhanced_vegas_window(tau, mu, d))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: ch2.tahoe_fixed_point(-1.0, 0.1, 10), "tau_j"),
        (lambda: ch2.tahoe_windows(1.0, 0.1, 0.1, 10, 0), "cycles"),
        (lambda: ch2.tahoe_windows(1.0, 0.1, 0.1, 10, 2, closed_form="x"), "closed_form"),
        (lambda: ch2.vegas_queue_range(4, 2), "beta"),
        (lambda: ch2.enhanced_vegas_window(0.1, 0.0), "mu"),
    ],
)
def test_ch2_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --- chapter 3 --------------------------------------------------------------------------------


def test_rto_converges_to_rtt():  # Eq 3.7
    a, d, rto = ch3.rto_series(np.full(300, 0.05), a0=0.2, d0=0.1)
    assert rto[-1] == pytest.approx(0.05, rel=1e-9)
    assert np.all(np.diff(rto[5:]) <= 1e-15)  # monotone once the deviation decays


def test_rto_closed_form_matches_recursion():
    samples = np.full(40, 3.86e-3)
    _, _, rto = ch3.rto_series(samples, a0=5e-3, d0=1e-3)
    n = np.arange(1, 41)
    np.testing.assert_allclose(ch3.rto_after(n, 3.86e-3, 5e-3, 1e-3), rto, rtol=1e-12)
    # h = g: the geometric ratio is 1, the limit branch
    _, _, rto2 = ch3.rto_series(samples, a0=5e-3, d0=1e-3, g=0.25, h=0.25)
    np.testing.assert_allclose(ch3.rto_after(n, 3.86e-3, 5e-3, 1e-3, g=0.25), rto2, rtol=1e-12)


def test_rto_series_bad_gain():
    with pytest.raises(ValueError, match="g must be"):
        ch3.rto_series([0.1], g=1.5)
    with pytest.raises(ValueError, match="rtt_samples"):
        ch3.rto_series([0.1, -0.1])


def test_exp2_rtt_is_window_time_with_cell_tax():
    assert ch3.atm_window_rtt(64 * 1024, 150e6) == pytest.approx(3.86e-3, abs=5e-6)  # Exp. 2


@pytest.mark.parametrize(
    ("w", "m", "expected"),
    [
        (64, 1, 17.63), (64, 2, 8.64), (64, 4, 4.15), (64, 8, 1.93),
        (128, 1, 35.63), (128, 2, 17.63), (128, 4, 8.64), (128, 8, 4.15),
    ],
)  # fmt: skip
def test_extra_delay_rtts_table(w, m, expected):  # D/rtt from Eq 3.14
    assert ch3.extra_delay_rtts(w, m) == pytest.approx(expected, abs=0.006)
    assert ch3.extra_delay_rtts(w * 1024, m * 1024) == pytest.approx(expected, abs=0.006)  # W/m only


def test_extra_delay_shape_and_regimes():
    m = np.array([1, 2, 4, 8, 16]) * 1024.0
    d64 = ch3.extra_delay(64 * 1024, m, 2e-3, 150e6, regime="formula")
    d128 = ch3.extra_delay(128 * 1024, m, 2e-3, 150e6, regime="formula")
    assert np.all(np.diff(d64) < 0)  # D falls with m
    assert np.all(d128 > d64)  # and rises with W (Fig 3.5)
    assert ch3.extra_delay_rtts(64, 16) == pytest.approx(0.84, abs=0.01)  # below one rtt
    rtt = ch3.rtt_window_limited(64 * 1024, 16 * 1024, 2e-3, 150e6)
    assert ch3.extra_delay(64 * 1024, 16 * 1024, 2e-3, 150e6, regime="formula", floor_at_rtt=True) == pytest.approx(rtt)
    # tiny pipe (tau -> 0): the halved window fills it, D = rtt (Eq 3.10)
    rtt0 = ch3.rtt_window_limited(64 * 1024, 4 * 1024, 1e-6, 150e6)
    assert ch3.extra_delay(64 * 1024, 4 * 1024, 1e-6, 150e6) == pytest.approx(rtt0)


def test_rtt_3_15_regimes():
    # pipe of 2 tau BW = 37.5 kB at 1 ms, 150 Mbit/s
    assert ch3.rtt_window_limited(16 * 1024, 1024, 1e-3, 150e6) == pytest.approx(2e-3 + 8 * 1024 / 150e6)
    assert ch3.rtt_window_limited(64 * 1024, 1024, 1e-3, 150e6) == pytest.approx(8 * 64 * 1024 / 150e6)


def test_misretransmission_windows_and_rule():
    c1, c2 = ch3.misretransmission_windows(64.0, 4.0)
    assert c1 == pytest.approx(math.sqrt(64 * 4 + 32**2)) and c2 == pytest.approx(c1 / 2)
    assert ch3.is_mis_retransmission(1.0e-3, 3.86e-3) is True
    assert ch3.is_mis_retransmission(1.93e-3, 3.86e-3) is False  # strict inequality
    with pytest.raises(ValueError, match="misrx_k"):
        ch3.is_mis_retransmission(1.0, 2.0, misrx_k=1.0)


# --- chapter 4 --------------------------------------------------------------------------------


def test_unit_conversions():
    assert ch4.bytes_to_cells(300 * 1024) == pytest.approx(5796, abs=1)  # "about 5,800 cells"
    assert ch4.aal5_cells(4352) == 91
    assert ch4.mbps_to_cells_per_ms(149.76) == pytest.approx(353.2, abs=0.05)
    assert ch4.air_from_airf(1 / 64, 353.2) * 32 == pytest.approx(353.2 / 64)


def test_q_max_limits():
    # no increase: the queue never overshoots the threshold
    assert ch4.abr_q_max(1000.0, 0.0, 16, 10, 353.2, 1.0) == pytest.approx(1000.0)
    # zero delay and one VC: Q + RDF (sqrt(2x) - ln(1 + 2x)) with x = AIR Q / BW
    q, air, rdf, bw = 1000.0, 0.1, 8.0, 353.2
    x = air * q / bw
    assert ch4.abr_q_max(q, air, rdf, 1, bw, 0.0) == pytest.approx(q + rdf * (math.sqrt(2 * x) - math.log1p(2 * x)))
    # grows with the propagation delay
    taus = np.array([0.01, 0.1, 1.0])
    assert np.all(np.diff(ch4.abr_q_max(2898, 0.17, 16, 10, 353.2, taus)) > 0)


def test_icr_and_xrm():
    assert ch4.abr_icr(5796, 6000, 1.0, 353.2, 353.2) == 0.0  # no room: ICR = 0
    assert ch4.abr_icr(5796, 0, 0.001, 353.2, 353.2) == pytest.approx(353.2)  # capped at PCR
    icr = ch4.abr_icr(5796, 3000, 1.0, 353.2, 353.2)
    assert icr == pytest.approx(2796 / (1 + 3000 / 353.2))
    assert ch4.abr_xrm(icr, 3000, 1.0, 353.2) == pytest.approx(icr / 32 * (1 + 3000 / 353.2))


def test_rate_loop_uncongested_source_climbs_to_pcr_unmarked():
    # One source can never send faster than the link: no queue, no mark, ACR ends at PCR, and
    # the link carries what the source sends (31 data cells in 32).
    r = ch4.abr_rate_loop(1, 1e6, 1 / 64, 16, 1.0)
    assert r.marks == 0 and r.lost_cells == 0 and r.max_queue == pytest.approx(0, abs=1e-9)
    assert r.min_rate == pytest.approx(353.2)
    assert r.throughput == pytest.approx(r.busy * 31 / 32)
    # the climb from ICR: 60 unmarked RM cells of AIRF·PCR each, one per 32 cells sent
    assert 0.9 < r.busy < 1.0


@pytest.mark.parametrize("case", [
    dict(n_vc=10, buffer=5796, airf=1 / 256, rdf=2, tau=1.0),
    dict(n_vc=10, buffer=193, airf=1 / 64, rdf=16, tau=1.0),
    dict(n_vc=30, buffer=5796, airf=1 / 128, rdf=4, tau=1.0),
])
def test_rate_loop_conserves_cells(case):
    r = ch4.abr_rate_loop(**case, duration=300.0)
    assert 0 < r.busy <= 1 + 1e-12
    assert r.throughput <= r.busy * 31 / 32 + 1e-12
    assert r.max_queue <= case["buffer"] + 1e-9
    assert r == ch4.abr_rate_loop(**case, duration=300.0)   # deterministic


def test_rate_loop_tau_1ms_300kbyte_text_against_table_4_2():
    # hasegawa:A26 in numbers: with the printed rules alone the text's AIRF 1/128 (RDF factor 2)
    # keeps the link busy without loss, Table 4.2's 1/256 leaves it idle a seventh of the time:
    # each crossing of the threshold cuts every source's ACR to a few cells/ms and the slower
    # increase takes longer to climb back.
    text = ch4.abr_rate_loop(10, 5796, 1 / 128, 2, 1.0, duration=2000.0)
    table = ch4.abr_rate_loop(10, 5796, 1 / 256, 2, 1.0, duration=2000.0)
    assert text.lost_cells == 0 and table.lost_cells == 0
    assert text.busy > 0.98 and table.busy < 0.9
    assert table.min_rate < 0.05 * 353.2
    assert text.max_queue > 2898 and table.max_queue > 2898


def test_rate_loop_slower_decrease_trades_loss_for_utilisation():
    # §4.2.3, τ = 1 ms, 10 Kbyte: RDF factor 2 under-utilises, 4 keeps more of the link and
    # loses more cells (the thesis: 0.435 against 0.542)
    two = ch4.abr_rate_loop(10, 193, 1 / 256, 2, 1.0)
    four = ch4.abr_rate_loop(10, 193, 1 / 256, 4, 1.0)
    assert two.throughput < four.throughput and two.lost_cells < four.lost_cells


def test_rate_loop_rule_b_backs_off_without_feedback():
    # a 40-ms feedback loop: backing off after each unanswered forward RM cell (X_RM = 1)
    # avoids the overflow that waiting for the marks does not
    eager = ch4.abr_rate_loop(10, 5796, 1 / 64, 16, 20.0, x_rm=1)
    late = ch4.abr_rate_loop(10, 5796, 1 / 64, 16, 20.0, x_rm=10**6)
    assert eager.lost_cells == 0 < late.lost_cells
    assert eager.busy < late.busy


@pytest.mark.parametrize("kw, name", [
    (dict(n_vc=2.5), "n_vc"), (dict(n_vc=0), "n_vc"), (dict(rdf=0.5), "rdf"),
    (dict(tau=-1.0), "tau"), (dict(buffer=0), "buffer"), (dict(xdf=2.0), "xdf"),
])
def test_rate_loop_refuses_bad_arguments(kw, name):
    args = dict(n_vc=10, buffer=5796, airf=1 / 64, rdf=16, tau=1.0) | kw
    with pytest.raises(ValueError, match=name):
        ch4.abr_rate_loop(**args)


def test_table_4_2_rows():
    assert ch4.TABLE_4_2[300] == (1 / 256, 2) and ch4.TABLE_4_2[100] == (1 / 128, 4)
    assert ch4.TABLE_4_1["icr"] == pytest.approx(353.2 / 20)


# --- chapter 5 --------------------------------------------------------------------------------


def test_table_5_1_worked_values():
    assert ch5.asym_rtt(4000, 1000, 1e-3, 1e-3) == pytest.approx(3.25e-3)
    assert ch5.tahoe_wmax() == pytest.approx(41.0)  # 13 + 8 + 4 * 5
    assert ch5.asymmetry_factor(16e6, 160e3) == pytest.approx(4.0)
    assert ch5.vegas_wmax() == pytest.approx(13.0)
    assert ch5.vegas_wmax(form="consistent") == pytest.approx(31.0)


def test_burst_counter():
    assert ch5.burst_wmax(8, 8) == 65.0  # w_r B_f + 1
    np.testing.assert_allclose(ch5.burst_wmax([4, 5, 8], 3), [13, 16, 25])
    # the printed index (i + W + 1) mod w_r steps by two: half the bursts when w_r is even
    assert ch5.burst_wmax(8, 8, burst_index="thesis") == 8 + 4 * 7 + 1
    assert ch5.burst_wmax(7, 8, burst_index="thesis") == 7 * 8 + 1  # odd w_r: visits all
    with pytest.raises(ValueError, match="whole"):
        ch5.burst_wmax(7.5, 8)


def test_wmax_cases_switch_at_k_equals_buffer():
    k = np.array([8.0, 9.0])
    w = ch5.tahoe_wmax(mu_f=1000 * k)
    assert w[0] == pytest.approx(1000 * 8 * (1 / 8000 + 3e-3) + 8 + 8 * 5)  # Case 1
    assert w[1] == 65.0  # Case 2
    np.testing.assert_allclose(ch5.vegas_wmax(mu_f=1000 * k)[1], 65.0)  # Case 2' = Case 2


def _euler(tcp, size, mu_f=4000.0, mu_r=1000.0, dt=2e-6):
    """Brute-force integration of Eqs 5.2-5.6 (cwnd in packets) until ``size`` packets are delivered."""
    rtt = 1 / mu_f + 2e-3 + 1 / mu_r
    if tcp == "tahoe":
        w, g, ss = float(ch5.tahoe_wmax(mu_f=mu_f)), 1.0, None
    else:
        w, g, ss = float(ch5.vegas_wmax(mu_f=mu_f)), 0.5, math.inf
    converges = tcp == "vegas" and mu_f / mu_r <= 8
    ssth = w / 2 if ss is None else ss
    c, sent, t = 1.0, 0.0, 0.0
    while sent < size:
        if converges and c >= w:
            return t + (size - sent) / mu_f
        ack = min(c / rtt, mu_r)
        sent += min(c / rtt, mu_f) * dt
        c += (g if c < ssth else 1 / c) * ack * dt
        t += dt
        if c >= w and not converges:
            c, ssth = 1.0, w / 2
    return t


@pytest.mark.parametrize(("tcp", "size"), [("tahoe", 10), ("tahoe", 150), ("vegas", 10), ("vegas", 150)])
def test_transfer_time_matches_direct_integration(tcp, size):
    assert ch5.transfer_time(size, tcp) == pytest.approx(_euler(tcp, size), rel=2e-3)


def test_transfer_time_case_2_prime_matches_direct_integration():
    assert ch5.transfer_time(300, "vegas", mu_f=10000.0) == pytest.approx(_euler("vegas", 300, mu_f=10000.0), rel=2e-3)


def test_transfer_time_is_increasing_and_consistent_with_throughput():
    s = np.array([0.0, 1.0, 10.0, 100.0, 1000.0, 10000.0])
    t = ch5.transfer_time(s, "tahoe")
    assert t[0] == 0.0 and np.all(np.diff(t) > 0)
    rate = ch5.mean_throughput("tahoe")
    # far into the transfer each extra cycle's worth of packets takes a cycle
    assert (ch5.transfer_time(200000, "tahoe") - ch5.transfer_time(100000, "tahoe")) * rate == pytest.approx(1e5, rel=1e-2)


def test_vegas_case_1_prime_runs_at_full_rate_after_ramp():
    t1, t2 = ch5.transfer_time([1000, 2000], "vegas")
    assert (t2 - t1) == pytest.approx(1000 / 4000)
    assert ch5.mean_throughput("vegas") == 4000.0


def test_throughput_vs_k_fig_5_3_shape():
    k = np.array([1.0, 2.0, 4.0, 8.0])
    tahoe = ch5.mean_throughput("tahoe", mu_f=1000 * k)
    assert np.all(np.diff(tahoe) > 0)  # grows with k while k <= B_f
    np.testing.assert_allclose(tahoe / (1000 * k), 0.98, atol=0.02)
    vegas = ch5.mean_throughput("vegas", mu_f=1000 * k)
    assert np.all(vegas >= tahoe)  # Vegas ahead for k <= B_f (Fig 5.3)
    big = ch5.mean_throughput(["tahoe", "vegas"][1], mu_f=20000.0)
    assert big < ch5.mean_throughput("tahoe", mu_f=20000.0)  # and behind for k > B_f


def test_dead_time_lowers_throughput():
    assert ch5.mean_throughput("tahoe", dead_time=0.01) < ch5.mean_throughput("tahoe")


def test_http_setup_and_sessions():
    rtt = 3.25e-3
    assert ch5.setup_time(rtt, http=1.1, document=[1, 2, 3]) == pytest.approx([1.5 * rtt, 0.5 * rtt, 0.5 * rtt])
    one = ch5.http_transfer_delay(10, "tahoe")
    assert one == pytest.approx(1.5 * rtt + ch5.transfer_time(10, "tahoe"))
    docs = [100] + [10] * 9
    d10 = ch5.http_session_delay(docs, http=1.0)
    d11 = ch5.http_session_delay(docs, http=1.1)
    assert d10 - d11 == pytest.approx(9 * rtt)  # cwnd = 1 again (hasegawa:A35): only set-up differs
    assert ch5.http_session_delay(docs, http=1.1, keep_cwnd=True) < d11
    with pytest.raises(ValueError, match="keep_cwnd"):
        ch5.http_session_delay(docs, http=1.0, keep_cwnd=True)


def test_vegas_slower_for_large_documents_at_large_delay():  # Fig 5.4 trend
    kw = {"mu_f": 3750.0, "tau_f": 0.05, "tau_r": 0.05}
    assert ch5.http_transfer_delay(1000, "vegas", **kw) > ch5.http_transfer_delay(1000, "tahoe", **kw)


def test_table_5_2_mix():
    assert sum(p for _, p in ch5.TABLE_5_2) == pytest.approx(1.0)
    assert dict(ch5.TABLE_5_2)[2.0] == pytest.approx(0.20)
    mean_size = sum(s * p for s, p in ch5.TABLE_5_2)
    assert mean_size == pytest.approx(0.2 * 5 + 0.125 * 6 + 0.075 * 10 + 0.35 + 0.01 * 38 + 0.008 * 76 + 1.98 + 2.0)
    d = ch5.mean_document_delay("tahoe", tau_f=[1e-4, 1e-3], tau_r=[1e-4, 1e-3])
    assert d.shape == (2,) and d[0] < d[1]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: ch5.tahoe_wmax(mu_f=-1.0), "mu_f"),
        (lambda: ch5.mean_throughput("reno"), "tcp"),
        (lambda: ch5.mean_throughput("tahoe", foo=1), "unknown"),
        (lambda: ch5.setup_time(0.1, http=2.0), "http"),
        (lambda: ch5.transfer_time(-3, "tahoe"), "size"),
        (lambda: ch5.vegas_wmax(alpha=4, beta=2), "beta"),
        (lambda: ch5.mean_document_delay(table=((1.0, 0.5),)), "add up"),
    ],
)
def test_ch5_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --- chapter 6 --------------------------------------------------------------------------------


def test_proportional_share_example():
    np.testing.assert_allclose(ch6.proportional_share([64, 128, 256], 336), [48, 96, 192])


def test_red_reno_window_and_fixed_point():
    wmax, wa = ch6.red_reno_window(0.02)
    assert wmax == pytest.approx(11.547, abs=1e-3) and wa == pytest.approx(8.660, abs=1e-3)
    assert ch6.red_reno_wmax_iteration(0.02) == pytest.approx(wmax)
    with pytest.raises(ValueError, match="did not converge"):
        ch6.red_reno_wmax_iteration(0.02, form="printed", max_iter=100)


def test_timeout_probability_values():
    assert ch6.timeout_probability(0.02, 9) == pytest.approx(0.0131, abs=5e-5)
    assert ch6.timeout_probability(0.02, 9, exponent="printed") == pytest.approx(0.0129, abs=5e-5)
    assert ch6.timeout_probability(0.02, 1) == 0.0
    assert ch6.timeout_probability(0.0, 9) == 0.0
    with pytest.raises(ValueError, match="p must be"):
        ch6.timeout_probability(1.5, 9)


def test_phase_model_common_window_matches_thesis_construction():
    bw, cap, wa = BW4 / 16384, 400e3 / 16384, 8.66
    n = bw.size
    # W_{i,j} and R_{i,j} exactly as printed (1-based j = phase with connections 1..j)
    w = np.zeros((n, n))
    w[:, n - 1] = wa * bw / bw[n - 1]
    for j in range(n - 2, -1, -1):
        w[j, j] = wa - w[j, j + 1 :].sum()
        w[:j, j] = w[j, j] * bw[:j] / bw[j]
    s = np.minimum(np.cumsum(bw), cap)
    rho = np.array([sum(w[i, j] / wa * w[i, j] / w[: j + 1, j].sum() * s[j] for j in range(i, n)) for i in range(n)])
    np.testing.assert_allclose(ch6.phase_throughput(bw, cap, wa), rho)


def test_red_reno_sum_exceeds_link_at_small_bw():  # §6.2.2, hasegawa:A48
    packet = ch6.red_reno_throughput(BW4, 400e3)
    time = ch6.red_reno_throughput(BW4, 400e3, weighting="time")
    assert packet.sum() == pytest.approx(539e3, rel=2e-3)
    assert time.sum() == pytest.approx(500e3, rel=2e-3)
    assert ch6.red_reno_throughput(BW4, 400e3, normalise=True).sum() == pytest.approx(400e3)
    # time-outs cost the fastest connection the most (Fig 6.8)
    no_to = ch6.red_reno_throughput(BW4, 400e3, timeout=False)
    loss = 1 - packet / no_to
    assert np.argmax(loss) == 3


def test_red_reno_large_link_gives_access_rates():
    rho = ch6.red_reno_throughput(BW4, 10e6, timeout=False)
    np.testing.assert_allclose(rho, BW4)


def test_enhanced_red_converges_and_orders_probabilities():
    res = ch6.enhanced_red_probabilities(BW4, 720e3)
    assert res.converged
    np.testing.assert_array_less(np.abs(res.throughput / res.ideal - 1), 0.01)
    assert np.all(np.diff(res.p) < 0)  # faster connections get smaller drop probabilities
    plain = ch6.red_reno_throughput(BW4, 720e3)
    assert np.max(np.abs(plain / res.ideal - 1)) > 0.05  # plain RED is not proportional


def test_enhanced_red_warns_when_it_cannot_converge():
    with pytest.warns(RuntimeWarning, match="enhanced RED"):
        res = ch6.enhanced_red_probabilities(BW4, 400e3, max_iter=50)
    assert not res.converged and res.iterations == 50


def test_vegas_fifo_equilibrium():
    eq = ch6.vegas_fifo_equilibrium(BW4, 400e3)
    np.testing.assert_allclose(eq.throughput, [64e3, 112e3, 112e3, 112e3])  # §6.3.1, Fig 6.14
    assert eq.throughput.sum() == pytest.approx(400e3)
    np.testing.assert_allclose(eq.queue, 3 + eq.throughput / 400e3)  # 6.18 midpoint
    np.testing.assert_allclose(eq.window, eq.rtt * eq.throughput / 16384)  # 6.17
    # the alpha/beta band
    lo = ch6.vegas_fifo_equilibrium(BW4, 400e3, queue="alpha")
    hi = ch6.vegas_fifo_equilibrium(BW4, 400e3, queue="beta")
    assert np.all(lo.window < eq.window) and np.all(eq.window < hi.window)


def test_vegas_red_throughput():
    rho = ch6.vegas_red_throughput(BW4, 960e3)
    np.testing.assert_allclose(rho[:3], BW4[:3])
    assert rho[3] < BW4[3]
    # more drops, lower throughput for the connection with a phase 1
    assert ch6.vegas_red_throughput(BW4, 960e3, p=0.2)[3] < rho[3]
    # hasegawa:A52: a cycle that ends before W_i: p = 1 drops every packet
    assert np.all(np.isfinite(ch6.vegas_red_throughput(BW4, 960e3, p=1.0)))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: ch6.red_reno_throughput([64e3, -1.0], 400e3), "bw"),
        (lambda: ch6.red_reno_throughput(BW4, 400e3, p=0.0), "p must"),
        (lambda: ch6.enhanced_red_probabilities(BW4, 400e3, a=0.9), "a must"),
        (lambda: ch6.vegas_fifo_equilibrium(BW4, 400e3, queue="low"), "queue"),
        (lambda: ch6.phase_throughput(BW4, 0.0, 8.0), "BW"),
    ],
)
def test_ch6_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --- registry ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_spec_shape_and_scalar_output(name):
    spec = MODELS[name]
    assert name.startswith("hasegawa-")
    assert set(spec) == {"func", "keys", "unit", "help"}
    assert callable(spec["func"]) and isinstance(spec["help"], str) and isinstance(spec["unit"], str)
    sig = inspect.signature(spec["func"])
    params = set(sig.parameters)
    has_var_kw = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    for key, (unit, default, desc) in spec["keys"].items():
        assert key in params or has_var_kw, key
        assert isinstance(unit, str) and isinstance(desc, str) and desc
    args = {k: (v[1] if v[1] is not None else _SAMPLE[k]) for k, v in spec["keys"].items()}
    value = spec["func"](**args)
    assert isinstance(value, float) and math.isfinite(value)


_SAMPLE = {
    "tau_j": 0.004, "tau_other": 0.008, "w_loss": 30.0, "tau": 0.005, "mu": 2441.4, "l2": 8.0,
    "threshold": 2.0, "n": 10, "rtt": 0.1, "a0": 0.1, "d0": 0.05, "window": 65536.0,
    "packet": 4096.0, "bandwidth": 150e6, "q_threshold": 2898.0, "air": 0.17, "buffer": 5796.0,
    "q_max": 3000.0, "icr": 17.66, "size": 10.0, "w_a": 8.66,
}  # fmt: skip
