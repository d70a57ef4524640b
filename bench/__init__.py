"""Benchmark tooling of the repository; not part of the installed ``flowshare`` package.

``python3 -m bench`` (:mod:`bench.driver`) times flowshare against ns-2 and ns-3 and writes the
generated section of ``docs/performance.md``; ``bench/peers/`` holds the peers' programs. Run it
from the repository root (``make bench`` builds ``flowshare-sim`` first).
"""
