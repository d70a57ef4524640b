"""The published numbers of the EFCM study: Tables 5.1-5.16, Table 5.17 and Appendix B.

M. Savorić and H. Karl, *Performance Evaluation of an Improved Common Congestion Controller
for WWW-based TCP Connections*, Technical Report TKN-04-007, TU Berlin, 2004, Chapter 5 and
Appendix B. Throughputs are in segments of 1460 bytes per second, cwnd and ssthresh in
segments, SRTT and RTTVAR in seconds. Δ is the report's sign of the t-test of (no EFCM − EFCM):
``+`` EFCM significantly better, ``−`` standard TCP significantly better, ``=`` no significant
difference.

The report's Appendix B is an OCR'd text; three cells of B.8 carry stray ``+`` signs that
conflict with the tables' Δ and the intervals' midpoints and are read as ``−``, and B.3 repeats
the last digit of three lower bounds (resolution ``efcm:A20``, ``docs/resolutions.md``);
Table 5.17's '++' is written '+' (``efcm:A19``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["APPENDIX_B", "CONCURRENT", "NEW", "SUMMARY", "VOLUME", "Concurrent", "New"]

Case = tuple[int, bool]
"""(minimum RTT in ms, unreliable last hop)."""


@dataclass(frozen=True)
class New:
    """A new-connection table (5.1, 5.3, …, 5.15): per source TCP 1-3."""

    table: str
    t1: tuple[tuple[float, float, float], tuple[float, float, float], str]
    """T̄1 without EFCM, with EFCM, and Δ per source."""
    t2: tuple[tuple[float, float, float], tuple[float, float, float], str]
    cwnd: tuple[float, float, float]
    """Mean initial cwnd with EFCM (3.00 for every source without)."""
    ssthresh: tuple[float, float, float]
    """Mean initial ssthresh with EFCM (44.00 without)."""
    srtt: tuple[float, float, float]
    rttvar: tuple[float, float, float]


@dataclass(frozen=True)
class Concurrent:
    """A concurrent-connection table (5.2, 5.4, …, 5.16): pooled over the ensemble."""

    table: str
    t1: tuple[float, float, str]
    """T̄1 without EFCM, with EFCM, Δ."""
    t2: tuple[float, float, str]
    fairness: tuple[float, float, str]
    """Ī_f, the mean of Jain's index over the periods of concurrency."""


def _n(table: str, t1n: str, t1e: str, t1d: str, t2n: str, t2e: str, t2d: str, cw: str,
       ss: str, srtt: str, rv: str) -> New:
    def three(text: str) -> tuple[float, float, float]:
        a, b, c = (float(x) for x in text.split())
        return a, b, c

    return New(table, (three(t1n), three(t1e), t1d), (three(t2n), three(t2e), t2d), three(cw),
               three(ss), three(srtt), three(rv))


NEW: dict[Case, New] = {
    (20, False): _n("5.1", "42.25 42.30 42.12", "41.48 39.88 40.37", "=−−",
                    "46.61 46.74 46.89", "50.68 49.95 50.22", "+++",
                    "34.52 32.94 35.01", "70.35 68.56 71.24", "0.121 0.119 0.122",
                    "0.079 0.077 0.080"),
    (20, True): _n("5.3", "23.56 24.20 24.99", "41.37 40.60 40.20", "+++",
                   "69.12 69.69 69.78", "69.35 67.98 68.33", "=−−",
                   "12.33 12.07 12.07", "40.64 40.60 40.44", "0.046 0.045 0.045",
                   "0.033 0.032 0.032"),
    (60, False): _n("5.5", "33.82 33.98 33.35", "34.95 34.93 34.15", "===",
                    "37.12 37.49 37.42", "43.35 43.46 43.18", "+++",
                    "34.56 34.09 34.96", "70.74 70.08 71.22", "0.161 0.159 0.159",
                    "0.083 0.081 0.080"),
    (60, True): _n("5.7", "19.67 20.71 19.75", "34.76 34.52 35.16", "+++",
                   "43.10 43.36 43.09", "49.99 49.81 50.71", "+++",
                   "11.87 12.05 11.98", "40.08 40.11 40.34", "0.075 0.076 0.075",
                   "0.030 0.030 0.031"),
    (100, False): _n("5.9", "30.45 30.52 30.13", "34.29 34.95 34.24", "+++",
                     "31.11 31.20 31.16", "40.87 41.10 40.73", "+++",
                     "39.29 39.15 38.46", "76.37 76.09 75.39", "0.199 0.197 0.196",
                     "0.090 0.087 0.088"),
    (100, True): _n("5.11", "16.94 16.89 16.96", "29.89 29.96 29.76", "+++",
                    "30.38 30.18 30.41", "39.45 39.13 39.29", "+++",
                    "12.03 12.01 12.03", "40.26 40.26 40.26", "0.111 0.111 0.112",
                    "0.034 0.034 0.034"),
    (500, False): _n("5.13", "13.16 12.97 13.10", "16.98 17.34 16.92", "+++",
                     "12.28 12.14 12.22", "19.74 19.81 19.63", "+++",
                     "50.24 48.91 49.48", "88.57 87.00 87.88", "0.564 0.559 0.559",
                     "0.149 0.144 0.144"),
    (500, True): _n("5.15", "6.30 6.31 6.29", "10.87 10.82 10.77", "+++",
                    "7.78 7.80 7.79", "11.82 11.77 11.78", "+++",
                    "12.56 12.56 12.61", "40.51 40.48 40.62", "0.501 0.502 0.503",
                    "0.093 0.093 0.094"),
}
"""Tables 5.1-5.15 (odd): new connections entering an ensemble, by case."""

CONCURRENT: dict[Case, Concurrent] = {
    (20, False): Concurrent("5.2", (39.97, 38.86, "−"), (38.52, 41.39, "+"),
                            (0.7916, 0.8316, "+")),
    (20, True): Concurrent("5.4", (35.48, 44.49, "+"), (65.65, 63.23, "−"),
                           (0.8261, 0.8636, "+")),
    (60, False): Concurrent("5.6", (31.93, 31.86, "="), (31.12, 34.17, "+"),
                            (0.7943, 0.8324, "+")),
    (60, True): Concurrent("5.8", (27.32, 36.38, "+"), (39.65, 44.77, "+"),
                           (0.8342, 0.8692, "+")),
    (100, False): Concurrent("5.10", (27.51, 30.07, "+"), (25.97, 30.93, "+"),
                             (0.7907, 0.8174, "+")),
    (100, True): Concurrent("5.12", (21.48, 29.90, "+"), (27.48, 33.89, "+"),
                            (0.8402, 0.8743, "+")),
    (500, False): Concurrent("5.14", (11.65, 14.06, "+"), (10.45, 14.35, "+"),
                             (0.7757, 0.8097, "+")),
    (500, True): Concurrent("5.16", (6.25, 9.05, "+"), (6.38, 9.00, "+"),
                            (0.8571, 0.8904, "+")),
}
"""Tables 5.2-5.16 (even): concurrent connections, by case."""

SUMMARY: dict[str, dict[bool, str]] = {
    "t1_new": {False: "−=++", True: "++++"},
    "t2_new": {False: "++++", True: "−+++"},
    "t1_conc": {False: "−=++", True: "++++"},
    "t2_conc": {False: "++++", True: "−+++"},
    "fairness": {False: "++++", True: "++++"},
}
"""Table 5.17: per measure and last hop (unreliable: True), the sign for the minimum RTTs 20,
60, 100 and 500 ms ('++' written as '+'; a single sign in the report stands for all four)."""

VOLUME: dict[str, float] = {
    "connections.100.reliable": 21000,
    "connections.100.unreliable": 20500,
    "capable.100.reliable": 0.085,
    "capable.100.unreliable": 0.139,
    "capable.500.reliable": 0.180,
    "capable.500.unreliable": 0.311,
}
"""§5.1: connections opened at the server per 250,000 s run, and the share of them that are
EFCM-capable (open while another of the server's connections is open)."""

_B = {
    (20, False): "0.90 -0.73 2.28|0.95 0.45 4.39|0.95 0.01 3.49|0.99 -5.77 -2.37|"
                 "0.99 -4.64 -1.77|0.99 -4.95 -1.70|0.95 0.25 1.99|0.99 -3.79 -1.94|"
                 "0.99 -0.05 -0.03",
    (20, True): "0.99 -19.76 -15.84|0.99 -18.90 -13.90|0.99 -17.37 -13.04|0.90 -1.49 1.03|"
                "0.90 0.27 3.15|0.90 0.17 2.73|0.99 -10.35 -7.67|0.99 1.01 3.82|"
                "0.99 -0.05 -0.03",
    (60, False): "0.90 -2.31 0.05|0.90 -2.10 0.20|0.90 -1.76 0.16|0.99 -7.18 -5.28|"
                 "0.99 -6.89 -5.06|0.99 -6.63 -4.90|0.90 -0.61 0.76|0.99 -3.72 -2.39|"
                 "0.99 -0.05 -0.03",
    (60, True): "0.99 -16.59 -13.58|0.99 -14.84 -12.77|0.99 -17.54 -13.29|0.99 -7.70 -6.08|"
                "0.99 -7.34 -5.56|0.99 -8.94 -6.30|0.99 -9.83 -8.31|0.99 -5.82 -4.42|"
                "0.99 -0.04 -0.03",
    (100, False): "0.99 -5.07 -2.60|0.99 -5.78 -3.06|0.99 -5.78 -2.43|0.99 -10.47 -9.05|"
                  "0.99 -10.48 -9.32|0.99 -10.31 -8.83|0.99 -3.30 -1.81|0.99 -5.45 -4.47|"
                  "0.99 -0.03 -0.02",
    (100, True): "0.99 -13.68 -12.21|0.99 -14.20 -11.95|0.99 -13.66 -11.93|0.99 -9.81 -8.34|"
                 "0.99 -9.53 -8.38|0.99 -9.50 -8.27|0.99 -8.96 -7.89|0.99 -6.85 -5.96|"
                 "0.99 -0.04 -0.03",
    (500, False): "0.99 -4.28 -3.35|0.99 -5.04 -3.71|0.99 -4.40 -3.23|0.99 -7.71 -7.22|"
                  "0.99 -8.05 -7.30|0.99 -7.70 -7.13|0.99 -2.63 -2.18|0.99 -4.10 -3.70|"
                  "0.99 -0.04 -0.03",
    (500, True): "0.99 -4.77 -4.44|0.99 -4.70 -4.39|0.99 -4.70 -4.30|0.99 -4.19 -3.96|"
                 "0.99 -4.11 -3.87|0.99 -4.16 -3.83|0.99 -2.88 -2.71|0.99 -2.70 -2.54|"
                 "0.99 -0.04 -0.03",
}
B_MEASURES = ("t1_new_1", "t1_new_2", "t1_new_3", "t2_new_1", "t2_new_2", "t2_new_3",
              "t1_conc", "t2_conc", "fairness")
"""The columns of Appendix B's tables B.1-B.8, in order."""

APPENDIX_B: dict[Case, dict[str, tuple[float, float, float]]] = {
    case: {m: (float(a), float(b), float(c)) for m, (a, b, c) in
           zip(B_MEASURES, (cell.split() for cell in text.split("|")), strict=True)}
    for case, text in _B.items()
}
"""Appendix B: per case and measure, (level, low, high) of the confidence interval of
(no EFCM − EFCM) at the highest significant level."""
