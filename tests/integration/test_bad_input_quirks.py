"""Real-world data quirks must not hide copies (issue 13): a release with 30 % exact copies of
training rows keeps its exact-match rate under each quirk; controls that are, or overlap, the
original are caught; inf values are read as missing with a warning; one date format per column."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import synthguard
from synthguard.cli import main
from synthguard.errors import InputError
from tests.console_text import flat

N = 300
COPY_SHARE = 0.3


@pytest.fixture(scope="module")
def base():
    """Original (with a boolean and a day-first-friendly date), a release of 30 % exact copies
    plus 70 % fresh rows, and a control."""
    from synthguard.demo import make_demo

    d = make_demo(3 * N, seed=1)  # 3N population -> N original / N control / releases of N
    rng = np.random.default_rng(0)
    ori = d["original"].iloc[:N].reset_index(drop=True)
    ori["smoker"] = rng.random(N) < 0.3
    k = int(COPY_SHARE * N)
    fresh = d["safe"].iloc[: N - k].reset_index(drop=True)
    fresh["smoker"] = rng.random(N - k) < 0.3
    syn = pd.concat([ori.sample(k, random_state=1), fresh], ignore_index=True)
    syn = syn.sample(frac=1, random_state=2).reset_index(drop=True)
    ctl = d["control"].iloc[:N].reset_index(drop=True)
    ctl["smoker"] = rng.random(len(ctl)) < 0.3
    return ori, syn, ctl


def _rate(tmp_path, ori: pd.DataFrame, syn: pd.DataFrame, **kw) -> tuple[float, dict]:
    po, ps = tmp_path / "original.csv", tmp_path / "release.csv"
    ori.to_csv(po, index=False)
    syn.to_csv(ps, index=False)
    rep = synthguard.evaluate(po, ps, metrics=["exact_matches"], **kw)
    assert rep["exact_matches"]["status"] == "ok", rep["exact_matches"]["reason"]
    return rep["exact_matches"]["result"]["value"], rep.to_dict()


def test_baseline_copy_rate(base, tmp_path):
    ori, syn, _ = base
    rate, _ = _rate(tmp_path, ori, syn)
    assert rate == pytest.approx(COPY_SHARE, abs=0.02)


def test_yes_no_vs_true_false_booleans(base, tmp_path):
    ori, syn, _ = base
    ori = ori.assign(smoker=np.where(ori["smoker"], "yes", "no"))
    rate, rep = _rate(tmp_path, ori, syn)  # the release keeps True/False
    assert rate == pytest.approx(COPY_SHARE, abs=0.02)
    assert rep["inferred_metadata"]["smoker"]["sdtype"] == "boolean"
    assert "yes/no" in rep["inferred_metadata"]["smoker"]["reason"]
    # and the other way round
    rate, _ = _rate(tmp_path, base[0], syn.assign(smoker=np.where(syn["smoker"], "Yes", "No")))
    assert rate == pytest.approx(COPY_SHARE, abs=0.02)


def test_trailing_spaces_in_categoricals(base, tmp_path):
    ori, syn, _ = base
    syn = syn.assign(sex=syn["sex"] + " ", occupation="  " + syn["occupation"])
    rate, rep = _rate(tmp_path, ori, syn)
    assert rate == pytest.approx(COPY_SHARE, abs=0.02)
    notes = rep["inferred_metadata"]["sex"]["normalised"]
    assert any("whitespace stripped" in n and "release.csv" in n for n in notes)


def test_release_surrogate_id_column(base, tmp_path):
    ori, syn, _ = base
    ori = ori.assign(record=[f"P{i:06d}" for i in range(len(ori))])
    syn = syn.assign(record=[f"S{i:06d}" for i in range(len(syn))])
    rate, rep = _rate(tmp_path, ori, syn)
    assert rate == pytest.approx(COPY_SHARE, abs=0.02)
    assert rep["inferred_metadata"]["record"]["sdtype"] == "id"
    assert any("'record'" in w and "surrogate identifier" in w for w in rep["warnings"])
    # integer surrogate keys too (not named like an identifier)
    rate, rep = _rate(tmp_path, ori.assign(record=np.arange(len(ori))),
                      syn.assign(record=np.arange(len(syn)) + 10_000_000))
    assert rate == pytest.approx(COPY_SHARE, abs=0.02)
    assert rep["inferred_metadata"]["record"]["sdtype"] == "id"


def test_copied_rows_keep_their_id_so_it_is_not_an_identifier(base, tmp_path):
    """A release copying whole rows, ID included, overlaps the original: no surrogate, copies found."""
    ori, syn, _ = base
    ori = ori.assign(record=[f"P{i:06d}" for i in range(len(ori))])
    syn = syn.merge(ori, how="left", on=list(base[0].columns))
    syn["record"] = syn["record"].fillna(pd.Series([f"S{i:06d}" for i in range(len(syn))]))
    rate, rep = _rate(tmp_path, ori, syn)
    assert rate == pytest.approx(COPY_SHARE, abs=0.02)
    assert rep["inferred_metadata"].get("record", {}).get("sdtype") != "id"


def test_day_first_dates(base, tmp_path):
    ori, syn, _ = base
    syn = syn.assign(admission_date=pd.to_datetime(syn["admission_date"]).dt.strftime("%d/%m/%Y"))
    rate, rep = _rate(tmp_path, ori, syn)  # original ISO, release day-first
    assert rate == pytest.approx(COPY_SHARE, abs=0.02)
    assert any("day-first" in n for n in rep["inferred_metadata"]["admission_date"]["normalised"])
    # both day-first
    ori2 = ori.assign(admission_date=pd.to_datetime(ori["admission_date"]).dt.strftime("%d/%m/%Y"))
    rate, _ = _rate(tmp_path, ori2, syn)
    assert rate == pytest.approx(COPY_SHARE, abs=0.02)
    # month-first in both
    ori3 = ori.assign(admission_date=pd.to_datetime(ori["admission_date"]).dt.strftime("%m/%d/%Y"))
    syn3 = syn.assign(admission_date=pd.to_datetime(syn["admission_date"], dayfirst=True).dt.strftime("%m/%d/%Y"))
    rate, rep = _rate(tmp_path, ori3, syn3)
    assert rate == pytest.approx(COPY_SHARE, abs=0.02)
    assert any("month-first" in n for n in rep["inferred_metadata"]["admission_date"]["normalised"])


def test_day_first_parsing_is_one_format_per_column():
    """05/12 and 25/12 in one column are both December (never May 12 then December 25)."""
    ori = pd.DataFrame({"d": ["05/12/2020", "25/12/2020"] * 5, "x": range(10)})
    tables = synthguard.data.prepare_tables(ori, ori.copy(), metadata={"columns": {"d": {"sdtype": "datetime"}}})
    assert (tables.original["d"].dt.month == 12).all()


def test_ambiguous_dates_name_the_metadata_key(tmp_path):
    ori = pd.DataFrame({"d": ["05/12/2020", "03/04/2021", "01/02/2019"] * 4, "x": range(12)})
    with pytest.raises(InputError, match="datetime_format"):
        synthguard.data.prepare_tables(ori, ori.copy())
    p = tmp_path / "o.csv"
    ori.to_csv(p, index=False)
    res = CliRunner().invoke(main, ["evaluate", "-o", str(p), "-s", str(p), "--metrics", "exact_matches"])
    assert res.exit_code == 2 and "datetime_format" in res.output and "Traceback" not in res.output
    meta = {"columns": {"d": {"sdtype": "datetime", "datetime_format": "%d/%m/%Y"}}}
    t = synthguard.data.prepare_tables(ori, ori.copy(), metadata=meta)
    assert t.original["d"].iloc[0] == pd.Timestamp("2020-12-05")


def test_day_first_and_month_first_mixed_is_an_error():
    ori = pd.DataFrame({"d": ["25/12/2020", "12/25/2020"] * 6, "x": range(12)})
    with pytest.raises(InputError, match="mixes day-first"):
        synthguard.data.prepare_tables(ori, ori.copy(), metadata={"columns": {"d": {"sdtype": "datetime"}}})


def test_disjoint_categories_warn_in_report_and_console(base, tmp_path):
    ori, syn, _ = base
    syn = syn.assign(sex=syn["sex"].map({"F": "Female", "M": "Male"}))
    rate, rep = _rate(tmp_path, ori, syn)
    assert any("'sex'" in w and "share nothing" in w for w in rep["warnings"])
    po, ps = tmp_path / "original.csv", tmp_path / "release.csv"
    res = CliRunner().invoke(main, ["evaluate", "-o", str(po), "-s", str(ps), "--metrics", "exact_matches",
                                    "--no-progress"])
    assert res.exit_code == 0 and "warning: column 'sex'" in flat(res.output)


# ------------------------------------------------------------------------------------------ control


def test_control_identical_to_original_is_an_error(base, tmp_path):
    ori, syn, _ = base
    with pytest.raises(InputError, match="same rows"):
        synthguard.evaluate(ori, syn, control=ori.copy(), metrics=["exact_matches"])
    with pytest.raises(InputError, match="same rows"):  # shuffled is still the same rows
        synthguard.evaluate(ori, syn, control=ori.sample(frac=1, random_state=3), metrics=["exact_matches"])
    po, ps = tmp_path / "o.csv", tmp_path / "s.csv"
    ori.to_csv(po, index=False)
    syn.to_csv(ps, index=False)
    res = CliRunner().invoke(main, ["evaluate", "-o", str(po), "-s", str(ps), "-c", str(po), "--metrics",
                                    "exact_matches"])
    assert res.exit_code == 2 and "same rows" in res.output and "Traceback" not in res.output


def test_control_overlapping_original_warns_with_the_share(base):
    ori, syn, ctl = base
    half = pd.concat([ori.iloc[: N // 2], ctl.iloc[N // 2:]], ignore_index=True)
    rep = synthguard.evaluate(ori, syn, control=half, metrics=["exact_matches"])
    warns = [w for w in rep.to_dict()["warnings"] if "control rows" in w]
    assert warns and "50.0%" in warns[0] and "held out" in warns[0]
    assert "warning: 50.0% of the control rows" in flat(rep.to_console())
    clean = synthguard.evaluate(ori, syn, control=ctl, metrics=["exact_matches"])
    assert not [w for w in clean.to_dict()["warnings"] if "control rows" in w]


# ------------------------------------------------------------------------------------------ inf


def test_inf_is_missing_with_a_warning_and_no_numpy_noise(base):
    ori, syn, ctl = base
    ori = ori.copy()
    ori.loc[[3, 7, 11], "income"] = [np.inf, -np.inf, np.inf]
    syn = syn.copy()
    syn.loc[5, "bmi"] = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a numpy warning would fail the metric
        rep = synthguard.evaluate(ori, syn, control=ctl, preset="quick")
    d = rep.to_dict()
    assert any("'income' holds 3 infinite value(s)" in w and "missing" in w for w in d["warnings"])
    assert any("'bmi' holds 1 infinite value(s)" in w for w in d["warnings"])
    bad = {m: e["reason"] for m, e in d["metrics"].items() if e["status"] == "error"}
    assert not bad
    # the same numbers as with the values missing
    ref = synthguard.evaluate(ori.replace([np.inf, -np.inf], np.nan), syn.replace([np.inf, -np.inf], np.nan),
                              control=ctl, preset="quick")
    for m in d["metrics"]:
        assert json.dumps(d["metrics"][m]["result"]) == json.dumps(ref.to_dict()["metrics"][m]["result"])


# ------------------------------------------------------------------------------------------ epochs, SDV


def test_declared_datetime_with_epoch_milliseconds():
    when = pd.to_datetime(["2021-03-04 10:00", "2020-01-01 00:00", "2019-07-08 12:30"] * 4)
    epoch_ms = ((when - pd.Timestamp(0)) // pd.Timedelta(milliseconds=1)).to_numpy(dtype="int64")
    assert epoch_ms[0] == 1_614_852_000_000  # (pandas 3 parses strings at us resolution, not ns)
    ms = pd.DataFrame({"timestamp": epoch_ms, "x": range(12)})
    meta = {"columns": {"timestamp": {"sdtype": "datetime"}}}
    t = synthguard.data.prepare_tables(ms, ms.copy(), metadata=meta)
    assert (t.original["timestamp"] == pd.Series(when)).all()
    secs = ms.assign(timestamp=ms["timestamp"] // 1000)
    t = synthguard.data.prepare_tables(secs, secs.copy(), metadata={
        "columns": {"timestamp": {"sdtype": "datetime", "unit": "s"}}})
    assert t.original["timestamp"].iloc[0] == pd.Timestamp("2021-03-04 10:00")
    rep = synthguard.evaluate(ms, ms.copy(), metadata=meta, metrics=["exact_matches"])
    assert "epoch" in " ".join(rep.to_dict()["inferred_metadata"]["timestamp"]["normalised"])


def test_sdv_single_table_metadata(base, tmp_path):
    ori, syn, _ = base
    ori = ori.assign(pid=range(len(ori)))
    syn = syn.assign(pid=range(len(syn)))
    sdv = {"METADATA_SPEC_VERSION": "SINGLE_TABLE_V1", "primary_key": "pid",
           "columns": {"pid": {"sdtype": "id"}, "age": {"sdtype": "numerical", "computer_representation": "Int64"},
                       "sex": {"sdtype": "categorical"}, "zip": {"sdtype": "postcode", "pii": True},
                       "admission_date": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"}}}
    p = tmp_path / "sdv.json"
    p.write_text(json.dumps(sdv))
    rep = synthguard.evaluate(ori, syn, metadata=p, metrics=["exact_matches"])
    sch = rep.to_dict()["schema"]
    assert sch["primary_key"] == "pid" and sch["columns"]["pid"]["sdtype"] == "id"
    assert sch["columns"]["zip"] == {"sdtype": "categorical", "pii": True}
