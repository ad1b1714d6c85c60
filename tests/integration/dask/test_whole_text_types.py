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

from synthguard import evaluate
from synthguard.data.tables import prepare_tables
from synthguard.errors import InputError

from .test_distributed_equality import _entries

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


def _stamps(case: str, seed: int) -> list[str]:
    """90 date-times written ``yyyy/mm/dd HH:MM:SS.f`` (no fixed kind: parsed with the format
    pandas guesses from the first value), 30 per partition: tenths of a second, then ``fine``
    (``ns``: nine digits, ``us``: six), then ``last`` (``far``: tenths in the year 2999, which fits
    microseconds but not nanoseconds; ``ms``: hundredths in 2021). pandas 3 infers one resolution
    from the digits of all the values it parses together; pandas 2 parses all at nanoseconds."""
    fine, last = case.split("-")
    r = np.random.default_rng(seed)
    day, hour = r.integers(1, 28, 90), r.integers(0, 24, 90)
    digits = {"ns": 9, "us": 6}[fine]
    head = [f"2020/03/{d:02d} {h:02d}:15:00.5" for d, h in zip(day[:30], hour[:30], strict=True)]
    middle = [f"2020/04/{d:02d} {h:02d}:00:00.{f:0{digits}d}"
              for d, h, f in zip(day[30:60], hour[30:60], r.integers(1, 10**digits, 30), strict=True)]
    tail = [f"{2999 if last == 'far' else 2021}/05/{d:02d} {h:02d}:30:00.{5 if last == 'far' else 25}"
            for d, h in zip(day[60:], hour[60:], strict=True)]
    return head + middle + tail


def _outcome(load):
    """The schema ``load()`` gives (sdtypes, reasons, roles), or the message of its InputError."""
    try:
        return _specs(load())
    except InputError as exc:
        return str(exc)


@pytest.mark.parametrize("case", ["ns-far", "us-far", "ns-ms", "us-ms"])
def test_dates_of_another_precision_in_each_partition(dask_client, case):
    """Date-times of a different precision in each partition: the sample is parsed in one call, as
    one process parses it, not partition by partition (pandas 3 would read nanoseconds beside the
    year 2999 in one partition each, where one process leaves the year 2999 unparsed: categorical).
    The type, the refusal of dates beyond 2262 (microseconds beside 2999 under pandas 3) and the
    results of metrics reading the encoded dates are one process's, under pandas 2 and 3."""
    import dask.dataframe as dd

    tables = [pd.DataFrame({"stamp": _stamps(case, seed), "age": np.random.default_rng(seed).integers(18, 90, 90)})
              for seed in (1, 2, 3)]
    ddfs = [dd.from_pandas(t, npartitions=3, sort=False) for t in tables]  # as load_tables splits them
    assert [len(p) for p in dask_client.compute(ddfs[0].to_delayed(), sync=True)] == [30, 30, 30]
    one = _outcome(lambda: _one_process(*tables))
    assert _outcome(lambda: _on_cluster(dask_client, *tables, npartitions=3)) == one
    if case == "ns-far":  # no resolution holds both: the year 2999 does not parse
        assert one[0]["stamp"][0] == "categorical"
    if case.endswith("-ms"):
        assert one[0]["stamp"][0] == "datetime"
    if isinstance(one, str):
        return
    metrics = {"exact_matches": {}, "dcr": {"n_boot": 20}}
    single = evaluate(*tables, metrics=metrics, seed=4)
    dist = evaluate(*ddfs, metrics=metrics, seed=4, client=dask_client)
    assert single.to_dict()["schema"] == dist.to_dict()["schema"]
    assert _entries(single, metrics) == _entries(dist, metrics)


def test_gathered_sample_is_one_process_sample(dask_client):
    """The strings a cluster gathers as a text column's sample are one process's
    (:func:`~synthguard.data.schema.text_sample` of the whole column): the same values in the
    same order. Every value is unique and missing values are spread unevenly over five partitions
    (``few`` has none in the second), so a sample position shifted by one in any partition, or the
    draw order lost, changes the sample; ``code`` holds more than 2,000 values (the seeded sample),
    ``few`` fewer (every value, in table order)."""
    import dask.dataframe as dd

    from synthguard.data.schema import text_sample
    from synthguard.distributed._tables import _presence, whole_text_samples

    n = 3600
    r = np.random.default_rng(11)
    rows = np.arange(n)
    code = pd.Series([f" v{i:05d}" for i in rows], dtype=object)  # padded: stripped as one process strips
    code[r.random(n) < 0.4 * rows / n] = None  # more missing values further down
    few = pd.Series([f"w{i}" for i in rows], dtype=object)
    few[(r.random(n) < 0.6) | ((rows >= 720) & (rows < 1440))] = None
    frame = pd.DataFrame({"code": code, "few": few})
    ddf = dd.from_pandas(frame, npartitions=5, sort=False)
    parts = dask_client.compute(ddf.to_delayed(), sync=True)
    assert [len(p) for p in parts] == [720] * 5 and parts[1]["few"].isna().all()
    got = whole_text_samples(dask_client, ddf, ["code", "few"], [_presence(p) for p in parts])
    assert frame["code"].notna().sum() > 2000 > frame["few"].notna().sum()
    for column in ("code", "few"):
        want = text_sample(frame[column].dropna())
        assert len(want) == min(2000, frame[column].notna().sum())
        pd.testing.assert_series_equal(got[column], want, check_names=False)
