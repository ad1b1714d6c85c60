"""The facts :func:`~synthguard.data.schema.infer_sdtype` reads from a text column's sample merge
over any split of the sample into parts (a cluster's partitions) to the facts of the whole sample."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.data.dates import parse_like_first
from synthguard.data.schema import (
    TEXT_SAMPLE,
    merge_text_facts,
    sample_sdtype,
    sample_strings,
    text_facts,
    text_sample_positions,
)


def test_sample_positions_are_pandas_seeded_sample():
    s = pd.Series(np.arange(5000) * 3)
    assert s.iloc[text_sample_positions(len(s))].tolist() == s.sample(TEXT_SAMPLE, random_state=0).tolist()
    assert text_sample_positions(TEXT_SAMPLE) is None


def _columns():
    r = np.random.default_rng(0)
    words = ["pain", "knee", "the", "a", "fall", "2020"]
    yield pd.Series(r.choice(["Yes", " no", "NO"], 300))
    yield pd.Series(r.choice(["yes", "no", "maybe"], 300))
    yield pd.Series([" ".join(r.choice(words, r.integers(1, 10))) for _ in range(300)])
    yield pd.Series([f"2020-{1 + i % 12:02d}-{1 + i % 28:02d}" for i in range(300)])
    yield pd.Series([f"{1 + i % 28:02d}/{1 + i % 12:02d}/2020" for i in range(300)])
    yield pd.Series([f"2020/{1 + i % 12:02d}/{1 + i % 28:02d}" for i in range(299)] + ["12:30"])
    yield pd.Series(["12:30"] + [f"2020/{1 + i % 12:02d}/{1 + i % 28:02d}" for i in range(299)])


def _split(sample: pd.Series, cuts: tuple[int, ...]) -> list[pd.Series]:
    bounds = [0, *cuts, len(sample)]
    return [sample.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


@pytest.mark.parametrize("cuts", [(0,), (1, 150), (0, 0, 299, 299), (37, 38, 200)])
def test_merged_parts_equal_the_whole_sample(cuts):
    for column in _columns():
        sample = sample_strings(column)
        whole = text_facts(sample)
        parts = [text_facts(p) for p in _split(sample, cuts)]
        merged = merge_text_facts(parts)
        if whole.dates_undecided:
            first = sample.iloc[0]
            whole = whole.__class__(**{**whole.__dict__, "parsed": parse_like_first(sample, first)})
            got = all(parse_like_first(p, first) for p in _split(sample, cuts))
            merged = merged.__class__(**{**merged.__dict__, "parsed": got})
        assert sample_sdtype(merged) == sample_sdtype(whole)
        assert (merged.values, merged.lowered, merged.words, merged.dated, merged.iso, merged.dmy,
                merged.parsed) == (whole.values, whole.lowered, whole.words, whole.dated, whole.iso,
                                   whole.dmy, whole.parsed)
        assert np.array_equal(merged.distinct, whole.distinct)
