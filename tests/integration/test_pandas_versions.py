"""The same inputs give the same tables (hence the same numbers) on pandas 2.0 .. 3.x.

Each case is a representation that differs between pandas versions for the same data: pandas 3
parses date strings to microseconds (pandas 2: nanoseconds), pandas 2.0 hashes nullable booleans
differently from later versions (the canonical row order is a content hash), pandas 2's default CSV
float parser can be one ulp off, and pandas 3 infers its ``str`` dtype for text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthguard.compat.petsard.evaluator import Evaluator
from synthguard.data.loading import load_table
from synthguard.data.tables import prepare_tables


def _dates(unit: str) -> pd.DataFrame:
    r = np.random.default_rng(0)
    days = pd.to_datetime("2020-01-01") + pd.to_timedelta(r.integers(0, 900, 60), unit="D")
    return pd.DataFrame({"when": pd.Series(days).astype(f"datetime64[{unit}]"),
                         "x": r.integers(0, 4, 60).astype(float)})


def test_datetime_resolution_does_not_change_tables_or_row_order():
    ns = prepare_tables(_dates("ns"), _dates("ns").iloc[::-1]).in_canonical_order()
    us = prepare_tables(_dates("us"), _dates("us").iloc[::-1]).in_canonical_order()
    assert str(us.original["when"].dtype) == "datetime64[ns]"
    pd.testing.assert_frame_equal(ns.original, us.original)
    assert np.array_equal(ns.row_numbers["original"], us.row_numbers["original"])


def test_nullable_boolean_rows_order_like_plain_objects():
    flags = [True, False, None, True, False, None, True, True]
    meta = {"columns": {"flag": {"sdtype": "boolean"}, "k": {"sdtype": "numerical"}}}
    frame = pd.DataFrame({"flag": pd.array(flags, dtype="boolean"), "k": np.arange(8.0)})
    plain = pd.DataFrame({"flag": pd.Series(flags, dtype=object), "k": np.arange(8.0)})
    a = prepare_tables(frame, frame, metadata=meta).in_canonical_order()
    b = prepare_tables(plain, plain, metadata=meta).in_canonical_order()
    assert a.original["flag"].dtype == object
    assert a.original["flag"].tolist() == b.original["flag"].tolist()
    assert np.array_equal(a.row_numbers["original"], b.row_numbers["original"])


def test_csv_floats_are_correctly_rounded(tmp_path):
    # pandas 2's default parser reads 323 of anes96's 944 logpopul values 1 ulp off, this one included
    text = ["-2.3025850929940455", "5.247550249494384", "0.1", "1e-300"]
    (tmp_path / "t.csv").write_text("v\n" + "\n".join(text) + "\n")
    frame, _ = load_table(tmp_path / "t.csv", "original")
    assert frame["v"].tolist() == [float(t) for t in text]


def test_petsard_frames_keep_object_text_columns():
    r = np.random.default_rng(1)
    df = pd.DataFrame({"a": r.choice(["x", "y"], 80), "b": r.normal(size=80)})
    ev = Evaluator("sdmetrics-qualityreport")
    ev.create()
    out = ev.eval({"ori": df, "syn": df.sample(frac=1.0, random_state=2).reset_index(drop=True)})
    assert [str(t) for t in out["columnwise"].dtypes] == ["object", "object", "float64"]
    assert out["columnwise"].index.dtype == object
    assert str(out["pairwise"]["Metric"].dtype) == "object"
    assert out["global"].index.dtype == object
