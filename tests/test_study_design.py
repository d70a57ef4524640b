"""Two-level designs: standard order, generators, orthogonality, and Mills et al.'s 2^(9−4)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from flowshare.study import design

# Mills et al. (2010), Table 8-13: x1..x5 then x6..x9 for conditions 1..32, row 25 x8 read as
# +1 (resolution nist:A4).
TABLE_8_13 = """
 1 ----- ++++    9 ---+- ---+   17 ----+ ----   25 ---++ +++-
 2 +---- +---   10 +--+- -++-   18 +---+ -+++   26 +--++ +--+
 3 -+--- -+--   11 -+-+- +-+-   19 -+--+ +-++   27 -+-++ -+-+
 4 ++--- --++   12 ++-+- ++-+   20 ++--+ ++--   28 ++-++ --+-
 5 --+-- --+-   13 --++- ++--   21 --+-+ ++-+   29 --+++ --++
 6 +-+-- -+-+   14 +-++- +-++   22 +-+-+ +-+-   30 +-+++ -+--
 7 -++-- +--+   15 -+++- -+++   23 -++-+ -++-   31 -++++ +---
 8 +++-- +++-   16 ++++- ----   24 +++-+ ---+   32 +++++ ++++
"""

# Generators that reproduce Table 8-13 (the chapter does not state them), with x1..x9 as A..I:
# x6 = x2x3x4x5, x7 = x1x3x4x5, x8 = x1x2x4x5, x9 = x1x2x3x5.
GENERATORS_NIST = {"F": "BCDE", "G": "ACDE", "H": "ABDE", "I": "ABCE"}


def table_8_13() -> np.ndarray:
    rows: dict[int, list[int]] = {}
    tokens = TABLE_8_13.split()
    for number, base, generated in zip(tokens[0::3], tokens[1::3], tokens[2::3], strict=True):
        rows[int(number)] = [1 if c == "+" else -1 for c in base + generated]
    assert sorted(rows) == list(range(1, 33))
    return np.array([rows[i] for i in range(1, 33)])


def test_generators_of_the_nist_design_give_table_8_13_exactly():
    matrix = design.fractional_factorial("ABCDEFGHI", GENERATORS_NIST)
    np.testing.assert_array_equal(matrix, table_8_13())


def test_nist_design_is_orthogonal_resolution_iv():
    matrix = design.fractional_factorial("ABCDEFGHI", GENERATORS_NIST)
    assert design.is_orthogonal(matrix)
    np.testing.assert_array_equal(matrix.T @ matrix, 32 * np.eye(9))
    assert design.resolution(GENERATORS_NIST) == 4
    # Resolution IV: no main effect is aliased with a two-factor interaction.
    for main in range(9):
        for i, j in itertools.combinations(range(9), 2):
            assert abs(matrix[:, main] @ (matrix[:, i] * matrix[:, j])) < 32
    # The alias set {x1x2, x6x7}: equal interaction columns.
    np.testing.assert_array_equal(matrix[:, 0] * matrix[:, 1], matrix[:, 5] * matrix[:, 6])
    # Odd conditions have x1 = −1.
    assert set(matrix[0::2, 0]) == {-1}


def test_full_factorial_is_in_standard_order():
    np.testing.assert_array_equal(
        design.full_factorial(3),
        [[-1, -1, -1], [1, -1, -1], [-1, 1, -1], [1, 1, -1],
         [-1, -1, 1], [1, -1, 1], [-1, 1, 1], [1, 1, 1]],
    )
    for k in range(1, 7):
        matrix = design.full_factorial(k)
        assert matrix.shape == (2**k, k)
        assert design.is_orthogonal(matrix)
        assert len({tuple(r) for r in matrix}) == 2**k


def test_half_fraction_generator_and_negative_generator():
    matrix = design.fractional_factorial("ABCD", {"D": "ABC"})
    assert matrix.shape == (8, 4)
    np.testing.assert_array_equal(matrix[:, 3], matrix[:, 0] * matrix[:, 1] * matrix[:, 2])
    assert design.is_orthogonal(matrix)
    assert design.resolution({"D": "ABC"}) == 4
    negative = design.fractional_factorial("ABCD", {"D": "-ABC"})
    np.testing.assert_array_equal(negative[:, 3], -matrix[:, 3])
    assert design.defining_relation({"D": "-ABC"}) == [(-1, "ABCD")]


def test_defining_relation_has_every_product_of_the_generator_words():
    relation = design.defining_relation({"D": "AB", "E": "AC"})
    assert relation == [(1, "ABD"), (1, "ACE"), (1, "BCDE")]
    assert design.resolution({"D": "AB", "E": "AC"}) == 3
    assert design.resolution({}) is None


def test_is_orthogonal_rejects_a_correlated_design():
    assert not design.is_orthogonal(np.array([[1, 1], [1, 1], [-1, -1], [-1, 1]]))


@pytest.mark.parametrize(
    ("factors", "generators", "message"),
    [
        ("ABC", {"C": "AX"}, "X is not a factor"),
        ("ABCD", {"C": "AB", "D": "AC"}, "C is a generated factor"),
        ("ABC", {"C": "A"}, "aliases C with a main effect"),
        ("ABC", {"C": "ab"}, "not a product of factor letters"),
        ("ABC", {"C": "AA"}, "names a factor twice"),
        ("ABCDE", {"D": "AB", "E": "AB"}, "D and E are aliased"),
        ("ABA", {}, "appears twice"),
        ("AB", {"Z": "AB"}, "not a factor"),
    ],
)
def test_bad_generators_are_named(factors, generators, message):
    with pytest.raises(ValueError, match=message):
        design.fractional_factorial(factors, generators)
