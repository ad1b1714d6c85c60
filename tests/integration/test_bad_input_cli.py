"""Bad input through the CLI (issue 13): unwritable outputs checked before any metric runs, wrong
delimiters, duplicate CSV headers, seeds, empty metric lists, attack flags, column-name hints, the
progress bar off a terminal. Every error is one line, exit code 2, no traceback."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import synthguard
from synthguard.cli import main
from synthguard.core.results import MetricResult
from synthguard.errors import ConfigError
from synthguard.registry import register, unregister
from tests.console_text import flat

CALLS: list[int] = []


def _counting(ctx):
    CALLS.append(1)
    return MetricResult("_test_counting", "test", float(len(ctx.tables.synthetic)), "lower is safer")


@pytest.fixture(autouse=True, scope="module")
def _counting_metric():
    """The counting metric, registered for this module's tests and removed afterwards (registered
    at import, it joined the registry of every later test module: tests/contract runs every
    registered metric)."""
    register("_test_counting", family="test", direction="lower is safer", default=False,
             description="test-only metric: counts its calls")(_counting)
    yield
    unregister("_test_counting")


@pytest.fixture
def files(tmp_path, demo_data):
    paths = {}
    for key in ("original", "safe", "control"):
        p = tmp_path / f"{key}.csv"
        demo_data[key].iloc[:200].to_csv(p, index=False)
        paths[key] = p
    return paths


from .test_bad_input import assert_cli_error, run  # noqa: E402  (the one CLI error check)

# ------------------------------------------------------------------------------------------ outputs


@pytest.mark.parametrize("option", ["--json", "--html"])
def test_unwritable_output_fails_before_any_metric(files, tmp_path, option):
    CALLS.clear()
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    for bad in (tmp_path / "no" / "such" / "dir" / "r.out", blocker / "r.out"):
        res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "--metrics",
                   "_test_counting", option, str(bad), "--no-progress"])
        assert_cli_error(res, option)
    # a folder: click's own usage error (exit 2, no traceback)
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "--metrics",
               "_test_counting", option, str(tmp_path), "--no-progress"])
    assert res.exit_code == 2 and "is a directory" in res.output and "Traceback" not in res.output
    assert CALLS == []  # nothing ran
    res = run(["compare", "-o", str(files["original"]), "--metrics", "_test_counting", option,
               str(tmp_path / "nope" / "r.out"), str(files["safe"])])
    assert_cli_error(res, option)
    assert CALLS == []


def test_outputs_written_atomically(files, tmp_path, monkeypatch):
    import os

    out = tmp_path / "r.json"
    out.write_text("old")
    calls = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (calls.append((str(a), str(b))), real(a, b)))
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "--metrics",
               "_test_counting", "--json", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert calls and calls[-1][1] == str(out) and calls[-1][0] != str(out)
    assert out.read_text().startswith("{") and not list(tmp_path.glob(".r.json.*"))


# ------------------------------------------------------------------------------------------ CSV shape


@pytest.mark.parametrize("sep,name", [(";", "semi.csv"), ("\t", "tabs.csv"), ("|", "pipes.csv")])
def test_delimiter_is_sniffed(files, tmp_path, demo_data, sep, name):
    p = tmp_path / name
    demo_data["safe"].iloc[:200].to_csv(p, index=False, sep=sep)
    rep = synthguard.evaluate(files["original"], p, metrics=["_test_counting"])
    assert rep.to_dict()["inputs"]["synthetic"]["columns"] == demo_data["safe"].shape[1]
    assert "text" not in {v["sdtype"] for v in rep.to_dict()["inferred_metadata"].values()}


def test_single_column_with_separator_in_header_gets_a_hint(files, tmp_path):
    p = tmp_path / "odd.csv"
    p.write_text("age;sex\n1;F\n2\n3;M;x\n")  # inconsistent: not sniffed, read as one column
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(p), "--metrics", "_test_counting"])
    assert_cli_error(res, "odd.csv", "one column", "';'")


def test_duplicate_csv_header_is_the_dataframe_error(files, tmp_path, demo_data):
    p = tmp_path / "dup.csv"
    df = demo_data["safe"].iloc[:50]
    p.write_text(",".join([*df.columns, "age"]) + "\n"
                 + "\n".join(",".join(map(str, [*r, 1])) for r in df.itertuples(index=False)) + "\n")
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(p), "--metrics", "_test_counting"])
    assert_cli_error(res, "dup.csv", "column 'age' appears more than once", "rename or drop")
    frame = df.copy()
    frame.columns = [*df.columns[:-1], "age"]
    with pytest.raises(Exception, match="column 'age' appears more than once: rename or drop"):
        synthguard.evaluate(df, frame, metrics=["_test_counting"])


def test_column_names_differing_in_case_get_a_hint(files, tmp_path, demo_data):
    p = tmp_path / "cased.csv"
    demo_data["safe"].iloc[:50].rename(columns={"sex": "Sex", "zip": " zip"}).to_csv(p, index=False)
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(p), "--metrics", "_test_counting"])
    assert_cli_error(res, "missing column", "differ only in case or surrounding spaces", "'sex' vs 'Sex'")


def test_numbers_read_as_categories_are_printed(files, tmp_path, demo_data):
    o, s = tmp_path / "o.csv", tmp_path / "s.csv"
    for df, p in ((demo_data["original"], o), (demo_data["safe"], s)):
        df.iloc[:200].assign(income=df["income"].iloc[:200].map(lambda v: f"{v:,.0f}")).to_csv(p, index=False)
    res = run(["evaluate", "-o", str(o), "-s", str(s), "--metrics", "_test_counting", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "warning: column 'income' looks numeric" in flat(res.output)


# ------------------------------------------------------------------------------------------ options


@pytest.mark.parametrize("seed", ["-1", "-5"])
def test_negative_seed_is_refused_up_front(files, seed):
    CALLS.clear()
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "--metrics",
               "_test_counting", "--seed", seed])
    assert_cli_error(res, "seed", "non-negative")
    assert CALLS == []


def test_negative_seed_in_config_and_attack(files, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("seed: -2\n")
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "--config", str(cfg)])
    assert_cli_error(res, "seed", "non-negative")
    res = run(["attack", "-d", str(files["original"]), "--seed", "-1"])
    assert_cli_error(res, "--seed", "non-negative")


@pytest.mark.parametrize("name", ["dossier.pdf", "dossier.docx"])
def test_a_dossier_named_as_another_format_is_refused_up_front(files, tmp_path, name):
    """The dossier is Markdown or HTML: a name promising another format (a PDF) would hold
    Markdown under that name; refused before any metric runs."""
    CALLS.clear()
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "--metrics",
               "_test_counting", "--dossier", str(tmp_path / name)])
    assert_cli_error(res, "--dossier", name, ".md or .html")
    assert CALLS == [] and not (tmp_path / name).exists()


@pytest.mark.parametrize("value", [",", "", " , "])
def test_empty_metric_list_is_an_error(files, value):
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]), "--metrics", value])
    assert_cli_error(res, "no metric named")


def test_attack_errors_name_the_flags(files):
    res = run(["attack", "-d", str(files["original"]), "--train-size", "100000", "--shadow", "2",
               "--test", "2", "--no-progress"])
    assert_cli_error(res, "--train-size")
    assert "num_training_records" not in res.output
    res = run(["attack", "-d", str(files["original"]), "--train-size", "0", "--no-progress"])
    assert_cli_error(res, "--train-size")


def test_metadata_of_the_wrong_type_is_a_config_error(demo_data):
    with pytest.raises(ConfigError, match="metadata must be a mapping"):
        synthguard.evaluate(demo_data["original"], demo_data["safe"], metadata=["age"],
                            metrics=["_test_counting"])


def test_numpy_seed_accepted(demo_data):
    rep = synthguard.evaluate(demo_data["original"].iloc[:50], demo_data["safe"].iloc[:50],
                              metrics=["_test_counting"], seed=np.int64(3))
    assert rep.to_dict()["seed"] == 3


def test_no_progress_bar_off_a_terminal(files):
    """CliRunner's stderr is not a TTY: no carriage-return bar updates in the output."""
    res = CliRunner().invoke(main, ["evaluate", "-o", str(files["original"]), "-s", str(files["safe"]),
                                    "--metrics", "_test_counting,exact_matches"])
    assert res.exit_code == 0, res.output
    assert "\r" not in res.output and "synthguard:" not in res.output


def test_inf_on_the_cli_is_one_warning_and_exit_0(files, tmp_path, demo_data):
    p = tmp_path / "inf.csv"
    df = demo_data["safe"].iloc[:200].copy()
    df.loc[[1, 2], "income"] = np.inf
    df.to_csv(p, index=False)
    assert "inf" in p.read_text()
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(p), "--preset", "quick", "--no-progress"])
    assert res.exit_code == 0, res.output
    out = flat(res.output)
    assert "warning: " in out and "'income' holds 2 infinite value(s)" in out
    assert "RuntimeWarning" not in out and "Traceback" not in out and " error " not in out
    pd.testing.assert_frame_equal(pd.read_csv(p), pd.read_csv(p))  # the file itself is untouched
