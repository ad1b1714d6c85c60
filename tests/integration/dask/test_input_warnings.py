"""A cluster run's report lists one process's input warnings (issue #31, "nothing silent"): the
same ``warnings`` list, in the same order and words, for the same files, each warning's deciding
values in some partitions of a table only; ``[]`` for clean inputs in both. The cluster used to
build its tables without them: its report had no ``warnings`` key at all."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate
from synthguard.errors import InputError

dd = pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")

METRICS = {"exact_matches": {}}
N = 90


def _tables(seed: int = 0) -> dict[str, pd.DataFrame]:
    """Original, release and control: clean (no warning in one process)."""
    out = {}
    for k, role in enumerate(("original", "synthetic", "control")):
        r = np.random.default_rng(seed + k)
        n = N if role != "control" else 60
        out[role] = pd.DataFrame({
            "age": r.integers(18, 90, n).astype(float),
            "city": r.choice(["Zurich", "Geneva", "Bern"], n).astype(object),
            "race": r.choice(["white", "black", "asian"], n).astype(object),
            "score": r.normal(50, 10, n).round(1),
        })
    return out


def _case(case: str) -> tuple[dict[str, pd.DataFrame], dict | None]:
    """The tables and metadata of one kind of warning, its values in the later rows of a table
    (another partition than the first)."""
    frames, meta = _tables(), None
    orig, syn, ctl = frames["original"], frames["synthetic"], frames["control"]
    if case == "metadata":  # a misspelt key
        meta = {"columns": {"city": {"sdtype": "categorical"}}, "quasi_identifer": ["age", "city"]}
    elif case == "declared_id":  # an id declared on three values
        meta = {"columns": {"race": {"sdtype": "id"}}}
    elif case == "spelling":  # WHITE in the release's last rows, white in the original
        syn.loc[60:, "race"] = syn.loc[60:, "race"].str.upper()
    elif case == "disjoint":  # the control's cities share nothing with the original's
        ctl["city"] = np.where(np.arange(len(ctl)) % 2 == 0, "Lyon", "Nice")
    elif case == "looks_numeric":  # numbers with thousands separators, read as categories
        for f in frames.values():
            f["income"] = [f"{v:,}" for v in np.random.default_rng(len(f)).integers(1000, 1020, len(f))]
    elif case == "near_unique":  # a category with a different value on almost every row
        for f in frames.values():
            f["remark"] = [f"r{i % (len(f) - 3)}" for i in range(len(f))]
    elif case == "infinities":  # inf and a Stata missing-value code in later rows only
        orig.loc[70, "score"] = np.inf
        orig.loc[80, "score"] = -np.inf
        syn.loc[75, "score"] = 8.988e307
        syn.loc[85, "score"] = 9e307
    elif case == "row_numbers":  # each table's row numbers, and a surrogate key unique per table
        for k, f in enumerate(frames.values()):
            f["case_no"] = np.arange(1, len(f) + 1)
            f["key"] = [f"K{k}-{i:04d}" for i in np.random.default_rng(k).permutation(len(f))]
    elif case == "control_overlap":  # 20 of the control's rows are training rows
        ctl.iloc[40:60] = orig.iloc[:20].to_numpy()
    return frames, meta


def _parquet_folders(frames: dict[str, pd.DataFrame], tmp_path: Path) -> dict[str, str]:
    """Three Parquet files a table (one process reads the same folders)."""
    paths = {}
    for role, frame in frames.items():
        folder = tmp_path / role
        folder.mkdir()
        for i, rows in enumerate(np.array_split(np.arange(len(frame)), 3)):
            frame.iloc[rows].to_parquet(folder / f"part.{i}.parquet", index=False)
        paths[role] = str(folder)
    return paths


def _both(paths: dict[str, str], meta, client) -> tuple[dict, dict]:
    args = (paths["original"], paths["synthetic"], paths.get("control"), meta)
    single = evaluate(*args, metrics=METRICS, seed=3).to_dict()
    dist = evaluate(*args, metrics=METRICS, seed=3, client=client).to_dict()
    assert dist["inputs"]["original"]["partitions"] >= 2
    return single, dist


@pytest.mark.parametrize("case", ["metadata", "declared_id", "spelling", "disjoint", "looks_numeric",
                                  "near_unique", "infinities", "row_numbers", "control_overlap"])
def test_parquet_folders_list_one_processs_warnings(dask_client, tmp_path, case):
    frames, meta = _case(case)
    single, dist = _both(_parquet_folders(frames, tmp_path), meta, dask_client)
    assert single["warnings"], case  # the case warns in one process
    assert json.dumps(dist["warnings"]) == json.dumps(single["warnings"])


def test_clean_inputs_list_no_warning_in_both(dask_client, tmp_path):
    single, dist = _both(_parquet_folders(_tables(), tmp_path), None, dask_client)
    assert single["warnings"] == [] and dist["warnings"] == []


def test_every_kind_at_once_in_one_processs_order(dask_client, tmp_path):
    """Every kind of warning in one run: the cluster lists them in one process's order."""
    frames, _ = _case("infinities")
    orig, syn, ctl = frames["original"], frames["synthetic"], frames["control"]
    syn.loc[60:, "city"] = syn.loc[60:, "city"].str.upper()  # spelled two ways
    for k, f in enumerate(frames.values()):
        q = np.random.default_rng(k)
        f["case_no"] = np.arange(1, len(f) + 1)  # row numbers
        f["tag"] = [f"T{k}-{i:04d}" for i in q.permutation(len(f))]  # a surrogate identifier
        f["income"] = [f"{v:,}" for v in q.integers(1000, 1020, len(f))]  # numbers as categories
        f["remark"] = [f"r{i % (len(f) - 3)}" for i in range(len(f))]  # near unique
        f["colour"] = q.choice(["rot", "blau"] if k == 1 else ["red", "blue"], len(f))  # disjoint
    shared = [c for c in orig.columns if c not in ("case_no", "tag")]
    ctl.loc[40:59, shared] = orig.loc[:19, shared].to_numpy()  # the control overlaps the original
    meta = {"columns": {"race": {"sdtype": "id"}}, "quasi_identifer": ["age"]}
    single, dist = _both(_parquet_folders(frames, tmp_path), meta, dask_client)
    kinds = ["unknown key", "numbers the rows", "surrogate identifier", "declares column 'race' an id",
             "looks numeric", "almost every row", "infinite value", "beyond +/-1e300", "writes differently",
             "share nothing", "also occur in the original"]
    assert [next(i for i, k in enumerate(kinds) if k in w) for w in single["warnings"]] == list(range(11))
    assert json.dumps(dist["warnings"]) == json.dumps(single["warnings"])


def test_csv_numbers_mixed_with_text_warned_as_in_one_process(dask_client, tmp_path, monkeypatch):
    """The typing decision's warning (numbers mixed with text, the text in the release's last
    block only), one CSV file a table read by the cluster in several blocks."""
    paths, n = {}, 400
    for role, seed in (("original", 11), ("synthetic", 12)):
        q = np.random.default_rng(seed)
        frame = pd.DataFrame({"age": q.integers(18, 90, n), "code": [str(v) for v in np.arange(n) % 7]})
        if role == "synthetic":
            frame.loc[n - 3:, "code"] = "unknown"
        paths[role] = str(tmp_path / f"{role}.csv")
        frame.to_csv(paths[role], index=False)
    single = evaluate(paths["original"], paths["synthetic"], None, None, metrics=METRICS, seed=1).to_dict()
    read_csv = dd.read_csv
    monkeypatch.setattr(dd, "read_csv", lambda *a, **k: read_csv(*a, **{**k, "blocksize": 600}))
    dist = evaluate(paths["original"], paths["synthetic"], None, None, metrics=METRICS, seed=1,
                    client=dask_client).to_dict()
    assert dist["inputs"]["synthetic"]["partitions"] >= 2
    assert any("non-numeric value(s)" in w for w in single["warnings"])
    assert json.dumps(dist["warnings"]) == json.dumps(single["warnings"])


def test_sampled_run_lists_the_whole_tables_warnings(dask_client, tmp_path):
    """With ``max_records`` the warnings are the whole tables' (one process warns before it
    samples): the cluster's sampled tables carry them."""
    frames, meta = _case("infinities")
    paths = _parquet_folders(frames, tmp_path)
    args = (paths["original"], paths["synthetic"], paths["control"], meta)
    single = evaluate(*args, metrics=METRICS, seed=3, max_records=40).to_dict()
    dist = evaluate(*args, metrics=METRICS, seed=3, max_records=40, client=dask_client).to_dict()
    assert "sample" in dist and len(single["warnings"]) == 2
    assert json.dumps(dist["warnings"]) == json.dumps(single["warnings"])


def test_control_holding_the_original_is_refused_as_in_one_process(dask_client, tmp_path):
    """The control check's error too: a control holding the original's rows stops both runs with
    the same message (the cluster used to run on)."""
    frames = _tables()
    frames["control"] = frames["original"].sample(frac=1.0, random_state=1)
    paths = _parquet_folders(frames, tmp_path)
    args = (paths["original"], paths["synthetic"], paths["control"], None)
    with pytest.raises(InputError) as one:
        evaluate(*args, metrics=METRICS, seed=3)
    with pytest.raises(InputError) as many:
        evaluate(*args, metrics=METRICS, seed=3, client=dask_client)
    assert str(many.value) == str(one.value)
