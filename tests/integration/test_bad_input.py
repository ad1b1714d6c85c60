"""Every kind of bad input stops with one line naming the file, column and fix; the CLI exits 2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import synthguard
from synthguard.cli import main
from synthguard.core.results import MetricResult
from synthguard.errors import ConfigError, InputError


def _noop(ctx):
    return MetricResult("_test_noop", "test", float(len(ctx.tables.synthetic)), "lower is safer")


@pytest.fixture
def files(tmp_path, demo_data):
    paths = {}
    for key in ("original", "safe", "control"):
        p = tmp_path / f"{key}.csv"
        demo_data[key].to_csv(p, index=False)
        paths[key] = p
    return paths


def run(args):
    return CliRunner().invoke(main, args)


def assert_cli_error(res, *needles):
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert "Traceback" not in res.output
    lines = [ln for ln in res.output.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, res.output
    for n in needles:
        assert n in res.output, (n, res.output)


def test_missing_file(files, tmp_path):
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(tmp_path / "nope.csv"), "--metrics", "_test_noop"])
    assert_cli_error(res, "nope.csv", "does not exist")


def test_unknown_extension(files, tmp_path):
    bad = tmp_path / "data.xlsx"
    bad.write_text("a,b\n1,2\n")
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(bad), "--metrics", "_test_noop"])
    assert_cli_error(res, "data.xlsx", "unknown file type", ".csv")


def test_wrong_file_binary_content(files, tmp_path):
    bad = tmp_path / "image.csv"
    bad.write_bytes(bytes(range(256)) * 20)
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(bad), "--metrics", "_test_noop"])
    assert res.exit_code == 2
    assert "image.csv" in res.output and "Traceback" not in res.output


def test_empty_file(files, tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(empty), "--metrics", "_test_noop"])
    assert_cli_error(res, "empty.csv", "empty")


def test_header_only_table(files, tmp_path, demo_data):
    p = tmp_path / "header_only.csv"
    demo_data["original"].iloc[:0].to_csv(p, index=False)
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(p), "--metrics", "_test_noop"])
    assert_cli_error(res, "header_only.csv", "no rows")


def test_missing_column(files, tmp_path, demo_data):
    p = tmp_path / "syn_missing.csv"
    demo_data["safe"].drop(columns=["income"]).to_csv(p, index=False)
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(p), "--metrics", "_test_noop"])
    assert_cli_error(res, "syn_missing.csv", "'income'", "missing column")


def test_extra_column(files, tmp_path, demo_data):
    p = tmp_path / "syn_extra.csv"
    demo_data["safe"].assign(extra=1).to_csv(p, index=False)
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(p), "--metrics", "_test_noop"])
    assert_cli_error(res, "syn_extra.csv", "'extra'", "drop them")


def test_all_nan_column(files, tmp_path, demo_data):
    p = tmp_path / "syn_nan.csv"
    demo_data["safe"].assign(bmi=np.nan).to_csv(p, index=False)
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(p), "--metrics", "_test_noop"])
    assert_cli_error(res, "syn_nan.csv", "'bmi'", "all values missing")


def test_mismatched_dtype(files, tmp_path, demo_data):
    p = tmp_path / "syn_dtype.csv"
    df = demo_data["safe"].copy()
    df["income"] = df["income"].astype(object)
    df.loc[3, "income"] = "lots"
    df.to_csv(p, index=False)
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(p), "--metrics", "_test_noop"])
    assert_cli_error(res, "syn_dtype.csv", "'income'", "non-numeric", "'lots'")


def test_bad_datetime(files, tmp_path, demo_data):
    p = tmp_path / "syn_date.csv"
    df = demo_data["safe"].copy()
    df["admission_date"] = df["admission_date"].astype(str)
    df.loc[0, "admission_date"] = "not a date"
    df.to_csv(p, index=False)
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"columns": {"admission_date": {"sdtype": "datetime"}}}))
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(p), "-m", str(meta), "--metrics", "_test_noop"])
    assert_cli_error(res, "syn_date.csv", "'admission_date'", "not a date")


def test_unknown_metric(files):
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "--metrics", "exact_matchs"])
    assert_cli_error(res, "unknown metric 'exact_matchs'", "synthguard metrics")


def test_unknown_parameter_in_config(files, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("metrics:\n  _test_noop:\n    thresold: 0.1\n")
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "--config", str(cfg)])
    assert_cli_error(res, "_test_noop", "no parameter 'thresold'")


def test_unknown_config_key(files, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("metricz: [_test_noop]\n")
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "--config", str(cfg)])
    assert_cli_error(res, "cfg.yaml", "metricz")


def test_malformed_config(files, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("metrics: [_test_noop\n")
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "--config", str(cfg)])
    assert_cli_error(res, "cfg.yaml", "not valid")


def test_metadata_names_unknown_column(files, tmp_path):
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"columns": {"salary": {"sdtype": "numerical"}}}))
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "-m", str(meta),
               "--metrics", "_test_noop"])
    assert_cli_error(res, "meta.json", "'salary'")


def test_metadata_unknown_sdtype(files, tmp_path):
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"columns": {"age": {"sdtype": "number-ish"}}}))
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "-m", str(meta),
               "--metrics", "_test_noop"])
    assert_cli_error(res, "meta.json", "'age'", "unknown sdtype")


def test_metadata_invalid_json(files, tmp_path):
    meta = tmp_path / "meta.json"
    meta.write_text("{not json")
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "-m", str(meta),
               "--metrics", "_test_noop"])
    assert_cli_error(res, "meta.json", "not valid")


def test_quasi_identifier_not_a_column(files, tmp_path):
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"quasi_identifiers": ["age", "postcode"]}))
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "-m", str(meta),
               "--metrics", "_test_noop"])
    assert_cli_error(res, "quasi_identifiers", "'postcode'")


def test_duplicate_column_names(files, tmp_path):
    p = tmp_path / "dup.csv"
    p.write_text("a,a\n1,2\n")
    with pytest.raises(InputError, match="appears more than once"):
        synthguard.evaluate(pd.DataFrame({"a": [1]}), pd.DataFrame([[1, 2]], columns=["a", "a"]))


def test_api_raises_typed_errors(demo_data):
    with pytest.raises(InputError):
        synthguard.evaluate(demo_data["original"], demo_data["safe"].iloc[:0])
    with pytest.raises(ConfigError):
        synthguard.evaluate(demo_data["original"], demo_data["safe"], metrics=["nope"])
    with pytest.raises(ConfigError):
        synthguard.evaluate(demo_data["original"], demo_data["safe"], seed="x")
    with pytest.raises(InputError, match="DataFrame or a file path"):
        synthguard.evaluate(demo_data["original"], [1, 2, 3])


def test_caller_frames_are_not_mutated(demo_data):
    ori = demo_data["original"].copy()
    syn = demo_data["safe"].copy()
    ori_before, syn_before = ori.copy(deep=True), syn.copy(deep=True)
    synthguard.evaluate(ori, syn, metrics=["_test_noop"])
    pd.testing.assert_frame_equal(ori, ori_before)
    pd.testing.assert_frame_equal(syn, syn_before)


def test_metric_needing_control_is_skipped_with_reason():
    from synthguard.core.results import MetricResult
    from synthguard.registry import Param, register

    @register("_test_needs_control", family="test", direction="lower is safer",
              needs=("original", "synthetic", "control"), params=[Param("x", 1, kind=int)], default=False)
    def _m(ctx, *, x):  # pragma: no cover - must not run
        return MetricResult("_test_needs_control", "test", 0.0, "lower is safer")

    rep = synthguard.evaluate(pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [1, 3]}),
                              metrics=["_test_needs_control"])
    entry = rep["_test_needs_control"]
    assert entry["status"] == "skipped"
    assert "control" in entry["reason"]
    assert entry["result"] is None


def test_failing_metric_reported_as_error_not_dropped():
    from synthguard.registry import register

    @register("_test_broken", family="test", direction="lower is safer", default=False)
    def _m(ctx):
        raise ZeroDivisionError("boom")

    rep = synthguard.evaluate(pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [1, 3]}),
                              metrics=["_test_broken"])
    assert rep["_test_broken"]["status"] == "error"
    assert "boom" in rep["_test_broken"]["reason"]


def test_bad_param_value_type():
    from synthguard.core.results import MetricResult
    from synthguard.registry import Param, register

    @register("_test_typed", family="test", direction="lower is safer", default=False,
              params=[Param("k", 1, kind=int, check=lambda v: None if v >= 1 else "must be >= 1")])
    def _m(ctx, *, k):
        return MetricResult("_test_typed", "test", float(k), "lower is safer")

    a, b = pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [1, 3]})
    with pytest.raises(ConfigError, match="'k' must be int"):
        synthguard.evaluate(a, b, metrics={"_test_typed": {"k": "three"}})
    with pytest.raises(ConfigError, match="must be >= 1"):
        synthguard.evaluate(a, b, metrics={"_test_typed": {"k": 0}})
    assert synthguard.evaluate(a, b, metrics={"_test_typed": {"k": 3}})["_test_typed"]["result"]["value"] == 3
