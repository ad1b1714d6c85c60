"""``Tables.with_row_numbers``: a row-number column added to typed tables gives the tables the typing
decision gives to the frames with that column added and declared numerical (the anonymeter facade
types a script's frames once and derives the row-numbered tables of linkability and inference)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.data import prepare_tables

from ...conftest import mixed_frame

ROW = "__row__"


def _typed_with_the_column(frames):
    added = [None if f is None else f.assign(**{ROW: np.arange(len(f), dtype=float)}) for f in frames]
    return prepare_tables(*added, {"columns": {ROW: {"sdtype": "numerical"}}}, strict_control=False,
                          canonical_columns=True).in_canonical_order()


def _derived(frames):
    typed = prepare_tables(*frames, None, strict_control=False, canonical_columns=True).in_canonical_order()
    return typed.with_row_numbers(ROW).in_canonical_order()


def _demo(demo_data):
    # duplicated training rows (kept apart only by their row numbers), index labels not 0..n-1
    ori = pd.concat([demo_data["original"].head(400)] * 2).sample(frac=1.0, random_state=3)
    return ori, demo_data["leaky"].head(500), demo_data["control"].head(300)


def _mixed(_demo_data):
    return mixed_frame(600, 0, nan_rate=0.1), mixed_frame(600, 1, nan_rate=0.1), mixed_frame(200, 2)


def _no_control(demo_data):
    return demo_data["original"].head(300), demo_data["leaky"].head(300), None


@pytest.mark.parametrize("make", [_demo, _mixed, _no_control])
def test_row_numbered_tables_equal_the_typing_of_the_frames_with_the_row_column_declared_numerical(
        demo_data, make):
    frames = make(demo_data)
    want, got = _typed_with_the_column(frames), _derived(frames)
    assert got.roles == want.roles
    for role in want.roles:
        pd.testing.assert_frame_equal(got.get(role), want.get(role), check_exact=True)
        np.testing.assert_array_equal(got.row_numbers[role], want.row_numbers[role])
    assert got.schema == want.schema
    assert dict(got.notes) == dict(want.notes)


def test_row_numbers_are_the_input_rows_whatever_order_the_tables_are_in(demo_data):
    frames = _demo(demo_data)
    plain = prepare_tables(*frames, None, strict_control=False, canonical_columns=True)
    from_input, from_canonical = (t.with_row_numbers(ROW).in_canonical_order()
                                  for t in (plain, plain.in_canonical_order()))
    for role in plain.roles:
        pd.testing.assert_frame_equal(from_input.get(role), from_canonical.get(role), check_exact=True)
        assert from_canonical.get(role)[ROW].to_numpy().tolist() == from_canonical.row_numbers[role].tolist()


def test_a_row_number_column_the_tables_already_have_is_refused(demo_data):
    typed = prepare_tables(*_no_control(demo_data))
    with pytest.raises(ValueError, match="already have"):
        typed.with_row_numbers("age")
