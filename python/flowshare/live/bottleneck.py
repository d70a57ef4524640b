"""The link a live run emulates: the dumbbell's bottleneck between routers r0 and r1, named as
the scenario builder names it (``docs/live.md``)."""

from __future__ import annotations

__all__ = ["DIRECTIONS", "NAME", "SELECTORS"]

_A, _B = "r0", "r1"
#: The link's name in the simulator's tables (``queues.csv``'s ``link``).
NAME = f"{_A}-{_B}"
#: Its two directions as the emulator reports them: (direction, from, to).
DIRECTIONS = (("forward", _A, _B), ("reverse", _B, _A))
#: What ``[trace] links`` may name in a live run: the bottleneck, whole or one direction.
SELECTORS = ("bottleneck", NAME, f"{_A}->{_B}", f"{_B}->{_A}")
