"""Copies found however a table was written, and clear words on files synthguard cannot read
(issue 33, points 3 and 4), each on a real table of ../shared/data through the command line.

Every release below holds 30 % verbatim copies of training rows (NHEFS: no two rows alike, so
``exact_matches`` must read 0.30). Warnings and values are read from the JSON report, errors from
the one line the command prints: never from a console line that a terminal could wrap.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from .test_bad_input import assert_cli_error, run

TRUTH = 0.30


@pytest.fixture(scope="module")
def nhefs(shared_data):
    """original 700 rows, control 300, release 600 = 180 training rows + 420 held-out rows."""
    df = pd.read_csv(shared_data / "nhefs.csv").sample(frac=1, random_state=0).reset_index(drop=True)
    o, c, rest = df.iloc[:700], df.iloc[700:1000], df.iloc[1000:]
    k = int(600 * TRUTH)
    r = pd.concat([o.sample(k, random_state=1), rest.iloc[:600 - k]]).sample(frac=1, random_state=2)
    return {"original": o.reset_index(drop=True), "release": r.reset_index(drop=True),
            "control": c.reset_index(drop=True)}


def _files(tmp_path: Path, tables: dict[str, pd.DataFrame], index: bool = False) -> dict[str, Path]:
    out = {}
    for role, df in tables.items():
        out[role] = tmp_path / f"{role}.csv"
        df.to_csv(out[role], index=index)
    return out


def _evaluate(tmp_path: Path, files: dict[str, Path], metadata: dict | None = None):
    """The CLI on the three files: its result and the JSON report (``{}`` when it failed)."""
    args = ["evaluate", "-o", str(files["original"]), "-s", str(files["release"]), "-c", str(files["control"]),
            "--metrics", "exact_matches", "--json", str(tmp_path / "report.json"), "--no-progress"]
    if metadata is not None:
        (tmp_path / "meta.json").write_text(json.dumps(metadata))
        args += ["--metadata", str(tmp_path / "meta.json")]
    res = run(args)
    if res.exit_code != 0:
        return res, {}
    return res, json.loads((tmp_path / "report.json").read_text())


def _copies(report: dict) -> float:
    return report["metrics"]["exact_matches"]["result"]["value"]


# ------------------------------------------------------------------------------------ row numbers


def test_saved_pandas_index_is_left_out_of_every_comparison(nhefs, tmp_path):
    """``to_csv`` without ``index=False`` in every file: 0 % found before (the index differs
    between the files); now the column is found, left out, and named once."""
    res, rep = _evaluate(tmp_path, _files(tmp_path, nhefs, index=True))
    assert res.exit_code == 0, res.output
    assert _copies(rep) == pytest.approx(TRUTH, abs=0.005)
    assert len(rep["warnings"]) == 1
    assert "'Unnamed: 0'" in rep["warnings"][0] and "left out of every row comparison" in rep["warnings"][0]
    assert rep["schema"]["columns"]["Unnamed: 0"]["sdtype"] == "id"


def test_case_number_renumbered_in_each_file_is_left_out(nhefs, tmp_path):
    """An undeclared ``case_no`` 1..n in each file: 0 %, risk LOW before."""
    tables = {r: df.assign(case_no=np.arange(1, len(df) + 1)) for r, df in nhefs.items()}
    res, rep = _evaluate(tmp_path, _files(tmp_path, tables))
    assert res.exit_code == 0, res.output
    assert _copies(rep) == pytest.approx(TRUTH, abs=0.005)
    assert len(rep["warnings"]) == 1 and "'case_no'" in rep["warnings"][0] and "1..n" in rep["warnings"][0]


def test_a_real_count_column_is_not_taken_for_row_numbers(nhefs, tmp_path):
    """``seqn`` (a survey id, unique but not 0..n-1) and the data columns stay compared."""
    res, rep = _evaluate(tmp_path, _files(tmp_path, nhefs))
    assert res.exit_code == 0, res.output
    assert _copies(rep) == pytest.approx(TRUTH, abs=0.005) and rep["warnings"] == []


# ------------------------------------------------------------------------------------ spellings


def test_zero_one_against_true_false_is_read_as_booleans(nhefs, tmp_path):
    """``qsmk`` 0/1 in the original and control, True/False in the release: 0 % before."""
    tables = dict(nhefs, release=nhefs["release"].assign(qsmk=nhefs["release"]["qsmk"].astype(bool)))
    res, rep = _evaluate(tmp_path, _files(tmp_path, tables))
    assert res.exit_code == 0, res.output
    assert _copies(rep) == pytest.approx(TRUTH, abs=0.005) and rep["warnings"] == []
    note = " ".join(rep["inferred_metadata"]["qsmk"]["normalised"])
    assert "0/1" in note and "True/False" in note and "release.csv" in note


@pytest.mark.parametrize("declared", [None, "categorical"])
def test_integer_codes_written_with_a_decimal_point_match(nhefs, tmp_path, declared):
    """``education`` 1..5 in the original, 1.0..5.0 in the release (undeclared, and declared
    categorical: 0 % before)."""
    tables = dict(nhefs, release=nhefs["release"].assign(education=nhefs["release"]["education"].astype(float)))
    meta = {"columns": {"education": {"sdtype": declared}}} if declared else None
    res, rep = _evaluate(tmp_path, _files(tmp_path, tables), meta)
    assert res.exit_code == 0, res.output
    assert _copies(rep) == pytest.approx(TRUTH, abs=0.005) and rep["warnings"] == []


def test_zero_padded_codes_warn_with_both_spellings_and_the_fix(nhefs, tmp_path):
    """'03' in the release, '3' in the original: maybe other codes, so not aligned, but one
    warning naming the column, both spellings and the fix; the fix finds the copies."""
    rel = nhefs["release"].assign(education=nhefs["release"]["education"].map("{:02d}".format))
    files = _files(tmp_path, dict(nhefs, release=rel))
    res, rep = _evaluate(tmp_path, files)
    assert res.exit_code == 0, res.output
    assert _copies(rep) == 0.0
    (warn,) = [w for w in rep["warnings"] if "'education'" in w]
    assert "in " + str(files["release"]) in warn and "in " + str(files["original"]) in warn
    assert "leading zeros" in warn and "declare the column 'numerical'" in warn
    assert any(f"'0{v}'" in warn and f"'{v}' in" in warn for v in range(1, 6))
    res, fixed = _evaluate(tmp_path, files, {"columns": {"education": {"sdtype": "numerical"}}})
    assert res.exit_code == 0, res.output
    assert _copies(fixed) == pytest.approx(TRUTH, abs=0.005) and fixed["warnings"] == []


def test_upper_against_lower_case_warns_with_both_spellings(shared_data, tmp_path):
    """ACS 2012 ``race`` in capitals in the release (0 % found, no word before)."""
    df = pd.read_csv(shared_data / "acs12.csv").sample(frac=1, random_state=0).reset_index(drop=True)
    o, c = df.iloc[:800], df.iloc[800:1200]
    r = pd.concat([o.iloc[:240], df.iloc[1200:1760]])
    res, rep = _evaluate(tmp_path, _files(tmp_path, {"original": o, "release": r.assign(race=r["race"].str.upper()),
                                                "control": c}))
    assert res.exit_code == 0, res.output
    (warn,) = [w for w in rep["warnings"] if "'race'" in w]
    assert "case" in warn and "'WHITE'" in warn and "'white'" in warn and "one case in every file" in warn
    assert not [w for w in rep["warnings"] if "share nothing" in w]  # said once, precisely


def test_id_declared_on_a_column_of_four_values_warns(shared_data, tmp_path):
    """``race`` (4 values) declared id: rows differing only in it counted as copies (34.7 %
    against 30 % before), without a word."""
    df = pd.read_csv(shared_data / "acs12.csv").sample(frac=1, random_state=0).reset_index(drop=True)
    files = _files(tmp_path, {"original": df.iloc[:800], "release": df.iloc[1200:2000], "control": df.iloc[800:1200]})
    res, rep = _evaluate(tmp_path, files, {"columns": {"race": {"sdtype": "id"}}})
    assert res.exit_code == 0, res.output
    (warn,) = [w for w in rep["warnings"] if "'race'" in w]
    assert "4 distinct value(s) in 800 rows" in warn and "declare it 'categorical'" in warn


# ------------------------------------------------------------------------------------ the control


def test_release_given_again_as_the_control_is_refused(nhefs, tmp_path):
    """``-c`` the release itself: "inconclusive, no excess found" on 30 % copies before."""
    files = _files(tmp_path, nhefs)
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["release"]), "-c", str(files["release"]),
               "--metrics", "exact_matches"])
    assert_cli_error(res, f"{files['release']} holds the same rows as the release {files['release']}",
                     "give the holdout file as the control")
    # most of its rows from the release (the rest real held-out rows), in another order
    mostly = pd.concat([nhefs["release"].iloc[:400], nhefs["control"].iloc[:200]]).sample(frac=1, random_state=5)
    mostly.to_csv(tmp_path / "mostly.csv", index=False)
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["release"]), "-c",
               str(tmp_path / "mostly.csv"), "--metrics", "exact_matches"])
    assert_cli_error(res, "mostly.csv shares 67% of its rows", f"with the release {files['release']}")


# ------------------------------------------------------------------------------------ encodings


@pytest.mark.parametrize(("codec", "named"), [
    ("utf-16", "UTF-16 text (with a byte-order mark)"), ("utf-16-le", "UTF-16LE text (without"),
    ("utf-16-be", "UTF-16BE text (without"), ("utf-32", "UTF-32 text (with"), ("utf-32-le", "UTF-32LE text (without")])
@pytest.mark.parametrize("role", ["-o", "-s"])
def test_utf16_and_utf32_files_are_named_with_the_fix(nhefs, tmp_path, codec, named, role):
    """A UTF-16 original without a byte-order mark was blamed on the *release*, for missing
    columns named '\\x00T\\x00...'."""
    files = _files(tmp_path, nhefs)
    odd = tmp_path / "exported.csv"
    odd.write_bytes(nhefs["original"].to_csv(index=False).encode(codec))
    args = {"-o": str(files["original"]), "-s": str(files["release"])}
    args[role] = str(odd)
    res = run(["evaluate", "-o", args["-o"], "-s", args["-s"], "--metrics", "exact_matches"])
    what = "original" if role == "-o" else "synthetic"
    assert_cli_error(res, f"{what} file {odd} is {named}", "re-save it as UTF-8", "iconv -f UTF-")


def test_latin1_file_is_named_with_the_fix(shared_data, tmp_path):
    """Latin-1 (Windows-1252) text: "is it really a CSV?" before."""
    df = pd.read_csv(shared_data / "acs12.csv").iloc[:500]
    df.loc[400, "lang"] = "français"
    (tmp_path / "o.csv").write_bytes(df.to_csv(index=False).encode("cp1252"))
    df.iloc[:200].to_csv(tmp_path / "s.csv", index=False)
    res = run(["evaluate", "-o", str(tmp_path / "o.csv"), "-s", str(tmp_path / "s.csv"), "--metrics", "exact_matches"])
    assert_cli_error(res, f"original file {tmp_path / 'o.csv'} is not UTF-8: line 402 reads as Latin-1",
                     "français", "iconv -f WINDOWS-1252 -t UTF-8")


# ------------------------------------------------------------------------------------ metadata


@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_metadata_naming_a_column_twice_is_refused(nhefs, tmp_path, suffix):
    files = _files(tmp_path, nhefs)
    meta = tmp_path / f"meta.{suffix}"
    if suffix == "json":
        meta.write_text('{"columns": {"age": {"sdtype": "numerical"}, "sex": {"sdtype": "categorical"}, '
                        '"age": {"sdtype": "categorical"}}}')
    else:
        meta.write_text("columns:\n  age: {sdtype: numerical}\n  sex: {sdtype: categorical}\n"
                        "  age: {sdtype: categorical}\n")
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["release"]), "--metadata", str(meta),
               "--metrics", "exact_matches"])
    assert_cli_error(res, f"metadata file {meta} names 'age' twice", "keep one of them")


def test_metadata_listing_a_column_twice_warns_and_reads_it_once(nhefs, tmp_path):
    res, rep = _evaluate(tmp_path, _files(tmp_path, nhefs), {"quasi_identifiers": ["age", "sex", "age"]})
    assert res.exit_code == 0, res.output
    assert [w for w in rep["warnings"] if "lists column 'age' twice" in w]
    assert rep["schema"]["quasi_identifiers"] == ["age", "sex"]


def test_metadata_declaring_ages_boolean_is_refused(nhefs, tmp_path):
    """Ages 25-74 declared boolean: accepted silently before."""
    files = _files(tmp_path, nhefs)
    (tmp_path / "meta.json").write_text(json.dumps({"columns": {"age": {"sdtype": "boolean"}}}))
    res = run(["evaluate", "-o", str(files["original"]), "-s", str(files["release"]), "--metadata",
               str(tmp_path / "meta.json"), "--metrics", "exact_matches"])
    assert_cli_error(res, f"{files['original']}: column 'age' is declared boolean",
                     "declare its sdtype 'numerical' or 'categorical'")
