"""The data owner's workflow: ``synthguard profile`` then ``evaluate --original-stats``.

The fidelity numbers computed from the profile must equal those computed from the original rows.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from synthguard import evaluate
from synthguard.cli import main
from synthguard.errors import ConfigError, InputError
from synthguard.run.profile import load_original_stats, profile
from tests.console_text import flat

FIDELITY = ["accuracy", "quality_report"]
PRIVACY = ["exact_matches", "dcr", "distinguishability"]
NEEDS_ROWS = "the original rows (not available with --original-stats)"


def _results(report, names):
    out = {}
    for n in names:
        r = dict(report[n]["result"])
        r.pop("from_original_stats")
        out[n] = r
    return out


@pytest.mark.parametrize("threshold", [None, 0.0])
def test_profile_gives_the_same_fidelity_numbers(tmp_path, demo_data, demo_metadata, threshold) -> None:
    orig, ctl, syn = demo_data["original"], demo_data["control"], demo_data["safe"]
    metrics: dict = {m: {} for m in FIDELITY}
    if threshold is not None:
        metrics["quality_report"] = {"real_correlation_threshold": threshold,
                                     "real_association_threshold": threshold}
    path = profile(orig, demo_metadata, seed=7).save(tmp_path / "stats.json")
    with_rows = evaluate(orig, syn, ctl, demo_metadata, metrics=metrics, seed=7)
    from_stats = evaluate(None, syn, ctl, metrics=metrics, seed=7, original_stats=path)
    assert _results(with_rows, FIDELITY) == _results(from_stats, FIDELITY)
    assert from_stats["accuracy"]["result"]["from_original_stats"] is True
    assert from_stats["accuracy"]["result"]["ceiling"] is not None


def test_profile_equality_with_nan_datetimes_booleans_and_shared_binning(tmp_path, make_mixed) -> None:
    mixed_frame = make_mixed
    orig, syn, ctl = (mixed_frame(700, seed=s, nan_rate=0.1) for s in (0, 1, 2))
    syn.loc[:30, "cat"] = "new"  # a synthetic-only category (SDMetrics' pseudo-count path)
    syn["when"] = syn["when"].mask(np.random.default_rng(0).random(700) < 0.05)
    metrics = {"accuracy": {"max_bins": 7, "max_categories": 3, "n_triples": 5},
               "quality_report": {"pair_binning": "shared", "real_association_threshold": 0.0,
                                  "real_correlation_threshold": 0.0}}
    st = profile(orig, seed=1, max_bins=7, max_categories=3, n_triples=5)
    reloaded = load_original_stats(json.loads(json.dumps(st.to_dict())))
    a = evaluate(orig, syn, ctl, metrics=metrics, seed=1)
    b = evaluate(None, syn, ctl, metrics=metrics, seed=1, original_stats=reloaded)
    assert _results(a, FIDELITY) == _results(b, FIDELITY)
    # the profile's own binning parameters must be used: others are refused, not silently mixed
    c = evaluate(None, syn, ctl, metrics=["accuracy"], seed=1, original_stats=reloaded)
    assert c.status("accuracy") == "skipped" and "profiled with" in c["accuracy"]["reason"]


def test_privacy_metrics_say_they_need_the_rows(tmp_path, demo_data, demo_metadata) -> None:
    path = profile(demo_data["original"], demo_metadata).save(tmp_path / "s.json")
    rep = evaluate(None, demo_data["leaky"], demo_data["control"], metrics=FIDELITY + PRIVACY,
                   original_stats=path)
    for m in PRIVACY:
        assert rep.status(m) == "skipped" and rep[m]["reason"] == "needs " + NEEDS_ROWS
    for m in FIDELITY:
        assert rep.status(m) == "ok"
    assert rep.header["schema"]["columns"]["age"]["sdtype"] == "numerical"


def test_what_a_profile_stores(tmp_path) -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"salary": rng.normal(50_000, 8_000, 600).round(2),
                       "city": rng.choice(["a", "b", "c"], 600)})
    df.loc[10, "salary"] = 51234.567  # a value seen once, mid-range
    df.loc[11, "city"] = "Tinytown"  # a category seen once
    df["person_id"] = [f"P{i:05d}" for i in range(600)]  # an id column: never stored
    df["note"] = [f"called on day {i} about the bill" for i in range(600)]  # free text: never stored
    meta = {"columns": {"person_id": {"sdtype": "id"}, "note": {"sdtype": "text"}}}
    stored = json.dumps(profile(df, meta).to_dict())
    assert "P00017" not in stored and "called on day" not in stored
    df = df.drop(columns=["person_id", "note"])
    exact = json.dumps(profile(df).to_dict())
    coarse_stats = profile(df, exact_shapes=False, ecdf_points=101, min_count=5)
    coarse = json.dumps(coarse_stats.to_dict())
    assert "51234.567" in exact and "Tinytown" in exact  # documented: the exact profile has them
    assert "51234.567" not in coarse and "Tinytown" not in coarse
    assert json.loads(coarse)["options"] == {"exact_shapes": False, "ecdf_points": 101, "min_count": 5}
    # the coarse profile still scores, marked approximate
    rep = evaluate(None, df, metrics=FIDELITY, original_stats=coarse_stats)
    assert rep.result("quality_report").details["exact"] is False
    assert "approximate" in rep.result("quality_report").warning
    assert rep.result("accuracy").details["coarse_profile"] is True
    assert rep.result("quality_report").value == pytest.approx(1.0, abs=0.02)


def test_cli_profile_then_evaluate(tmp_path, demo_data, demo_metadata) -> None:
    for role in ("original", "control", "safe"):
        demo_data[role].to_csv(tmp_path / f"{role}.csv", index=False)
    (tmp_path / "meta.json").write_text(json.dumps(demo_metadata))
    run = CliRunner()
    res = run.invoke(main, ["profile", str(tmp_path / "original.csv"), "-o", str(tmp_path / "stats.json"),
                            "--metadata", str(tmp_path / "meta.json")])
    assert res.exit_code == 0, res.output
    assert "written to" in res.output
    common = ["--synthetic", str(tmp_path / "safe.csv"), "--control", str(tmp_path / "control.csv"),
              "--metrics", "accuracy,quality_report,dcr", "--no-progress"]
    a = run.invoke(main, ["evaluate", "--original", str(tmp_path / "original.csv"), "--metadata",
                          str(tmp_path / "meta.json"), *common, "--json", str(tmp_path / "a.json")])
    b = run.invoke(main, ["evaluate", "--original-stats", str(tmp_path / "stats.json"), *common,
                          "--json", str(tmp_path / "b.json"), "--html", str(tmp_path / "b.html")])
    assert a.exit_code == 0 and b.exit_code == 0, (a.output, b.output)
    assert "of the achievable" in flat(b.output)  # the ceiling reaches the console
    ja = json.loads((tmp_path / "a.json").read_text())["metrics"]
    jb = json.loads((tmp_path / "b.json").read_text())["metrics"]
    for m in ("accuracy", "quality_report"):
        ra, rb = ja[m]["result"], jb[m]["result"]
        ra.pop("from_original_stats"), rb.pop("from_original_stats")
        assert ra == rb
    assert jb["dcr"]["reason"] == "needs " + NEEDS_ROWS
    html = (tmp_path / "b.html").read_text()
    assert "Fidelity against its ceiling" in html and "of the achievable" in html
    both = run.invoke(main, ["evaluate", "--original", str(tmp_path / "original.csv"), "--original-stats",
                             str(tmp_path / "stats.json"), *common])
    assert both.exit_code == 2 and "exactly one of" in both.output


def test_bad_profiles_and_mismatched_releases(tmp_path, demo_data) -> None:
    orig = demo_data["original"]
    with pytest.raises(InputError, match="does not exist"):
        evaluate(None, orig, original_stats=tmp_path / "missing.json")
    (tmp_path / "x.json").write_text('{"hello": 1}')
    with pytest.raises(InputError, match="not a synthguard profile"):
        evaluate(None, orig, original_stats=tmp_path / "x.json")
    st = profile(orig)
    with pytest.raises(InputError, match="missing column"):
        evaluate(None, orig.drop(columns=["bmi"]), original_stats=st)
    with pytest.raises(InputError, match="has column"):
        evaluate(None, orig.assign(extra=1), original_stats=st)
    with pytest.raises(ConfigError, match="not both"):
        evaluate(orig, orig, original_stats=st)
    with pytest.raises(ConfigError, match="no original"):
        evaluate(None, orig)


def test_profile_equality_on_real_census_rows(tmp_path, shared_data) -> None:
    acs = pd.read_csv(shared_data / "acs12.csv")
    idx = np.random.default_rng(0).permutation(len(acs))
    orig, ctl = acs.iloc[idx[:1000]], acs.iloc[idx[1000:]]
    syn = orig.sample(frac=1.0, replace=True, random_state=1).copy()
    syn["income"] = syn["income"].sample(frac=1, random_state=2).to_numpy()
    path = profile(orig, seed=3).save(tmp_path / "acs.json")
    a = evaluate(orig, syn, ctl, metrics=FIDELITY, seed=3)
    b = evaluate(None, syn, ctl, metrics=FIDELITY, seed=3, original_stats=path)
    assert _results(a, FIDELITY) == _results(b, FIDELITY)
    # shuffling income breaks its pairs: the release falls short of its ceiling there
    pairs = [p for p in b.result("accuracy").details["pairs"] if "income" in (p["column_1"], p["column_2"])]
    assert np.mean([p["control_accuracy"] - p["accuracy"] for p in pairs]) > 0.1
