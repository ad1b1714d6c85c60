"""A cluster run's ``inferred_metadata`` is one process's for the same files (issue #31): every
note on how a column's values were normalised (surrounding whitespace stripped, boolean spellings,
dates read day- or month-first, epoch numbers, NFC text, decimals, float32 numbers), in one
process's wording and order, each once per table even when only one partition of the table holds
the normalised values. The cluster used to report the schema's sdtypes alone (no ``normalised``
notes), and its typed partitions were not NFC-normalised nor read at float32 precision, so copies
written in another Unicode form or at another float precision were no copies on a cluster."""

from __future__ import annotations

import decimal
import json
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate

from ...helpers import without_seconds

dd = pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")

#: the epochs are declared datetime (undeclared they are numbers)
META = {"columns": {"ts": {"sdtype": "datetime"}}}
METRICS = {"exact_matches": {}, "dcr": {"n_boot": 20}}
#: the report's own lines of a run (how and where it ran), not of the data
RUN_LINES = {"engine", "inputs", "distributed"}


def _table(n: int, seed: int, *, typed: bool) -> pd.DataFrame:
    """Padded cities, yes/no, month-first dates, epoch milliseconds, accented names and, stored
    typed (Parquet), a float column; from CSV a weight with decimals (no integer column: see
    :func:`test_csv_integers_and_codes_typed_as_one_process`)."""
    r = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "city": r.choice(["Zurich", "Geneva", "Bern"], n).astype(object),
        "smoker": r.choice(["yes", "no"], n).astype(object),
        "visit": [f"{1 + i % 12:02d}/{1 + i % 28:02d}/2021" for i in r.integers(0, 400, n)],
        "name": r.choice(["Zoé", "Noël", "Ana", "Jürg"], n).astype(object),
        "ts": r.integers(1_600_000_000_000, 1_650_000_000_000, n),
        "weight": (r.normal(70, 9, n) * 10).round() / 10 + 0.05,
    })
    if typed:
        frame["ratio"] = r.choice([0.1, 0.2, 0.3, 0.7], n)
    return frame


def _inputs(typed: bool) -> dict[str, pd.DataFrame]:
    """The three tables, each normalisation in some of them or some of their rows only."""
    orig, syn, ctl = _table(90, 1, typed=typed), _table(90, 2, typed=typed), _table(60, 3, typed=typed)
    syn.iloc[:25] = orig.iloc[:25].to_numpy()  # copies, found only when the columns are read alike
    # the release's names in NFD (accents as two code points): the same copies once NFC-normalised
    syn["name"] = [unicodedata.normalize("NFD", v) for v in syn["name"]]
    # padded cities in the original's first rows and in the control's second file only
    orig.loc[orig.index % 7 == 0, "city"] = " " + orig["city"]
    ctl.loc[25:34, "city"] = ctl.loc[25:34, "city"] + "  "
    # Y/N in the release's last file only: one note for the release, with every spelling
    syn.loc[70:, "smoker"] = np.where(syn.loc[70:, "smoker"] == "yes", "Y", "N")
    if typed:
        # the original's ratio as float32 (the copies' float64 values compared at float32 precision)
        orig["ratio"] = orig["ratio"].astype(np.float32)
        # the control's weight as SQL DECIMAL values
        ctl["weight"] = [decimal.Decimal(f"{v:.2f}") for v in ctl["weight"]]
    return {"original": orig, "synthetic": syn, "control": ctl}


def _dumps(value) -> str:
    return json.dumps(without_seconds(value), sort_keys=True, default=str)


def _same_report(one: dict, many: dict, metrics: dict = METRICS) -> None:
    """The whole inferred metadata equal (order of columns and notes too), and every other part of
    the reports but the run's own lines."""
    assert json.dumps(one["inferred_metadata"]) == json.dumps(many["inferred_metadata"])
    assert set(one) - RUN_LINES == set(many) - RUN_LINES
    for key in sorted(set(one) - RUN_LINES):
        assert _dumps(one[key]) == _dumps(many[key]), key
    assert {n: e["status"] for n, e in many["metrics"].items()} == {n: "ok" for n in metrics}


def _check_notes(inferred: dict, labels: dict[str, str]) -> None:
    """Every kind of note is there, once per table."""
    notes = {c: e.get("normalised", []) for c, e in inferred.items()}
    assert notes["city"] == [f"surrounding whitespace stripped from 13 value(s) in {labels['original']}",
                             f"surrounding whitespace stripped from 10 value(s) in {labels['control']}"]
    assert notes["smoker"] == [f"values no/yes in {labels['original']} read as booleans True/False",
                               f"values n/no/y/yes in {labels['synthetic']} read as booleans True/False",
                               f"values no/yes in {labels['control']} read as booleans True/False"]
    assert notes["name"] == [f"text in {labels['synthetic']} NFC-normalised (accents written as one code "
                             "point)"]
    assert notes["visit"] == [f"dates in {', '.join(labels.values())} read month-first (MM/DD/YYYY)"]
    assert notes["ts"] == ["numeric Unix epochs in unit 'ms' (read from their magnitude)"]


def test_parquet_folders_report_one_processs_normalisation_notes(dask_client, tmp_path):
    """Three Parquet files a table (one process reads the same folders)."""
    paths = {}
    for role, frame in _inputs(typed=True).items():
        folder = tmp_path / role
        folder.mkdir()
        for i, rows in enumerate(np.array_split(np.arange(len(frame)), 3)):
            frame.iloc[rows].to_parquet(folder / f"part.{i}.parquet", index=False)
        paths[role] = str(folder)
    single = evaluate(paths["original"], paths["synthetic"], paths["control"], META, metrics=METRICS,
                      seed=4).to_dict()
    dist = evaluate(paths["original"], paths["synthetic"], paths["control"], META, metrics=METRICS,
                    seed=4, client=dask_client).to_dict()
    assert {r: i["partitions"] for r, i in dist["inputs"].items()} == {r: 3 for r in paths}
    _check_notes(single["inferred_metadata"], paths)
    notes = {c: e.get("normalised") for c, e in single["inferred_metadata"].items()}
    assert notes.get("weight") is None  # Parquet's decimals arrive as numbers (read_source)
    assert notes["ratio"] == [f"float32 values in {paths['original']}: numbers of every table compared at "
                              "float32 precision (shortest decimal form)"]
    _same_report(single, dist)
    # the copies were found: their names and ratios read alike on the cluster too
    assert dist["metrics"]["exact_matches"]["result"]["synthetic_match_rate"]["k"] >= 25


def test_csv_files_read_in_several_partitions_report_one_processs_notes(dask_client, tmp_path, monkeypatch):
    """One CSV file a table, read by the cluster in several blocks (so the labels are the files'
    paths in both runs)."""
    paths = {}
    for role, frame in _inputs(typed=False).items():
        paths[role] = str(Path(tmp_path) / f"{role}.csv")
        frame.to_csv(paths[role], index=False)
    single = evaluate(paths["original"], paths["synthetic"], paths["control"], META, metrics=METRICS,
                      seed=4).to_dict()
    read_csv = dd.read_csv
    monkeypatch.setattr(dd, "read_csv", lambda *a, **k: read_csv(*a, **{**k, "blocksize": 1200}))
    dist = evaluate(paths["original"], paths["synthetic"], paths["control"], META, metrics=METRICS,
                    seed=4, client=dask_client).to_dict()
    assert all(i["partitions"] >= 2 for i in dist["inputs"].values())
    _check_notes(single["inferred_metadata"], paths)
    _same_report(single, dist)


def test_csv_integers_and_codes_typed_as_one_process(dask_client, tmp_path, monkeypatch):
    r = np.random.default_rng(5)
    paths = {}
    for role, seed in (("original", 1), ("synthetic", 2)):
        q = np.random.default_rng(seed)
        frame = pd.DataFrame({"age": q.integers(18, 90, 80), "grade": q.choice(["1", "2", "3"], 80)})
        if role == "synthetic":
            frame["grade"] = frame["grade"] + ".0"
        paths[role] = str(Path(tmp_path) / f"{role}.csv")
        frame.iloc[r.permutation(80)].to_csv(paths[role], index=False)
    meta = {"columns": {"grade": {"sdtype": "categorical"}}}
    single = evaluate(paths["original"], paths["synthetic"], None, meta, metrics=["exact_matches"],
                      seed=1).to_dict()
    read_csv = dd.read_csv
    monkeypatch.setattr(dd, "read_csv", lambda *a, **k: read_csv(*a, **{**k, "blocksize": 400}))
    dist = evaluate(paths["original"], paths["synthetic"], None, meta, metrics=["exact_matches"],
                    seed=1, client=dask_client).to_dict()
    assert json.dumps(single["inferred_metadata"]) == json.dumps(dist["inferred_metadata"])


def _csv_case(case: str, n: int = 80) -> tuple[dict[str, pd.DataFrame], dict | None]:
    """Original and release (no control) of one typing case, and the metadata; each table's
    deciding values in some of its rows only (the cluster reads them in other blocks)."""
    frames = {}
    for role, seed in (("original", 11), ("synthetic", 12)):
        q = np.random.default_rng(seed)
        frames[role] = pd.DataFrame({"age": q.integers(18, 90, n).astype(object),
                                     "city": q.choice(["Bern", "Basel", "Chur"], n).astype(object)})
    orig, syn = frames["original"], frames["synthetic"]
    meta = None
    if case == "leading_zeros":  # codes with a leading zero in the release's last rows only
        for role, f in frames.items():
            f["zip"] = [str(v) for v in np.random.default_rng(len(role)).integers(10000, 99999, n)]
        syn.loc[n - 5:, "zip"] = "01234"
    elif case == "numbers_and_text":  # integer codes, and text among them in the release's last rows
        orig["score"] = [str(v) for v in np.arange(n) % 7]
        syn["score"] = [str(v) for v in np.arange(n) % 5]
        syn.loc[n - 3:, "score"] = "unknown"
    elif case == "booleans":  # True/False in the original, 0/1 in the release
        orig["smoker"] = np.where(np.arange(n) % 3 == 0, "True", "False")
        syn["smoker"] = np.where(np.arange(n) % 4 == 0, "1", "0")
    elif case == "missing_partition":  # an integer column, missing in a whole block of the original
        orig["visits"] = [str(v) for v in np.arange(n) % 9]
        syn["visits"] = [str(v) for v in np.arange(n) % 6]
        orig.loc[n // 4: 3 * n // 4, "visits"] = None
    elif case == "dates":  # ISO dates, undeclared; and epoch seconds declared datetime
        days = pd.Timestamp("2021-01-01") + pd.to_timedelta(np.arange(n) % 50, unit="D")
        orig["visit"] = days.strftime("%Y-%m-%d")
        syn["visit"] = days[::-1].strftime("%Y-%m-%d")
        for f in frames.values():
            f["ts"] = [str(1_600_000_000 + 3_600 * i) for i in range(n)]
        meta = {"columns": {"ts": {"sdtype": "datetime"}}}
    syn.iloc[:10] = orig.iloc[:10].to_numpy()  # copies, found only when the tables are typed alike
    return frames, meta


@pytest.mark.parametrize("case", ["leading_zeros", "numbers_and_text", "booleans", "missing_partition",
                                  "dates"])
def test_csv_typing_decided_from_every_partition_as_one_process(dask_client, tmp_path, monkeypatch, case):
    """Each CSV read by the cluster in several blocks: the typing decision one process takes on
    the whole files (leading zeros kept as text, numbers and text mixed, True/False and 0/1
    spellings, a block without a value, dates) taken from every block's facts: the whole
    ``inferred_metadata`` and every other part of the report equal to one process's."""
    frames, meta = _csv_case(case)
    paths = {}
    for role, frame in frames.items():
        paths[role] = str(Path(tmp_path) / f"{role}.csv")
        frame.to_csv(paths[role], index=False)
    metrics = {"exact_matches": {}}
    single = evaluate(paths["original"], paths["synthetic"], None, meta, metrics=metrics, seed=3).to_dict()
    read_csv = dd.read_csv
    monkeypatch.setattr(dd, "read_csv", lambda *a, **k: read_csv(*a, **{**k, "blocksize": 150}))
    dist = evaluate(paths["original"], paths["synthetic"], None, meta, metrics=metrics, seed=3,
                    client=dask_client).to_dict()
    assert all(i["partitions"] >= 3 for i in dist["inputs"].values())
    if case == "missing_partition":  # some block of the original holds no value of the column
        raw = dd.read_csv(paths["original"], dtype=str)
        assert any(raw.partitions[j]["visits"].isna().all().compute() for j in range(raw.npartitions))
    inferred = single["inferred_metadata"]
    expected = {"leading_zeros": ("zip", "categorical", "leading zeros"),
                "numbers_and_text": ("score", "categorical", "non-numeric value(s)"),
                "booleans": ("smoker", "boolean", ""),
                "missing_partition": ("visits", "numerical", "(float64)"),
                "dates": ("visit", "datetime", "")}[case]
    col, sdtype, reason = expected
    assert inferred[col]["sdtype"] == sdtype and reason in inferred[col]["reason"]
    assert inferred["age"]["reason"] == "numeric dtype (int64)"
    _same_report(single, dist, metrics)
