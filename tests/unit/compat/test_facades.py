"""PETsARD-style ``Evaluator`` and SynEval-style ``PrivacyEvaluator``."""

from __future__ import annotations

import textwrap

import pandas as pd
import pytest

import synthguard
from synthguard import Evaluator, EvaluatorBase, PrivacyEvaluator
from synthguard.errors import ConfigError, InputError
from synthguard.run.config import is_registered


@pytest.fixture
def data(demo_data):
    return {"ori": demo_data["original"].head(300), "syn": demo_data["leaky"].head(300),
            "control": demo_data["control"].head(300)}


def test_public_surface():
    assert synthguard.Evaluator is Evaluator and synthguard.EvaluatorBase is EvaluatorBase
    assert synthguard.PrivacyEvaluator is PrivacyEvaluator


def test_default_is_quality_report_with_petsard_frames(data):
    if not is_registered("quality_report"):
        pytest.fail("quality_report is part of the contract")
    for method in ("default", "SDMetrics-QualityReport", "sdmetrics-single_table-qualityreport"):
        ev = Evaluator(method)
        ev.create(data={"ori": data["ori"], "syn": data["syn"]})
        ev.eval()
        g = ev.get_global()
        assert isinstance(g, pd.DataFrame) and len(g) == 1
        assert {"Score", "Column Shapes", "Column Pair Trends"} <= set(g.columns)
        cw = ev.get_columnwise()
        assert set(cw.index) == set(data["ori"].columns) and "Score" in cw
        pw = ev.get_pairwise()
        assert pw.index.nlevels == 2 and "Score" in pw
        assert list(g.index) == ["result"]  # PETsARD's global index, its rounding
        from synthguard.compat.petsard.evaluator import petsard_metadata

        assert g["Score"].iloc[0] == round(synthguard.evaluate(
            data["ori"], data["syn"], metrics=["quality_report"],
            metadata=petsard_metadata(data["ori"])).result("quality_report").value, 2)


def test_new_style_eval_returns_dict(data):
    out = Evaluator("sdmetrics-diagnosticreport").eval({"ori": data["ori"], "syn": data["syn"]})
    assert list(out) == ["global", "columnwise", "pairwise"] and out["pairwise"] is None
    assert {"Score", "Data Validity", "Data Structure"} <= set(out["global"].columns)


def test_required_keys_checked_with_clear_message(data, fake_metrics):
    ev = Evaluator("uitest_needs_control")
    with pytest.raises(InputError, match=r"needs data key\(s\) 'control' \(control: real rows held out"):
        ev.create(data={"ori": data["ori"], "syn": data["syn"]})
    with pytest.raises(InputError, match="must be a pandas DataFrame"):
        Evaluator("uitest_attack").create(data={"ori": data["ori"], "syn": [1, 2]})
    with pytest.raises(InputError, match="unknown data key"):
        Evaluator("uitest_attack").create(data={"ori": data["ori"], "syn": data["syn"], "holdout": 1})
    with pytest.raises(InputError, match="call eval"):
        Evaluator("uitest_attack").get_global()
    # PETsARD 1.10's data keys base/target read as ori/syn
    ev = Evaluator("uitest_attack")
    ev.create()
    assert set(ev.eval({"base": data["ori"], "target": data["syn"]})) >= {"global"}


def test_any_metric_name_and_generic_global(data, fake_metrics):
    ev = Evaluator("UITEST-MIA")  # alias, case-insensitive, '-' read as '_'
    ev.create(data=data)
    ev.eval()
    g = ev.get_global()
    assert g.loc["result", "metric"] == "uitest_attack"
    assert g.loc["result", "value"] == 0.8
    assert g.loc["result", "baseline"] == 0.5
    assert (g.loc["result", "ci_low"], g.loc["result", "ci_high"]) == (0.75, 0.85)
    assert ev.get_columnwise() is None and ev.get_pairwise() is None


def test_unknown_method_and_param(fake_metrics):
    with pytest.raises(ConfigError, match="unknown evaluation method 'anonymeter-nope'"):
        Evaluator("anonymeter-nope")
    with pytest.raises(ConfigError, match="has no parameter 'pct'"):
        Evaluator("uitest_distance", pct=3)
    with pytest.raises(ConfigError, match="mode must be"):
        Evaluator("anonymeter-singlingout", mode="trivariate")


def test_anonymeter_methods_map_or_say_unavailable(data):
    for method, metric in (("anonymeter-singlingout", "singling_out_multivariate"),
                           ("anonymeter-linkability", "linkability"),
                           ("anonymeter-inference", "inference")):
        if not is_registered(metric):
            with pytest.raises(ConfigError, match="not available in this installation"):
                Evaluator(method)
            continue
        ev = Evaluator(method)
        assert ev.metric == metric and ev.required_keys == ("ori", "syn", "control")
        with pytest.raises(InputError, match="'control'"):
            ev.create(data={"ori": data["ori"], "syn": data["syn"]})
    if is_registered("singling_out_univariate"):
        assert Evaluator("anonymeter-singlingout", mode="univariate").metric == "singling_out_univariate"


def test_synthguard_extras_are_opt_in(data):
    plain = Evaluator("anonymeter-singlingout", mode="univariate", n_attacks=200)
    plain.create()
    g = plain.eval(data)["global"]
    assert list(g.columns) == ["risk", "risk_CI_btm", "risk_CI_top", "attack_rate", "attack_rate_err",
                               "baseline_rate", "baseline_rate_err", "control_rate", "control_rate_err"]
    assert list(g.index) == ["result"] and g.index.name is None
    ev = Evaluator("anonymeter-singlingout", mode="univariate", n_attacks=200, synthguard_extras=True)
    ev.create()
    out = ev.eval(data)
    g2 = out["global"]
    assert list(g2.columns[:9]) == list(g.columns)
    assert {"value", "ci_low", "ci_high", "n", "baseline", "risk_level"} <= set(g2.columns)
    assert g2["risk"].iloc[0] == round(g2["value"].iloc[0], 2) and g2["n"].iloc[0] == 200
    assert "synthguard" in out["details"]


def test_ml_utility_layout_and_extras(data):
    ev = Evaluator("mlutility-regression", target="income", metrics=["r2_score", "rmse"])
    ev.create()
    out = ev.eval(data)
    assert list(out) == ["global", "details"] and sorted(out["details"]) == ["ori", "syn"]
    g = out["global"]
    assert list(g["metric"]) == ["r2_score", "rmse"]
    assert list(g.columns[:4]) == ["metric", "ori", "syn", "diff"]
    ev = Evaluator("mlutility-regression", target="income", metrics=["r2_score", "rmse"],
                   synthguard_extras=True)
    ev.create()
    g2 = ev.eval(data)["global"]
    assert {"model", "n_train", "n_test", "ci_low", "ci_high"} <= set(g2.columns)
    pd.testing.assert_frame_equal(g2[list(g.columns)], g)
    raw = ev.ml_result
    for m in ("r2_score", "rmse"):
        d = raw.scores["syn"][m] - raw.scores["ori"][m]
        lo, hi = raw.ci[m]
        assert lo <= d <= hi, (m, lo, d, hi)
    with pytest.raises(ConfigError, match="n_clusters must be an integer"):
        Evaluator("mlutility-cluster", n_clusters=[4, 5]).eval(data)
    with pytest.raises(ConfigError, match="not available for regression"):
        Evaluator("mlutility-regression", target="income", metrics=["f1_score"]).eval(data)


def test_anonymeter_global_columns(data):
    if not is_registered("singling_out_univariate"):
        pytest.fail("singling_out_univariate is part of the contract")
    ev = Evaluator("anonymeter-singlingout", mode="univariate")
    ev.create(data=data)
    ev.eval()
    g = ev.get_global()
    for col in ("risk", "risk_CI_btm", "risk_CI_top", "attack_rate", "attack_rate_err", "baseline_rate",
                "baseline_rate_err", "control_rate", "control_rate_err"):
        assert col in g.columns
    assert 0 <= g["risk"].iloc[0] <= 1 and g["risk_CI_btm"].iloc[0] <= g["risk_CI_top"].iloc[0]


class RowCount(EvaluatorBase):
    REQUIRED_INPUT_KEYS = ["ori", "syn"]
    AVAILABLE_SCORES_GRANULARITY = ["global", "columnwise"]

    def eval(self, data):
        scale = self.config.get("scale", 1)
        return {"global": pd.DataFrame({"ratio": [scale * len(data["syn"]) / len(data["ori"])]}),
                "columnwise": pd.DataFrame({"nunique": data["syn"].nunique()}),
                "pairwise": "ignored: not in the granularity list"}


class BaseTarget(EvaluatorBase):
    REQUIRED_INPUT_KEYS = ["base", "target"]
    AVAILABLE_SCORES_GRANULARITY = ["global"]

    def eval(self, data):
        return {"global": pd.DataFrame({"rows": [len(data["base"]) + len(data["target"])]})}


def test_custom_with_base_target_keys(data):
    ev = Evaluator(BaseTarget)
    ev.create()
    assert ev.eval({"base": data["ori"], "target": data["syn"].head(10)})["global"]["rows"].iloc[0] == 310
    assert ev.eval({"ori": data["ori"], "syn": data["syn"].head(10)})["global"]["rows"].iloc[0] == 310


def test_custom_subclass(data):
    ev = Evaluator(RowCount, scale=2)
    ev.create(data={"ori": data["ori"], "syn": data["syn"].head(150)})
    ev.eval()
    assert ev.get_global()["ratio"].iloc[0] == 1.0
    assert ev.get_pairwise() is None and len(ev.get_columnwise()) == data["ori"].shape[1]


def test_custom_method_from_file(tmp_path, data):
    mod = tmp_path / "my_eval.py"
    mod.write_text(textwrap.dedent("""
        import pandas as pd
        from synthguard import EvaluatorBase

        class MyEval(EvaluatorBase):
            REQUIRED_INPUT_KEYS = ["ori", "syn", "control"]
            AVAILABLE_SCORES_GRANULARITY = ["global"]

            def eval(self, data):
                return {"global": pd.DataFrame({"n_control": [len(data["control"])],
                                                "eval_method": [self.config["eval_method"]],
                                                "k": [self.config.get("k")]})}
    """), encoding="utf-8")
    ev = Evaluator("custom_method", module_path=str(mod), class_name="MyEval", k=7)
    ev.create(data=data)
    ev.eval()
    assert ev.get_global()["n_control"].iloc[0] == 300
    # PETsARD hands the class its whole config, eval_method included
    assert ev.get_global()["eval_method"].iloc[0] == "custom_method"
    assert ev.get_global()["k"].iloc[0] == 7
    legacy = Evaluator("custom_method", custom_method={"filepath": str(mod), "method": "MyEval"})
    with pytest.raises(InputError, match="'control'"):
        legacy.create(data={"ori": data["ori"], "syn": data["syn"]})
    with pytest.raises(ConfigError, match="defines no class 'Nope'"):
        Evaluator("custom_method", module_path=str(mod), class_name="Nope")
    with pytest.raises(ConfigError, match="does not exist"):
        Evaluator("custom_method", module_path=str(tmp_path / "missing.py"), class_name="MyEval")

    class Broken:
        REQUIRED_INPUT_KEYS = ["ori"]
        AVAILABLE_SCORES_GRANULARITY = ["everything"]

        def eval(self, data):
            return {}

    with pytest.raises(ConfigError, match="AVAILABLE_SCORES_GRANULARITY"):
        Evaluator(Broken)


def test_privacy_evaluator_syneval_keys(demo_data, demo_metadata):
    ev = PrivacyEvaluator(synthetic_data=demo_data["leaky"].head(300),
                          original_data=demo_data["original"].head(300), metadata=demo_metadata,
                          selected_metrics=["exact_matches", "membership_inference", "tabular_privacy"],
                          device="auto")
    res = ev.evaluate()
    em = res["exact_matches"]
    assert em["risk_level"] == "high" and em["exact_match_percentage"] > 5
    lo, hi = em["ci_percentage"]
    assert lo <= em["exact_match_percentage"] <= hi and em["n"] == 300
    mi = res["membership_inference"]
    assert {"distinguishability_auc", "synthetic_confidence", "original_confidence", "fidelity_score",
            "interpretation", "ci", "baseline"} <= set(mi)
    spm = res["structured_privacy_metrics"]
    assert {"IMS", "DCR", "NNDR"} <= set(spm)
    assert {"ims_syn_train", "train_test_ims", "passed", "method", "desc"} <= set(spm["IMS"])
    assert {"syn_train_5pct", "train_train_5pct", "passed", "method", "desc"} <= set(spm["DCR"])
    assert spm["DCR"]["passed"] is False  # 40 % copies sit at distance 0
    assert ev.device == "cpu"


def test_privacy_evaluator_anonymeter_without_control(demo_data, demo_metadata):
    """No real control: attacks that need one are listed as skipped with the reason, never run on a
    sample of the original (SynEval's defect)."""
    from synthguard.registry import get_metric

    ev = PrivacyEvaluator(demo_data["safe"].head(200), demo_data["original"].head(200), demo_metadata,
                          selected_metrics=["anonymeter"])
    res = ev.evaluate()
    ran = set(res.get("anonymeter", {}))
    skipped = res.get("skipped_metrics", {})
    for name in ("singling_out_univariate", "singling_out_multivariate", "linkability", "inference"):
        assert (name in ran) != (name in skipped), name
        if not is_registered(name):
            assert skipped[name] == "not available in this installation"
        elif "control" in get_metric(name).needs:
            assert "control" in skipped[name]


def test_privacy_evaluator_anonymeter_with_control(demo_data, demo_metadata):
    if not is_registered("singling_out_univariate"):
        pytest.fail("the anonymeter metrics are part of the contract")
    ev = PrivacyEvaluator(demo_data["leaky"].head(300), demo_data["original"].head(300), demo_metadata,
                          selected_metrics=["anonymeter"], control_data=demo_data["control"].head(300))
    res = ev.evaluate()["anonymeter"]
    assert {"risk_score", "risk_level", "explanation"} <= set(res["overall_risk"])
    uni = res["singling_out_univariate"]
    assert {"attack_rate", "baseline_rate", "control_rate", "risk", "error", "ci"} <= set(uni)


def test_privacy_evaluator_bad_args(demo_data):
    with pytest.raises(ConfigError, match="unknown SynEval privacy metric"):
        PrivacyEvaluator(demo_data["safe"], demo_data["original"], {}, selected_metrics=["utility"])
    with pytest.raises(ConfigError, match="device"):
        PrivacyEvaluator(demo_data["safe"], demo_data["original"], {}, device="tpu")


def test_privacy_evaluator_text_privacy_keys(shared_data):
    reviews = pd.read_csv(shared_data / "fine_foods_reviews_train.csv")
    ori = reviews.iloc[:80].reset_index(drop=True)
    syn = pd.concat([reviews.iloc[:40], reviews.iloc[200:240]]).reset_index(drop=True)
    md = {"columns": {"product": {"sdtype": "categorical"}, "review": {"sdtype": "text"},
                      "score": {"sdtype": "categorical"}}}
    res = PrivacyEvaluator(syn, ori, md, selected_metrics=["text_privacy"]).evaluate()
    for key, name in (("named_entities", "text_entities"), ("nominal_mentions", "text_nominals"),
                      ("stylistic_outliers", "text_style_outliers")):
        if not is_registered(name):
            assert res["skipped_metrics"][name] == "not available in this installation"
            continue
        block = res[key]
        assert {"original", "synthetic", "ci", "baseline", "synthguard"} <= set(block)
        assert ("overlap" in block) or ("comparison" in block)
    if is_registered("text_entities"):
        assert 0 <= res["named_entities"]["overlap"]["overlap_percentage"] <= 100
