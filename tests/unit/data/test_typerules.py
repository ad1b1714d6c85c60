"""The typing rule of ``decide_types`` split into facts and a decision (:mod:`synthguard.data.typerules`):
a column's facts merged from those of its pieces (a cluster's partitions) equal the facts of the
whole column, so the decision and the casts are one process's."""

from __future__ import annotations

import pandas as pd
import pytest

from synthguard.data.arrowtext import TextColumn
from synthguard.data.coltypes import cast_text, decide_types
from synthguard.data.typerules import TextFacts, TypedFacts, decide_column

COLUMNS = {
    "ints": ["1", "2", "30", "4", "5", "6"],
    "ints_missing": ["1", None, None, None, "5", "6"],
    "decimal_point": ["1", "2.0", "3", "4", "5", "6"],
    "zeros": ["10", "20", "30", "40", "05", "06"],
    "text": ["a", "1", "b", "2", "0c", "d"],
    "booleans": ["True", "False", "true", None, "FALSE", "True"],
    "zero_one": ["0", "1", "1", "0", None, "1"],
    "decimals": ["1.5", "2.25", "x", "4", "5e3", "inf"],
    "empty_piece": [None, None, None, "7", "8", "9"],
}


@pytest.mark.parametrize("name", sorted(COLUMNS))
@pytest.mark.parametrize("cuts", [(3,), (1, 4), (2, 3, 5)])
def test_facts_of_the_pieces_merged_equal_the_whole_columns(name, cuts):
    s = pd.Series(COLUMNS[name], dtype=object)
    pieces = [s.iloc[a:b].reset_index(drop=True) for a, b in zip((0, *cuts), (*cuts, len(s)), strict=True)]
    whole = TextFacts.of(TextColumn(s))
    merged = TextFacts.merge([TextFacts.of(TextColumn(p)) for p in pieces])
    assert merged == whole
    typed = [TypedFacts.of(pd.to_numeric(p, errors="coerce")) for p in pieces]
    assert TypedFacts.merge(typed) == TypedFacts.of(pd.to_numeric(s, errors="coerce"))


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_pieces_cast_by_the_whole_columns_decision_are_decide_types(name):
    """Each piece cast as the merged facts decide (numbers at the whole column's dtype) gives the
    values ``decide_types`` gives the whole column, and its notes and reasons."""
    s = pd.Series(COLUMNS[name], dtype=object)
    other = pd.Series(["3", "4.0", None, "5", "6", "7"], dtype=object)
    for declared in ({}, {"c": "categorical"}, {"c": "numerical"}):
        frames = {"original": pd.DataFrame({"c": s.copy()}), "synthetic": pd.DataFrame({"c": other.copy()})}
        notes, warns, reasons = decide_types(frames, {"original", "synthetic"}, declared,
                                             {"original": "a", "synthetic": "b"})
        raw = {"original": s, "synthetic": other}
        facts = {r: TextFacts.merge([TextFacts.of(TextColumn(v.iloc[:2])),
                                     TextFacts.of(TextColumn(v.iloc[2:].reset_index(drop=True)))])
                 for r, v in raw.items()}
        got = decide_column("c", facts, {}, declared.get("c"), {"original": "a", "synthetic": "b"})
        assert notes.get("c", []) == ([got.note] if got.note else [])
        assert warns == ([got.warning] if got.warning else [])
        assert reasons.get("c") == got.reason
        for role, v in raw.items():
            how = got.casts.get(role)
            if how is None:
                continue
            pieces = [cast_text(how, TextColumn(p.reset_index(drop=True)), facts[role].int64)
                      for p in (v.iloc[:2], v.iloc[2:])]
            joined = pd.concat(pieces, ignore_index=True)
            if joined.dtype == object:  # booleans with and without missing values in pieces
                joined = joined.astype(object)
            pd.testing.assert_series_equal(joined, frames[role]["c"].astype(joined.dtype), check_names=False)
            if how == "numbers":  # int64 or float64 as the whole column, whatever the piece
                assert {p.dtype for p in pieces} == {frames[role]["c"].dtype}
