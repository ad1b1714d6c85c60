"""The canonical order's work at scale: the control check's row hashes are not computed again,
and columns of Arrow strings are reordered through their dictionary; the tables are the same."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import synthguard.data.quirks as quirks
import synthguard.data.tables as tables_mod
from synthguard.data.tables import prepare_tables, take_rows

from ...helpers import counted_row_hashes


def _frames(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"b": rng.choice(["x", "y", "z"], n), "a": rng.integers(0, 50, n).astype(float)})


@pytest.fixture
def counted(monkeypatch):
    return counted_row_hashes(monkeypatch, quirks, tables_mod)


def test_the_canonical_order_reads_the_control_checks_row_hashes(counted, monkeypatch):
    o, s, c = _frames(300, 1), _frames(200, 2), _frames(100, 3)
    t = prepare_tables(o, s, c, canonical_columns=True)
    by_dictionary = []
    real = tables_mod._take_by_dictionary
    monkeypatch.setattr(tables_mod, "_take_by_dictionary",
                        lambda series, at: by_dictionary.append(len(at)) or real(series, at))
    # the inputs' fingerprints (frames, not files) and the control check: twice per table
    assert sorted(counted) == [100, 100, 200, 200, 300, 300]
    got = t.in_canonical_order()
    assert len(counted) == 6  # not hashed again
    assert got.row_hashes == {}
    # the column of strings reordered through its dictionary when pandas holds it in Arrow
    arrow = isinstance(t.original["b"].array, getattr(pd.arrays, "ArrowExtensionArray", ()))
    assert sorted(by_dictionary) == ([100, 200, 300] if arrow else [])
    plain = replace(t, row_hashes={}).in_canonical_order()  # hashed here
    assert len(counted) == 9
    for role in ("original", "synthetic", "control"):
        pd.testing.assert_frame_equal(got.get(role), plain.get(role))
        np.testing.assert_array_equal(got.row_numbers[role], plain.row_numbers[role])


def test_kept_row_hashes_of_a_replaced_frame_or_other_columns_are_not_read(counted):
    o, s, c = _frames(300, 1), _frames(200, 2), _frames(100, 3)
    t = prepare_tables(o, s, c, canonical_columns=True)
    other = replace(t, synthetic=t.synthetic.iloc[::-1].reset_index(drop=True))
    fresh = prepare_tables(o, s.iloc[::-1].reset_index(drop=True), c, canonical_columns=True)
    pd.testing.assert_frame_equal(other.in_canonical_order().synthetic, fresh.in_canonical_order().synthetic)
    # hashes on other columns than the canonical order's (an id column left out of the check)
    assert t._hashes_of("original", ["a"]) is None
    assert t._hashes_of("original", ["a", "b"]) is t.row_hashes["original"][2]


def test_no_hashes_are_kept_without_a_control():
    t = prepare_tables(_frames(30, 1), _frames(20, 2), canonical_columns=True)
    assert t.row_hashes == {}


@pytest.mark.parametrize("dtype", ["str", "string[pyarrow]", "object", "string[python]"])
def test_take_rows_is_iloc(dtype, monkeypatch):
    rng = np.random.default_rng(4)
    n = 5_000
    few = np.where(rng.random(n) < 0.1, None, rng.choice(["a", "bb", "ccc", "é"], n))
    frame = pd.DataFrame({"x": rng.random(n), "few": pd.array(few, dtype=dtype),
                          "when": pd.to_datetime(rng.integers(0, 10**9, n), unit="s"),
                          "many": pd.array([f"v{i}" for i in range(n)], dtype=dtype)})
    order = rng.permutation(n)
    by_dictionary = []
    real = tables_mod._take_by_dictionary

    def counted(series, at):
        by_dictionary.append(series.name)
        return real(series, at)

    monkeypatch.setattr(tables_mod, "_take_by_dictionary", counted)
    got = take_rows(frame, order)
    pd.testing.assert_frame_equal(got, frame.iloc[order].reset_index(drop=True))
    assert list(got.columns) == list(frame.columns)
    arrow = isinstance(frame["few"].array, getattr(pd.arrays, "ArrowExtensionArray", ()))
    # the column of few Arrow strings through its dictionary; the one of distinct values as iloc
    assert by_dictionary == (["few"] if arrow else [])


def test_the_text_sample_positions_of_a_size_are_drawn_once():
    """Every text column of a table of n values reads the same positions: the draw, a shuffle of
    all n positions, runs once per n (a fresh array each call)."""
    from synthguard.data import schema

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({c: rng.choice(["p", "q", "r"], 2_517) for c in "abcd"})
    schema._drawn_positions.cache_clear()
    schema.infer_schema(frame)
    assert schema._drawn_positions.cache_info().misses == 1  # four text columns, one draw
    first, again = schema.text_sample_positions(2_517), schema.text_sample_positions(2_517)
    assert first is not again
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, np.random.RandomState(0).choice(2_517, schema.TEXT_SAMPLE,
                                                                         replace=False))
