"""Same seed -> same JSON bytes, timing aside, whatever the order of the input rows (issue 13).

What may differ after shuffling, and is normalised here: the ``seconds`` timings, the input
fingerprints and labels (``inputs``: a shuffled file has other bytes), and row NUMBERS in
``records`` (they point at input rows, which moved; the listed rows are the same content).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

import synthguard


def _is_row_number(key: str) -> bool:
    # "original_row", "nearest_training_row", ...; lists of them: "reference_rows", ...
    return key == "row" or key.endswith("_row") or key.endswith("_rows")


def _normalise(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _normalise(v) for k, v in obj.items() if not _is_row_number(k) and k != "seconds"}
    if isinstance(obj, list):
        items = [_normalise(v) for v in obj]
        if items and all(isinstance(v, dict) for v in items):
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
        return items
    return obj


def _json(rep) -> dict:
    d = rep.to_dict()
    d.pop("inputs", None)
    return _normalise(d)


def _shuffle(df: pd.DataFrame, seed: int) -> pd.DataFrame:
    return df.sample(frac=1, random_state=seed).reset_index(drop=True)


@pytest.fixture(scope="module")
def small(demo_data):
    return {k: v.iloc[:150].reset_index(drop=True) for k, v in demo_data.items()}


@pytest.mark.parametrize("preset", ["default", "privacy"])
def test_row_order_does_not_change_the_json(small, demo_metadata, preset):
    kw = {} if preset == "default" else {"preset": preset}
    args = (small["original"], small["leaky"], small["control"])
    a = synthguard.evaluate(*args, metadata=demo_metadata, seed=7, **kw)
    b = synthguard.evaluate(*(_shuffle(x, i) for i, x in enumerate(args)), metadata=demo_metadata, seed=7, **kw)
    ja, jb = _json(a), _json(b)
    diff = [m for m in ja["metrics"] if json.dumps(ja["metrics"][m]) != json.dumps(jb["metrics"][m])]
    assert not diff, diff
    assert json.dumps(ja, sort_keys=True) == json.dumps(jb, sort_keys=True)


def test_distinguishability_is_bit_identical_with_parallel_forest(small, demo_metadata):
    args = (small["original"], small["leaky"])
    runs = [synthguard.evaluate(*args, metadata=demo_metadata, seed=3,
                                metrics={"distinguishability": {"n_jobs": -1}})["distinguishability"]
            for _ in range(3)]
    serial = synthguard.evaluate(*args, metadata=demo_metadata, seed=3,
                                 metrics={"distinguishability": {"n_jobs": 1}})["distinguishability"]
    vals = {json.dumps(r["result"]) for r in runs + [serial]}
    assert len(vals) == 1


def test_numpy_integer_seed_and_negative_seed(small):
    from synthguard.errors import ConfigError

    a = synthguard.evaluate(small["original"], small["leaky"], metrics=["dcr"], seed=np.int64(3))
    b = synthguard.evaluate(small["original"], small["leaky"], metrics=["dcr"], seed=3)
    assert a.to_dict()["seed"] == 3 and _json(a) == _json(b)
    with pytest.raises(ConfigError, match="non-negative"):
        synthguard.evaluate(small["original"], small["leaky"], metrics=["dcr"], seed=-1)
    with pytest.raises(ConfigError, match="non-negative"):
        synthguard.evaluate(small["original"], small["leaky"], metrics=["dcr"], seed=1.5)


def _without_timing(rep) -> str:
    """The JSON report's text with the timings and the input fingerprints (a frame's hash covers its
    column order) taken out; everything else byte for byte."""
    d = json.loads(rep.to_json())

    def drop(obj):
        if isinstance(obj, dict):
            return {k: drop(v) for k, v in obj.items() if k != "seconds"}
        if isinstance(obj, list):
            return [drop(v) for v in obj]
        return obj

    for entry in d.get("inputs", {}).values():
        entry.pop("sha256", None)
    return json.dumps(drop(d), indent=2)


def test_column_order_does_not_change_the_json(small, demo_metadata):
    """Issue 22: the same tables with their columns reversed gave other anonymeter, singling-out,
    distinguishability and linkability numbers (inference 0.1725 vs 0.1299). Columns now run in a
    canonical order (sorted by name): the JSON is byte-identical, timings aside; with the rows also
    shuffled it is the same apart from row numbers (as for row order alone)."""
    args = (small["original"], small["leaky"], small["control"])
    rev = tuple(x[x.columns[::-1]] for x in args)
    a = synthguard.evaluate(*args, metadata=demo_metadata, seed=7, preset="privacy")
    b = synthguard.evaluate(*rev, metadata=demo_metadata, seed=7, preset="privacy")
    assert _without_timing(a) == _without_timing(b)
    c = synthguard.evaluate(*(_shuffle(x, i) for i, x in enumerate(rev)), metadata=demo_metadata, seed=7,
                            preset="privacy")
    assert json.dumps(_json(a), sort_keys=True) == json.dumps(_json(c), sort_keys=True)
    for x, y in zip(args, rev, strict=True):  # the caller's frames are untouched
        assert list(y.columns) == list(x.columns)[::-1]


def test_column_order_does_not_change_the_json_from_files(small, demo_metadata, tmp_path):
    """The same through CSV and Parquet files (the typing decision sees the columns in file order)."""
    pytest.importorskip("pyarrow")
    out = {}
    for tag, order in (("fwd", 1), ("rev", -1)):
        paths = []
        for i, (role, df) in enumerate(zip(("original", "leaky", "control"),
                                            (small["original"], small["leaky"], small["control"]), strict=True)):
            df = df[df.columns[::order]]
            p = tmp_path / f"{tag}_{role}.{'parquet' if i == 0 else 'csv'}"
            df.to_parquet(p, index=False) if i == 0 else df.to_csv(p, index=False)
            paths.append(p)
        rep = synthguard.evaluate(*paths, metadata=demo_metadata, seed=7, preset="privacy")
        d = json.loads(_without_timing(rep))
        d.pop("inputs")
        out[tag] = json.dumps(d)
    assert out["fwd"] == out["rev"]
