"""The Arrow reading of text columns gives the decisions pandas' own reading gave: the same numbers
(correctly rounded), the same int64/float64 typing, the same leading-zero and Unicode answers."""

from __future__ import annotations

import unicodedata

import numpy as np
import pandas as pd
import pytest

from synthguard.data.arrowtext import TextColumn
from synthguard.data.coltypes import _canonical_label, canonical_labels

#: spellings pandas.to_numeric reads the same on pandas 2.0 and 3 (and 1e400, which it does not)
SPELLINGS = ["1", " 1", "1 ", "+1", "-1", "1.", ".5", "-.5", "1e5", "1E5", "1e+5", "1e-5", "1.5e", "e5",
             "1_000", "1,000", "0x10", "inf", "-inf", "+inf", "Inf", "INF", "infinity", "-Infinity", "nan",
             "NaN", "NAN", "-nan", "NA", "", "  ", "1.2.3", "١٢", "１２", "1d5", "--1", "1-", "01", "00.5",
             "1e-400", "True", "1\t", "\t1", "1 2", "0.1e1", "5.", "+.5e-3", "1e05", "1.0", "00", "-0", "1e",
             "1.e5", ".e5", "None", "²", "\u00a01", "1\u2009", "+", "-", ".", "-2.3025850929940455"]


def _pandas(values: list) -> pd.Series:
    """``pandas.to_numeric``, with its floats correctly rounded (pandas 2's parser can be one unit
    in the last place off; synthguard corrected that before too)."""
    out = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
    if pd.api.types.is_float_dtype(out.dtype):
        ok = out.notna().to_numpy()
        exact = out.to_numpy(copy=True)
        exact[ok] = [float(v) for v in np.asarray(values, dtype=object)[ok]]
        out = pd.Series(exact)
    return out


@pytest.mark.parametrize("value", SPELLINGS)
def test_each_spelling_is_a_number_exactly_when_pandas_reads_one(value):
    col = TextColumn(pd.Series([value, "2"], dtype=object))
    want = _pandas([value, "2"])
    assert bool(col.is_number[0]) == bool(want.notna()[0])
    got = col.numbers.to_numpy(dtype=np.float64)
    np.testing.assert_array_equal(got, want.to_numpy(dtype=np.float64))


def test_random_decimals_parse_to_the_correctly_rounded_float():
    """17 significant digits, exponents, signs: Arrow's parse equals Python's ``float`` (pandas 2's
    default parser was one unit in the last place off on some)."""
    rng = np.random.default_rng(3)
    v = rng.normal(0, 1, 20_000) * 10.0 ** rng.integers(-20, 20, 20_000)
    text = [repr(float(x)) for x in v] + [f"{x:.17g}" for x in v[:5000]] + [f"{x:.3e}" for x in v[:5000]]
    col = TextColumn(pd.Series(text, dtype=object))
    assert col.all_numbers
    np.testing.assert_array_equal(col.numbers.to_numpy(), np.array([float(t) for t in text]))


@pytest.mark.parametrize(("values", "dtype"), [
    (["1", "2", "30"], "int64"), (["1", "2.0"], "float64"), (["1", None], "float64"),
    (["1e3", "2"], "float64"), (["+1", "2"], "int64"), ([" 1", "2 "], "int64"),
    (["9223372036854775807", "1"], "int64"), (["9223372036854775808"], "uint64"),
    (["99999999999999999999"], "float64"), (["inf", "1"], "float64")])
def test_integer_literals_are_int64_like_read_csv(values, dtype):
    got = TextColumn(pd.Series(values, dtype=object)).numbers
    want = _pandas(values)
    assert str(got.dtype) == str(want.dtype) == dtype
    np.testing.assert_array_equal(got.to_numpy(), want.to_numpy())


def test_numbers_among_other_values_and_whitespace():
    s = pd.Series(["12", " 7 ", "unknown", None, "3.5", "nan"] * 50, dtype=object)
    col = TextColumn(s)
    assert col.n_present == 250 and col.n_numbers == 150 and not col.all_numbers
    np.testing.assert_array_equal(col.numbers.to_numpy(), _pandas(s.tolist()).to_numpy())
    assert not col.written_as_integers
    assert col.first(col.present & ~col.is_number) == "unknown"


def test_leading_zero_and_spellings():
    assert TextColumn(pd.Series(["10", "0", "0.5", "007"])).leading_zero == "007"
    assert TextColumn(pd.Series(["10", "0", "0.5", None])).leading_zero is None
    col = TextColumn(pd.Series(["True", "false", None]))
    assert col.only({"True", "false"}) and not col.only({"True"})


def test_works_on_pandas_string_columns_without_a_copy():
    s = pd.Series(["1", None, "3"], dtype="string[pyarrow]")
    col = TextColumn(s)
    assert col.n_present == 2 and col.numbers.tolist()[::2] == [1.0, 3.0]


def test_nfc_only_when_something_changes():
    nfd = unicodedata.normalize("NFD", "Île-de-France")
    assert TextColumn(pd.Series(["Paris", None])).nfc() is None
    out = TextColumn(pd.Series([nfd, "Paris", None], dtype=object)).nfc()
    assert out.tolist()[:2] == ["Île-de-France", "Paris"] and pd.isna(out.iloc[2])


@pytest.mark.parametrize("values", [
    [1.0, 2.5, np.nan, -0.0, 1e16, 2.0 ** 60, np.inf, 0.1, 1e-5],
    [1, 2, 3], ["a", 1, 2.0, None, True, np.float32(0.5)]])
def test_canonical_labels_as_before(values):
    """The vectorised labels equal the per-value rule they replace."""
    s = pd.Series(values)
    want = [v if pd.isna(v) else _canonical_label(v) for v in s.astype(object)]
    got = canonical_labels(s).tolist()
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert (pd.isna(g) and pd.isna(w)) or (g == w and type(g) is str), (g, w)
