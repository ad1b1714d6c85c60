"""On a cluster, undeclared text columns are typed from the whole original, as in one process.

One process reads booleans, free text and dates from the values of a text column (a seeded
sample of at most 2,000 of them, :func:`~synthguard.data.schema.infer_sdtype`); a cluster used to
read them from the first partition, and refused a column without a value in its first
partition. Here the first partition of each column says one thing and the whole table another;
the cluster's schema (sdtypes and reasons) must be one process's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.data.tables import prepare_tables
from synthguard.errors import InputError

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")

SENTENCE = "the patient {} was seen on a monday morning by the nurse"


def _one_process(original, synthetic, control, metadata=None):
    return prepare_tables(original, synthetic, control, metadata, canonical_columns=True).schema


def _on_cluster(client, original, synthetic, control, metadata=None, npartitions=3):
    from synthguard.distributed._tables import load_tables

    return load_tables(original, synthetic, control, metadata, client=client, npartitions=npartitions).schema


def _specs(schema):
    """Every column's sdtype, reason and whether inferred, and the schema's roles (its text
    columns follow the sdtypes: the text metrics read them)."""
    return ({c: (s.sdtype, s.reason, s.inferred) for c, s in schema.columns.items()},
            {k: v for k, v in schema.to_dict().items() if k != "columns"})


def _frame(n: int, seed: int, head: int) -> pd.DataFrame:
    """``n`` rows whose first ``head`` rows (the first partition) mislead on every text column:
    ``note`` short labels there, sentences after; ``label`` sentences there, a few labels after;
    ``flag`` yes/no there, also "maybe" after; ``visit`` ISO dates there, also "unknown" after;
    ``age`` a plain number."""
    r = np.random.default_rng(seed)
    rest = n - head
    return pd.DataFrame({
        "note": list(r.choice(["ok", "fine"], head)) + [SENTENCE.format(i) for i in range(rest)],
        "label": [SENTENCE.format(i) for i in range(head)] + list(r.choice(["a", "b", "c"], rest)),
        "flag": list(r.choice(["yes", "no"], head)) + list(r.choice(["yes", "no", "maybe"], rest)),
        "visit": [f"2020-03-{i % 28 + 1:02d}" for i in range(head)]
        + list(r.choice(["2021-01-05", "unknown"], rest)),
        "age": r.integers(18, 90, n),
    })


@pytest.mark.parametrize(("column", "first", "whole"), [
    ("note", "categorical", "text"), ("label", "text", "categorical"), ("flag", "boolean", "categorical"),
    ("visit", "datetime", "categorical")])
def test_text_columns_typed_on_whole_tables(dask_client, column, first, whole):
    """Free text vs categorical both ways, a boolean pair broken after the first partition, a date
    column with a placeholder after it: one process's sdtype and reason, whatever the partition
    count."""
    tables = [_frame(90, seed, 30)[[column, "age"]] for seed in (1, 2, 3)]
    assert _one_process(*(t.iloc[:30] for t in tables)).sdtype(column) == first
    one = _one_process(*tables)
    assert one.sdtype(column) == whole
    for npartitions in (3, 4):
        assert _specs(_on_cluster(dask_client, *tables, npartitions=npartitions)) == _specs(one)


def test_columns_empty_in_the_first_partition(dask_client):
    """A column without a value in its first partition (dates, booleans, text, numbers) is typed
    from the other partitions, as one process types the whole column; one empty in a whole table
    is refused with one process's message."""
    r = np.random.default_rng(4)
    tables = []
    for seed in (5, 6, 7):
        t = _frame(90, seed, 30)
        t["when"] = [None] * 30 + [f"2019-{1 + i % 12:02d}-{1 + i % 27:02d}" for i in range(60)]
        t["paid"] = [None] * 30 + list(r.choice(["t", "f"], 60))
        t["memo"] = [None] * 30 + [SENTENCE.format(i) for i in range(60)]
        t["weight"] = [np.nan] * 30 + list(r.normal(70, 9, 60).round(1))
        tables.append(t)
    one = _one_process(*tables)
    assert {c: one.sdtype(c) for c in ("when", "paid", "memo", "weight")} == \
        {"when": "datetime", "paid": "boolean", "memo": "text", "weight": "numerical"}
    assert _specs(_on_cluster(dask_client, *tables)) == _specs(one)
    # declared sdtypes stay as declared, even on a column empty in the first partition
    meta = {"columns": {"memo": {"sdtype": "categorical"}, "weight": {"sdtype": "numerical"}}}
    declared = _one_process(*tables, meta)
    assert declared.sdtype("memo") == "categorical" and not declared.columns["memo"].inferred
    assert _specs(_on_cluster(dask_client, *tables, meta)) == _specs(declared)
    # empty in the whole release: the same refusal
    tables[1]["paid"] = None
    with pytest.raises(InputError) as single:
        _one_process(*tables)
    with pytest.raises(InputError) as cluster:
        _on_cluster(dask_client, *tables)
    assert str(cluster.value) == str(single.value)


def _large(n: int = 3200) -> pd.DataFrame:
    r = np.random.default_rng(8)
    return pd.DataFrame({
        "note": list(r.choice(["ok", "fine", "bad"], 800))
        + [" ".join(r.choice(["pain", "in", "the", "left", "knee", "after", "a", "fall"], r.integers(3, 12)))
           for _ in range(n - 800)],
        "stamp": [None] * 900 + [f"{2000 + i % 20}/{1 + i % 12:02d}/{1 + i % 28:02d}" for i in range(n - 900)],
        "kind": list(r.choice(["Y", "N"], 800)) + list(r.choice(["y", "n", "N", "unsure"], n - 800)),
        "age": r.integers(18, 90, n),
    })


@pytest.mark.parametrize(("column", "whole"), [("note", "text"), ("kind", "categorical"), ("stamp", "datetime")])
def test_sampled_text_of_a_large_original(dask_client, column, whole):
    """More than 2,000 values: one process reads a seeded sample of 2,000 of them; the cluster
    reads the same values from its partitions (the mean words per value in the reason is the
    sample's). Dates of no fixed kind (``2020/01/31``), none in the first partition, are parsed
    with the format pandas guesses from the sample's first value."""
    original = _large()[[column, "age"]]
    synthetic, control = original.sample(300, random_state=1), original.sample(300, random_state=2)
    one = _one_process(original, synthetic, control)
    assert one.sdtype(column) == whole
    assert _specs(_on_cluster(dask_client, original, synthetic, control, npartitions=4)) == _specs(one)


def test_reviews_mean_words_of_the_whole_column(dask_client, shared_data):
    """fine_foods_reviews split in three: the review column's reason states the mean words per
    value of the whole original (one process's), not of its first partition."""
    data = pd.read_csv(shared_data / "fine_foods_reviews_test.csv")
    order = np.random.default_rng(0).permutation(len(data))
    k = len(data) // 3
    original, synthetic, control = (data.iloc[order[a:b]].reset_index(drop=True)
                                    for a, b in ((0, k), (k, 2 * k), (2 * k, len(data))))
    one = _one_process(original, synthetic, control)
    assert one.sdtype("review") == "text"
    assert _specs(_on_cluster(dask_client, original, synthetic, control, npartitions=6)) == _specs(one)


@pytest.mark.parametrize("metadata", [None, {"text_columns": ["age"]}, {"text_columns": ["label", "age"]}],
                         ids=["undeclared", "declared-other", "declared-retyped"])
def test_text_columns_follow_the_whole_table_types(dask_client, metadata):
    """A column typed free text in the first partition only, and one typed free text on the whole
    table only: the cluster's ``text_columns`` (the declared ones first, then the columns typed
    text) are one process's, so the text metrics read the same columns."""
    tables = [_frame(90, seed, 30)[["note", "label", "age"]] for seed in (1, 2, 3)]
    one = _one_process(*tables, metadata)
    assert "note" in one.text_columns
    assert ("label" in one.text_columns) == bool(metadata and "label" in metadata["text_columns"])
    assert _specs(_on_cluster(dask_client, *tables, metadata)) == _specs(one)
