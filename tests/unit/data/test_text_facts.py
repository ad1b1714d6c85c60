"""The sample :func:`~synthguard.data.schema.infer_sdtype` reads from a text column, and the
decision it takes on it (:func:`~synthguard.data.schema.text_sample_sdtype`), which a cluster runs
on the same sample gathered from its partitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.data.dates import parse_like_first
from synthguard.data.schema import (
    TEXT_SAMPLE,
    infer_sdtype,
    text_sample,
    text_sample_positions,
    text_sample_sdtype,
)


def test_sample_positions_are_pandas_seeded_sample():
    s = pd.Series(np.arange(5000) * 3)
    assert s.iloc[text_sample_positions(len(s))].tolist() == s.sample(TEXT_SAMPLE, random_state=0).tolist()
    assert text_sample_positions(TEXT_SAMPLE) is None


@pytest.mark.parametrize("n", [3, TEXT_SAMPLE, 4100])
def test_text_sample_is_the_seeded_sample_stripped(n):
    s = pd.Series([f" v{i} " for i in range(n)], index=np.arange(n) * 2 + 7)
    want = s.sample(TEXT_SAMPLE, random_state=0) if n > TEXT_SAMPLE else s
    got = text_sample(s)
    assert got.tolist() == want.str.strip().tolist()
    assert got.index.tolist() == list(range(min(n, TEXT_SAMPLE)))


def _column(kind: str) -> pd.Series:
    r = np.random.default_rng(0)
    words = ["pain", "knee", "the", "a", "fall", "2020", "left", "after"]
    return pd.Series({
        "booleans": lambda: r.choice(["Yes", " no", "NO"], 300),
        "three labels": lambda: r.choice(["yes", "no", "maybe"], 300),
        "sentences": lambda: [" ".join(r.choice(words, r.integers(5, 12))) for _ in range(300)],
        "iso dates": lambda: [f"2020-{1 + i % 12:02d}-{1 + i % 28:02d}" for i in range(300)],
        "day-first dates": lambda: [f"{1 + i % 28:02d}/{1 + i % 12:02d}/2020" for i in range(300)],
        "dates of no fixed kind": lambda: [f"2020/{1 + i % 12:02d}/{1 + i % 28:02d}" for i in range(300)],
        "a time after them": lambda: [f"2020/{1 + i % 12:02d}/{1 + i % 28:02d}" for i in range(299)] + ["12:30"],
    }[kind]())


@pytest.mark.parametrize(("kind", "sdtype"), [
    ("booleans", "boolean"), ("three labels", None), ("sentences", "text"), ("iso dates", "datetime"),
    ("day-first dates", "datetime"), ("dates of no fixed kind", "datetime"), ("a time after them", None)])
def test_the_sample_decides_as_infer_sdtype(kind, sdtype):
    column = _column(kind)
    got = text_sample_sdtype(text_sample(column))
    assert (got[0] if got else None) == sdtype
    if got is None:  # then decided by the whole column's counts
        assert infer_sdtype(column)[0] == "categorical"
    else:
        assert infer_sdtype(column) == got


def test_dates_are_parsed_in_one_call_over_the_whole_sample():
    """Nine-digit fractions beside the year 2999: no resolution holds both, so the whole sample is
    no dates under pandas 2 and 3, although under pandas 3 each half behind the first value parses
    alone (microseconds for the year 2999, nanoseconds for the fractions)."""
    lead = ["2020/03/01 10:15:00.5"]
    fine = [f"2020/04/{d:02d} 11:00:00.{d * 7919:09d}" for d in range(1, 20)]
    far = [f"2999/05/{d:02d} 08:30:00.5" for d in range(1, 20)]
    whole = pd.Series(lead + fine + far)
    assert not parse_like_first(whole)
    assert text_sample_sdtype(text_sample(whole)) is None
    assert parse_like_first(pd.Series(lead + fine))
    if int(pd.__version__.split(".")[0]) >= 3:
        assert parse_like_first(pd.Series(lead + far))
