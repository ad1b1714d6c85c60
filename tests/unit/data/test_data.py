"""Data model: loading, schema inference and metadata, type reconciliation, fingerprints."""

from __future__ import annotations

import json
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from synthguard.data import infer_schema, prepare_tables
from synthguard.data.schema import infer_sdtype, numeric_view
from synthguard.errors import InputError


def test_infer_sdtypes():
    n = 50
    df = pd.DataFrame({
        "age": np.arange(n) % 90,
        "score": np.linspace(0, 1, n),
        "flag": [True, False] * (n // 2),
        "flag_txt": ["true", "false"] * (n // 2),
        "city": ["Paris", "Rome"] * (n // 2),
        "when": [f"2020-01-{i % 28 + 1:02d}" for i in range(n)],
        "note": [f"the patient number {i} was seen by the doctor on monday" for i in range(n)],
        "user_id": [f"u{i:04d}" for i in range(n)],
    })
    got = {c: infer_sdtype(df[c])[0] for c in df.columns}
    assert got == {"age": "numerical", "score": "numerical", "flag": "boolean", "flag_txt": "boolean",
                   "city": "categorical", "when": "datetime", "note": "text", "user_id": "id"}


def test_metadata_overrides_and_inferred_listed():
    df = pd.DataFrame({"zip": [1001, 1002, 1003], "age": [30, 40, 50]})
    schema = infer_schema(df, {"columns": {"zip": {"sdtype": "categorical", "pii": True}},
                               "quasi_identifiers": ["zip", "age"]})
    assert schema.sdtype("zip") == "categorical" and schema.columns["zip"].pii
    assert schema.sdtype("age") == "numerical"
    assert set(schema.inferred()) == {"age"}
    assert schema.quasi_identifiers == ("zip", "age")


def test_sdtype_aliases_accepted():
    df = pd.DataFrame({"a": [1.0, 2.0]})
    assert infer_schema(df, {"columns": {"a": {"sdtype": "numeric"}}}).sdtype("a") == "numerical"


def test_prepare_reconciles_int_and_string_categories():
    ori = pd.DataFrame({"code": [1, 2, 3], "x": [1.0, 2.0, 3.0]})
    syn = pd.DataFrame({"code": ["1", "2", "4"], "x": [1.0, 2.5, 3.0]})
    t = prepare_tables(ori, syn, metadata={"columns": {"code": {"sdtype": "categorical"}}})
    assert list(t.original["code"]) == ["1", "2", "3"]
    assert list(t.synthetic["code"]) == ["1", "2", "4"]


def test_numeric_strings_coerced_and_columns_reordered():
    ori = pd.DataFrame({"a": [1.5, 2.5], "b": ["x", "y"]})
    syn = pd.DataFrame({"b": ["x", "z"], "a": ["1.5", "3"]})
    t = prepare_tables(ori, syn)
    assert list(t.synthetic.columns) == ["a", "b"]
    assert t.synthetic["a"].dtype == np.float64
    assert t.synthetic["a"].tolist() == [1.5, 3.0]


def test_datetime_parsing_and_numeric_view():
    ori = pd.DataFrame({"d": ["2020-01-01", "2020-01-03", None]})
    t = prepare_tables(ori, ori, metadata={"columns": {"d": {"sdtype": "datetime"}}})
    v = numeric_view(t.original["d"])
    assert v[1] - v[0] == pytest.approx(2.0)
    assert np.isnan(v[2])


def test_files_csv_parquet_and_fingerprints(tmp_path):
    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    csv = tmp_path / "o.csv"
    df.to_csv(csv, index=False)
    pq = tmp_path / "s.parquet"
    try:
        df.to_parquet(pq)
    except ImportError:
        pytest.skip("pyarrow not installed")
    t = prepare_tables(csv, pq)
    assert t.fingerprints["original"]["rows"] == 3
    assert t.fingerprints["original"]["columns"] == 2
    assert len(t.fingerprints["original"]["sha256"]) == 64
    assert t.labels["original"] == str(csv)
    t2 = prepare_tables(df, df)
    assert t2.fingerprints["original"]["sha256"] == t2.fingerprints["synthetic"]["sha256"]
    t3 = prepare_tables(df, df.iloc[::-1])
    assert t3.fingerprints["original"]["sha256"] != t3.fingerprints["synthetic"]["sha256"]


def test_metadata_from_yaml_and_json_files(tmp_path):
    df = pd.DataFrame({"a": [1, 2, 3]})
    j = tmp_path / "m.json"
    j.write_text(json.dumps({"columns": {"a": {"sdtype": "categorical"}}}))
    y = tmp_path / "m.yaml"
    y.write_text("columns:\n  a:\n    sdtype: categorical\n")
    assert prepare_tables(df, df, metadata=j).schema.sdtype("a") == "categorical"
    assert prepare_tables(df, df, metadata=y).schema.sdtype("a") == "categorical"


def test_metadata_must_be_object(tmp_path):
    j = tmp_path / "m.json"
    j.write_text("[1, 2]")
    with pytest.raises(InputError, match="m.json"):
        prepare_tables(pd.DataFrame({"a": [1]}), pd.DataFrame({"a": [1]}), metadata=j)


def test_control_checked_too(demo_data):
    with pytest.raises(InputError, match="control DataFrame is missing column"):
        prepare_tables(demo_data["original"], demo_data["safe"], demo_data["control"].drop(columns="sex"))


def test_boolean_strings_become_booleans():
    ori = pd.DataFrame({"f": ["True", "False", "True"]})
    syn = pd.DataFrame({"f": [True, False, False]})
    t = prepare_tables(ori, syn)
    assert t.schema.sdtype("f") == "boolean"
    assert t.original["f"].tolist() == [True, False, True]
    assert t.synthetic["f"].tolist() == [True, False, False]


@pytest.mark.parametrize("parts", [
    [[Decimal("1"), Decimal("2.5")], ["a", "b"]],
    [[Decimal("1")], [3, 4.5]],
    [["x"], [True, False]],
])
def test_a_label_sample_reads_the_kinds_its_parts_read(parts):
    """Whether labels mix numbers and strings does not depend on how the sample is cut: read
    whole (one process) or part by part (a cluster's partitions), the same kinds; a Decimal is
    a number either way."""
    from synthguard.data.tables import label_kind_of_each, label_kinds

    whole = pd.Series([v for p in parts for v in p], dtype=object)
    apart = set().union(*(label_kinds(pd.Series(p, dtype=object)) for p in parts))
    assert label_kinds(whole) == apart
    assert set(label_kind_of_each(whole)) == apart


def test_control_overlap_chance_is_the_share_of_training_rows_repeated_in_the_training_data():
    from synthguard.data.quirks import check_control_hashes

    # 100 training rows: 0-39 once, 40-69 twice each (60 rows repeated: chance 0.6)
    h_o = np.concatenate([np.arange(40), np.repeat(np.arange(40, 70), 2)]).astype(np.uint64)
    rng = np.random.default_rng(0)
    h_o = rng.permutation(h_o)
    fresh = np.arange(1000, 1100, dtype=np.uint64)
    # 280 of 380 control rows (73.7 %) in the training data: far above chance
    h_c = np.concatenate([np.tile(np.arange(70, dtype=np.uint64), 4), fresh[:120]])
    (warn,) = check_control_hashes(h_o, h_c, None, {})
    assert "against 60.0% expected by chance" in warn and "(280 of 380)" in warn
    # 62 % shared: within 2 points of chance, no warning
    h_c = np.concatenate([np.tile(np.arange(62, dtype=np.uint64), 4), fresh[:100], fresh[:52]])
    assert check_control_hashes(h_o, h_c, None, {}) == []
