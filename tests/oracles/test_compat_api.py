"""The facades' API against the installed reference libraries (test-only imports): names, argument
names and order, defaults and attributes; plus behaviour anonymeter's and SDMetrics' own tests do not
cover (queries on awkward column names, missing values, caller frames left untouched)."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest

from synthguard.compat import anonymeter as am
from synthguard.compat.sdmetrics import single_table as st
from synthguard.compat.sdmetrics.reports import single_table as rp

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

# documented differences in defaults (docs/compat.md)
ANON_DEFAULTS = {("InferenceEvaluator", "regression"): (False, None)}


def _params(fn):
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values() if p.name not in ("self", "cls")]


@pytest.mark.oracle("anonymeter")
@pytest.mark.parametrize("cls", ["SinglingOutEvaluator", "LinkabilityEvaluator", "InferenceEvaluator"])
def test_anonymeter_signatures(cls):
    ref_mod = pytest.importorskip("anonymeter.evaluators")
    ref, mine = getattr(ref_mod, cls), getattr(am, cls)
    for meth in ("__init__", "evaluate", "results", "risk"):
        ref_p = dict(_params(getattr(ref, meth)))
        mine_p = _params(getattr(mine, meth))
        names = [n for n, _ in mine_p]
        # every anonymeter argument is accepted, in anonymeter's order (the 1.1.0 inference_model is not)
        common = [n for n in ref_p if n in names]
        assert common == [n for n in names if n in ref_p], (cls, meth)
        missing = [n for n in ref_p if n not in names]
        assert missing in ([], ["inference_model"]), (cls, meth, missing)
        for n, d in mine_p:
            if n in ref_p:
                want = ANON_DEFAULTS.get((cls, n), (ref_p[n], ref_p[n]))[1]
                assert d == want, (cls, meth, n, d, ref_p[n])


SD = ["CategoricalCAP", "CategoricalZeroCAP", "CategoricalGeneralizedCAP", "DisclosureProtection",
      "DisclosureProtectionEstimate", "DCRBaselineProtection", "DCROverfittingProtection", "NewRowSynthesis"]


@pytest.mark.oracle("sdmetrics")
@pytest.mark.parametrize("cls", SD)
def test_sdmetrics_signatures_and_attributes(cls):
    ref_mod = pytest.importorskip("sdmetrics.single_table")
    ref, mine = getattr(ref_mod, cls), getattr(st, cls)
    assert mine.name == ref.name
    assert mine.goal.name == ref.goal.name
    assert float(mine.min_value) == float(ref.min_value) and float(mine.max_value) == float(ref.max_value)
    for meth in ("compute", "compute_breakdown"):
        ref_p = _params(getattr(ref, meth))
        mine_p = _params(getattr(mine, meth))
        # SDMetrics' arguments in its order (CAP's compute_breakdown is the base one, (real_data,
        # synthetic_data, metadata, table_name); the facade accepts the CAP arguments after them)
        assert [n for n, _ in mine_p][:len(ref_p)] == [n for n, _ in ref_p], (cls, meth)
        for (n, d), (_, rd) in zip(mine_p[:len(ref_p)], ref_p, strict=True):
            if rd is not inspect.Parameter.empty:
                assert d == rd, (cls, meth, n)
    assert mine.normalize(0.25) == ref.normalize(0.25)


@pytest.mark.oracle("sdmetrics")
def test_sdmetrics_report_api():
    ref_mod = pytest.importorskip("sdmetrics.reports.single_table")
    for cls in ("QualityReport", "DiagnosticReport"):
        assert [n for n, _ in _params(getattr(rp, cls).generate)] == \
            [n for n, _ in _params(getattr(ref_mod, cls).generate) if n != "constraints"]
        rep = getattr(rp, cls)()
        with pytest.raises(ValueError):
            rep.get_score()


# ------------------------------------------------------------------------------------------ behaviour
def _frames(n=300, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age (years)": rng.integers(18, 90, n).astype(float),
        "hrs-work": rng.normal(40, 10, n).round(1),
        "job title": rng.choice(["nurse", "o'neil & co", "teacher", "dev"], n),
        "flag": rng.random(n) < 0.3,
    })
    df.loc[rng.random(n) < 0.05, "hrs-work"] = np.nan
    return df


@pytest.mark.parametrize("mode", ["univariate", "multivariate"])
def test_queries_select_the_row_they_claim(mode):
    ori = _frames(300, 0)
    syn = pd.concat([ori.iloc[:150], _frames(150, 1)], ignore_index=True)
    before = ori.copy(), syn.copy()
    ev = am.SinglingOutEvaluator(ori, syn, n_attacks=100, n_cols=2).evaluate(mode=mode)
    qs = ev.queries()
    assert len(qs) > 10
    for q in qs:
        assert len(ori.query(q)) == 1, q
        assert len(syn.query(q)) == 1, q
    pd.testing.assert_frame_equal(ori, before[0])
    pd.testing.assert_frame_equal(syn, before[1])
    assert ev.queries(baseline=True) == []


def test_results_shape_and_errors():
    ori, ctl = _frames(300, 0), _frames(300, 2)
    syn = ori.copy()
    for ev in (am.SinglingOutEvaluator(ori, syn, control=ctl, n_attacks=50),
               am.LinkabilityEvaluator(ori, syn, aux_cols=(["age (years)"], ["hrs-work", "job title"]),
                                       control=ctl, n_attacks=50),
               am.InferenceEvaluator(ori, syn, aux_cols=["age (years)", "hrs-work"], secret="job title",
                                     control=ctl, n_attacks=50)):
        with pytest.raises(RuntimeError):
            ev.risk()
        with pytest.raises(RuntimeError):
            ev.results()
        ev.evaluate()
        res = ev.results(confidence_level=0.9)
        for r in (res.attack_rate, res.baseline_rate, res.control_rate):
            assert isinstance(r, am.SuccessRate) and 0 <= r.value <= 1 and r.error >= 0
        risk = ev.risk()
        assert isinstance(risk, am.PrivacyRisk) and 0 <= risk.ci[0] <= risk.value <= risk.ci[1] <= 1
        assert ev.risk(baseline=True, confidence_level=0.9) == res.baseline_rate.to_risk()


def test_mode_and_secret_errors():
    ori = _frames(50)
    with pytest.raises(ValueError):
        am.SinglingOutEvaluator(ori, ori).evaluate(mode="bivariate")
    with pytest.raises(ValueError):
        am.InferenceEvaluator(ori, ori, aux_cols=["flag"], secret=["job title"])


def test_n_attacks_none_is_every_record():
    ori = _frames(120, 0)
    ev = am.LinkabilityEvaluator(ori, ori, aux_cols=(["age (years)"], ["job title"]), n_attacks=None).evaluate()
    assert ev.results().n_attacks_ori == 120
    ev = am.InferenceEvaluator(ori, ori, aux_cols=["age (years)"], secret="job title", n_attacks=None).evaluate()
    assert ev.results().n_attacks_ori == 120


def test_linkability_rescoring_matches_a_fresh_run():
    ori, ctl = _frames(200, 0), _frames(200, 3)
    syn = _frames(200, 4)
    aux = (["age (years)", "flag"], ["hrs-work", "job title"])
    big = am.LinkabilityEvaluator(ori, syn, aux_cols=aux, control=ctl, n_attacks=100, n_neighbors=5).evaluate()
    small = am.LinkabilityEvaluator(ori, syn, aux_cols=aux, control=ctl, n_attacks=100, n_neighbors=2).evaluate()
    assert big.risk(n_neighbors=2) == small.risk()
    with pytest.raises(ValueError):
        big.risk(n_neighbors=6)


@pytest.mark.oracle("anonymeter")
def test_evaluation_results_matches_anonymeter_formula():
    ref = pytest.importorskip("anonymeter.stats.confidence")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args in ((500, 40, 5, 12), ((400, 500, 300), 40, 5, 12.5), (100, 3, 7, None)):
            for cl in (0.5, 0.95, 0.99):
                a = ref.EvaluationResults(*args, confidence_level=cl)
                b = am.EvaluationResults(*args, confidence_level=cl)
                for key in ("attack_rate", "baseline_rate", "control_rate"):
                    ra, rb = getattr(a, key), getattr(b, key)
                    assert (ra is None) == (rb is None)
                    if ra is not None:
                        assert rb.value == pytest.approx(ra.value, abs=1e-12)
                        assert rb.error == pytest.approx(ra.error, abs=1e-12)
                for base in (False, True):
                    assert b.risk(baseline=base).value == pytest.approx(a.risk(baseline=base).value, abs=1e-12)
                    np.testing.assert_allclose(b.risk(baseline=base).ci, a.risk(baseline=base).ci, atol=1e-12)


def test_report_save_load_and_details_errors(tmp_path):
    from synthguard.compat.sdmetrics.reports import QualityReport

    real, syn = _frames(120, 0), _frames(120, 1)
    meta = {"columns": {"age (years)": {"sdtype": "numerical"}, "hrs-work": {"sdtype": "numerical"},
                        "job title": {"sdtype": "categorical"}, "flag": {"sdtype": "boolean"}}}
    rep = QualityReport()
    rep.generate(real, syn, meta, verbose=False)
    rep.save(tmp_path / "r.pkl")
    back = QualityReport.load(tmp_path / "r.pkl")
    assert back.get_score() == rep.get_score()
    pd.testing.assert_frame_equal(back.get_details("Column Shapes"), rep.get_details("Column Shapes"))
    assert list(rep.get_details("Column Shapes")["Column"]) == list(meta["columns"])
    with pytest.raises(ValueError):
        rep.get_details("Data Validity")
    with pytest.raises(NotImplementedError):
        rep.get_visualization("Column Shapes")


def test_cap_without_overlapping_key_is_nan():
    """sdv-dev/SDMetrics issue #692's example: no real key occurs in the synthetic data -> NaN, not 0."""
    real = pd.DataFrame({"col_A": ["a", "b"], "col_B": ["yes", "yes"]})
    synthetic = pd.DataFrame({"col_A": ["x", "x"], "col_B": ["yes", "yes"]})
    assert np.isnan(st.CategoricalCAP.compute(real, synthetic, key_fields=["col_A"], sensitive_fields=["col_B"]))
