"""Experimental designs: two-level fractional factorials 2^(k−p) built from generators.

Factors are named by single capital letters. The *base* factors (those without a generator)
form a full two-level factorial in standard order, the first base factor varying fastest; each
generated factor is the product of the base columns its generator names (``D = "ABC"`` sets
D = A·B·C in every row; ``D = "-ABC"`` the negative).

Examples
--------
The 2^(9−4) design of Mills et al. (2010) (Table 8-13), factors A..I standing for x1..x9:

>>> d = fractional_factorial("ABCDEFGHI", {"F": "BCDE", "G": "ACDE", "H": "ABDE", "I": "ABCE"})
>>> d.shape
(32, 9)
>>> "".join("+" if v > 0 else "-" for v in d[1])
'+----+---'
>>> resolution({"F": "BCDE", "G": "ACDE", "H": "ABDE", "I": "ABCE"})
4
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = [
    "defining_relation",
    "fractional_factorial",
    "full_factorial",
    "is_orthogonal",
    "parse_generator",
    "resolution",
]

_GENERATOR = re.compile(r"^(-?)([A-Z]+)$")


def full_factorial(k: int) -> np.ndarray:
    """The 2^k two-level design in standard order (first column varies fastest).

    Returns
    -------
    numpy.ndarray
        ``(2**k, k)`` array of ``-1``/``+1`` (int8).
    """
    if k < 0:
        raise ValueError(f"number of factors must be >= 0, got {k}")
    rows = np.arange(2**k)[:, None]
    bits = (rows >> np.arange(k)[None, :]) & 1
    return (2 * bits - 1).astype(np.int8)


def parse_generator(word: str) -> tuple[int, str]:
    """Split a generator such as ``"-ABC"`` into its sign and its letters.

    Raises
    ------
    ValueError
        If the word is not an optional ``-`` followed by distinct capital letters.
    """
    match = _GENERATOR.match(word) if isinstance(word, str) else None
    if match is None:
        raise ValueError(
            f"generator {word!r} is not a product of factor letters; expected e.g. \"ABC\" "
            "or \"-ABC\""
        )
    letters = match.group(2)
    if len(set(letters)) != len(letters):
        raise ValueError(f"generator {word!r} names a factor twice")
    return (-1 if match.group(1) else 1), letters


def fractional_factorial(factors: str | Sequence[str], generators: Mapping[str, str]) -> np.ndarray:
    """The 2^(k−p) design of ``factors`` (letters) with the given generators.

    Parameters
    ----------
    factors : str or sequence of str
        The k factor letters, in column order.
    generators : mapping of str to str
        Generated factor → product of base factors (``{"D": "ABC"}``); p entries.

    Returns
    -------
    numpy.ndarray
        ``(2**(k−p), k)`` array of ``-1``/``+1`` (int8), columns in the order of ``factors``.

    Raises
    ------
    ValueError
        If a letter is repeated or unknown, a generator names a generated factor, or a
        generated factor equals another column (the design would alias two main effects).
    """
    names = list(factors)
    if len(set(names)) != len(names):
        raise ValueError("a factor letter appears twice")
    for name in names:
        if not re.fullmatch(r"[A-Z]", name):
            raise ValueError(f"factor {name!r} is not a single capital letter A-Z")
    for generated in generators:
        if generated not in names:
            raise ValueError(f"generator for {generated!r}, which is not a factor")
    base = [n for n in names if n not in generators]
    design = full_factorial(len(base))
    columns = {n: design[:, i] for i, n in enumerate(base)}
    for generated, word in generators.items():
        sign, letters = parse_generator(word)
        for letter in letters:
            if letter not in base:
                what = "a generated factor" if letter in generators else "not a factor"
                raise ValueError(
                    f"generator {generated} = {word!r}: {letter} is {what}; generators are "
                    f"products of the base factors {''.join(base)}"
                )
        if len(letters) < 2:
            raise ValueError(
                f"generator {generated} = {word!r} aliases {generated} with a main effect; "
                "use a product of at least two base factors"
            )
        columns[generated] = (sign * np.prod([columns[c] for c in letters], axis=0)).astype(
            np.int8
        )
    matrix = np.column_stack([columns[n] for n in names]) if names else np.ones((1, 0), np.int8)
    for i, j in itertools.combinations(range(len(names)), 2):
        if abs(int(matrix[:, i] @ matrix[:, j])) == len(matrix):
            raise ValueError(f"factors {names[i]} and {names[j]} are aliased (equal columns)")
    return matrix


def defining_relation(generators: Mapping[str, str]) -> list[tuple[int, str]]:
    """Words of the defining relation I = ... (sign, sorted letters), shortest first.

    Each generator ``D = ABC`` gives the word ``ABCD``; the relation holds every product of
    these words (2^p − 1 words).
    """
    words = []
    for generated, word in generators.items():
        sign, letters = parse_generator(word)
        words.append((sign, frozenset(letters) | {generated}))
    relation = []
    for r in range(1, len(words) + 1):
        for combo in itertools.combinations(words, r):
            sign = 1
            letters: frozenset[str] = frozenset()
            for s, w in combo:
                sign *= s
                letters = letters ^ w
            relation.append((sign, "".join(sorted(letters))))
    relation.sort(key=lambda sw: (len(sw[1]), sw[1]))
    return relation


def resolution(generators: Mapping[str, str]) -> int | None:
    """The resolution of the design: length of the shortest word of the defining relation
    (``None`` for a full factorial)."""
    relation = defining_relation(generators)
    return min(len(w) for _, w in relation) if relation else None


def is_orthogonal(matrix: np.ndarray) -> bool:
    """Whether every pair of columns is orthogonal and balanced: XᵀX = nI and each column sums
    to zero."""
    x = np.asarray(matrix, dtype=np.int64)
    n = len(x)
    return bool(np.array_equal(x.T @ x, n * np.eye(x.shape[1], dtype=np.int64))) and bool(
        np.all(x.sum(axis=0) == 0)
    )
