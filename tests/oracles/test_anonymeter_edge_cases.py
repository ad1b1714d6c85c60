"""``synthguard.compat.anonymeter`` against anonymeter 1.1.0 on edge-case inputs, differentially.

The same frames go to anonymeter 1.1.0 (the test-only oracle) and to the facade, and the answers
are compared. anonymeter draws its targets, queries and baseline guesses at random and breaks
neighbour ties with an unstable sort, so each comparison uses inputs where the answer is forced:

* every original row is a target (``n_attacks`` = the rows, or ``None``), neighbour distances are
  tie-free (distinct numbers) or the release holds the original itself (distance 0 to the row);
  then the success counts, rates, risks and intervals agree to 1e-12;
* the linkability baseline, which is random by design, is compared with its closed form
  ``1 - C(n-k, k) / C(n, k)`` (two random k-subsets of the n synthetic rows intersect) within 4.5
  binomial standard deviations (a false alarm about once in 150,000 checks; anonymeter is
  unseeded, synthguard seeded), and exactly where the closed form is 1;
* errors: the same exception type on the same misuse.

Inputs are built here (:func:`.oracle_inputs.edge_frame`) or drawn from the real tables of
``../shared/data`` (acs12, anes96): tiny tables, fewer original than synthetic rows, a single
column, categorical-only and numeric-only tables, missing values, all-equal columns, datetimes.
The documented differences (docs/compat.md A1-A13) are avoided by construction; A2 and A9 show
where the inputs would make them bite.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthguard.compat import anonymeter as facade

from .differential import outcome
from .oracle_inputs import edge_frame, shared_rows

pytestmark = [pytest.mark.oracle("anonymeter"), pytest.mark.filterwarnings("ignore::UserWarning")]

TOL = 1e-12


def _oracle() -> Any:
    import anonymeter.evaluators as evaluators  # the package's own import order (avoids its import cycle)

    return evaluators


def _both(cls: str, *args: Any, **kwargs: Any) -> list[Any]:
    """The evaluator ``cls`` built with the same arguments from anonymeter and from the facade."""
    return [getattr(lib, cls)(*args, **kwargs) for lib in (_oracle(), facade)]


def _quiet(fn: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _same_risk(a: Any, b: Any) -> None:
    assert a.value == pytest.approx(b.value, abs=TOL)
    assert tuple(a.ci) == pytest.approx(tuple(b.ci), abs=TOL)


def _same_rate(a: Any, b: Any) -> None:
    assert tuple(a) == pytest.approx(tuple(b), abs=TOL)


# ------------------------------------------------------------------------------------------ linkability
LINK_SIZES = [(5, 5), (6, 4), (3, 7), (9, 9)]  # equal, fewer synthetic, fewer original, larger


def _link_frames(n_ori: int, n_syn: int, seed: int, missing: float = 0.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Numeric halves (tie-free distances); two original rows copied into the release."""
    ori = edge_frame(n_ori, seed, numeric=2, categorical=0, missing=missing)
    syn = edge_frame(n_syn, seed + 100, numeric=2, categorical=0, missing=missing)
    syn.iloc[:2] = ori.iloc[:2].to_numpy()
    return ori, syn


@pytest.mark.parametrize("n_ori,n_syn", LINK_SIZES)
@pytest.mark.parametrize("all_rows", [None, "count"], ids=["n_attacks-None", "n_attacks-rows"])
def test_linkability_risk_equals_anonymeter_for_every_k(n_ori, n_syn, all_rows):
    ori, syn = _link_frames(n_ori, n_syn, seed=n_ori * 10 + n_syn)
    n_attacks = None if all_rows is None else n_ori
    for k in range(1, min(n_syn, 4) + 1):
        ref, got = _both("LinkabilityEvaluator", ori=ori, syn=syn, aux_cols=(["x0"], ["x1"]),
                         n_attacks=n_attacks, n_neighbors=k)
        for e in (ref, got):
            _quiet(e.evaluate, n_jobs=1)
        for level in (0.0, 0.5, 0.95):
            _same_risk(ref.risk(confidence_level=level), got.risk(confidence_level=level))
        _same_rate(ref.results(confidence_level=0.95).attack_rate, got.results(confidence_level=0.95).attack_rate)


@pytest.mark.parametrize("n_ori,n_syn", LINK_SIZES[:2])
def test_linkability_rescored_with_fewer_neighbours_equals_anonymeter(n_ori, n_syn):
    """Evaluated once with the largest k, then scored for each smaller k (``risk(n_neighbors=k)``)."""
    ori, syn = _link_frames(n_ori, n_syn, seed=7)
    k_max = min(n_syn, 4)
    ref, got = _both("LinkabilityEvaluator", ori=ori, syn=syn, aux_cols=(["x0"], ["x1"]), n_attacks=None,
                     n_neighbors=k_max)
    for e in (ref, got):
        _quiet(e.evaluate, n_jobs=1)
    for k in range(1, k_max + 1):
        for level in (0.0, 0.95):
            _same_risk(ref.risk(confidence_level=level, n_neighbors=k),
                       got.risk(confidence_level=level, n_neighbors=k))


def test_linkability_with_missing_values_and_a_category_equals_anonymeter():
    """Missing numbers (anonymeter's NaN distance sorts last) next to a categorical column."""
    ori = edge_frame(12, 3, numeric=2, categorical=1, missing=0.15)
    syn = edge_frame(12, 4, numeric=2, categorical=1, missing=0.15)
    syn.iloc[:4] = ori.iloc[:4].to_numpy()
    for k in (1, 2):
        ref, got = _both("LinkabilityEvaluator", ori=ori, syn=syn, aux_cols=(["x0", "c0"], ["x1"]),
                         n_attacks=None, n_neighbors=k)
        for e in (ref, got):
            _quiet(e.evaluate, n_jobs=1)
        _same_risk(ref.risk(confidence_level=0.0), got.risk(confidence_level=0.0))


@pytest.mark.parametrize("k", [1, 3, 4, 5, 9])
def test_linkability_neighbours_beyond_the_evaluated_number_fail_like_anonymeter(k):
    ori, syn = _link_frames(6, 6, seed=11)
    ref, got = _both("LinkabilityEvaluator", ori=ori, syn=syn, aux_cols=(["x0"], ["x1"]), n_attacks=6,
                     n_neighbors=4)
    for e in (ref, got):
        _quiet(e.evaluate, n_jobs=1)
    r, g = outcome(lambda: ref.risk(n_neighbors=k)), outcome(lambda: got.risk(n_neighbors=k))
    assert (g.get("error") or ("",))[0] == (r.get("error") or ("",))[0]
    assert ("error" in r) == (k > 4)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_linkability_baseline_matches_its_closed_form_in_both(k):
    """The naive attacker picks k random synthetic rows for each half: it links a target when the
    two picks intersect, whatever the data. 300 targets, 5 synthetic rows."""
    rng = np.random.default_rng(21)
    ori = pd.DataFrame({"u": rng.choice(["one", "two"], 300), "v": rng.choice(["one", "two"], 300)})
    syn = pd.DataFrame({"u": ["one", "two", "one", "two", "one"], "v": ["two", "two", "one", "one", "one"]})
    n = len(syn)
    expected = 1.0 - math.comb(n - k, k) / math.comb(n, k)
    sd = math.sqrt(expected * (1 - expected) / len(ori))
    for e in _both("LinkabilityEvaluator", ori=ori, syn=syn, aux_cols=("u", "v"), n_attacks=None, n_neighbors=k):
        _quiet(e.evaluate, n_jobs=1)
        res = e.results(confidence_level=0.95)
        assert res.n_attacks_baseline == len(ori)
        if expected == 1.0:
            assert res.n_baseline == len(ori)
        else:
            assert abs(res.n_baseline / len(ori) - expected) <= 4.5 * sd, (type(e).__module__, res.n_baseline)


@pytest.mark.parametrize("level", [0.5, 0.68, 0.95, 0.99])
def test_linkability_of_the_original_itself_is_forced_in_both(shared_data, level):
    """Release = original (anes96 rows): every half finds its own row at distance 0."""
    ori = shared_rows(shared_data, "anes96.csv", 15, seed=2, dedup_on=["popul", "TVnews"])
    ref, got = _both("LinkabilityEvaluator", ori=ori, syn=ori, aux_cols=(["popul", "TVnews"], ["age", "income"]),
                     n_attacks=None, n_neighbors=3)
    for e in (ref, got):
        _quiet(e.evaluate, n_jobs=1)
    _same_risk(ref.risk(confidence_level=level), got.risk(confidence_level=level))
    assert ref.results(confidence_level=level).attack_rate.value == pytest.approx(
        got.results(confidence_level=level).attack_rate.value, abs=TOL)
    assert got.risk(confidence_level=level).ci[1] == pytest.approx(1.0)


# ------------------------------------------------------------------------------------------ inference
def _inference(ori: pd.DataFrame, syn: pd.DataFrame, aux: list[str], secret: str, **kw: Any) -> list[Any]:
    out = _both("InferenceEvaluator", ori=ori, syn=syn, control=kw.pop("control", ori), aux_cols=aux,
                secret=secret, n_attacks=kw.pop("n_attacks", len(ori)), **kw)
    for e in out:
        _quiet(e.evaluate, n_jobs=1)
    return out


@pytest.mark.parametrize("changed,expected", [(0, 1.0), (1, 2 / 3), (3, 0.0)],
                         ids=["release-equals-original", "one-secret-changed", "every-secret-changed"])
def test_inference_rates_on_three_rows_are_forced(changed, expected):
    """Three people, each alone on the known column: the guess is the matching synthetic row's
    secret, so the success rate is the share of secrets the release kept."""
    ori = pd.DataFrame({"city": ["oslo", "lima", "pune"], "job": ["baker", "nurse", "pilot"]})
    syn = ori.copy()
    syn.loc[: changed - 1, "job"] = ["miner", "tutor", "clerk"][:changed]
    ref, got = _inference(ori, syn, ["city"], "job")
    r, g = ref.results(confidence_level=0), got.results(confidence_level=0)
    assert r.attack_rate.value == pytest.approx(expected, abs=TOL)
    _same_rate(r.attack_rate, g.attack_rate)
    _same_rate(r.control_rate, g.control_rate)


@pytest.mark.parametrize("aux,secret", [
    (["income", "age", "race"], "edu"),                 # categorical secret, numbers known
    (["age", "hrs_work", "gender"], "income"),          # numeric secret with missing values
    (["income", "gender", "age"], "employment"),        # categorical secret with missing values
    (["edu", "married", "age", "birth_qrtr"], "lang"),  # mostly categorical known columns
])
def test_inference_on_the_original_itself_is_forced(shared_data, aux, secret):
    """Release = control = original (acs12 rows, distinct on the known columns): every guess is the
    target's own secret (missing included), in both libraries."""
    ori = shared_rows(shared_data, "acs12.csv", 12, seed=2, dedup_on=aux)
    ref, got = _inference(ori, ori, aux, secret)
    r, g = ref.results(confidence_level=0), got.results(confidence_level=0)
    assert tuple(r.attack_rate) == (1.0, 0.0) == tuple(g.attack_rate)
    _same_rate(r.control_rate, g.control_rate)
    _same_risk(ref.risk(confidence_level=0.95), got.risk(confidence_level=0.95))


@pytest.mark.parametrize("secret", ["vote", "educ"])
def test_inference_risk_per_secret_group_equals_anonymeter(shared_data, secret):
    """Each group of people sharing a secret value (anes96 rows, release = control = original):
    the groups, their rates and their (zero) risks agree; the group risks add up to the whole."""
    aux = ["popul", "age", "TVnews"]
    ori = shared_rows(shared_data, "anes96.csv", 14, seed=5, dedup_on=aux)
    ref, got = _inference(ori, ori, aux, secret)
    r_groups, g_groups = ref.risk_for_groups(confidence_level=0), got.risk_for_groups(confidence_level=0)
    assert sorted(r_groups) == sorted(g_groups)
    for value, r in r_groups.items():
        _same_rate(r.attack_rate, g_groups[value].attack_rate)
        _same_rate(r.control_rate, g_groups[value].control_rate)
    r95, g95 = ref.risk_for_groups(confidence_level=0.95), got.risk_for_groups(confidence_level=0.95)
    for value, r in r95.items():
        assert r.risk().value == pytest.approx(g95[value].risk().value, abs=TOL) == 0.0
    total = sum(r.risk().value for r in g95.values())
    assert total == pytest.approx(got.risk(confidence_level=0.95).value, abs=TOL)
    assert total == pytest.approx(ref.risk(confidence_level=0.95).value, abs=TOL)


# ------------------------------------------------------------------------------------------ singling out
def _singling_out(ori: pd.DataFrame, mode: str, n_attacks: int, **kw: Any) -> list[Any]:
    out = _both("SinglingOutEvaluator", ori=ori, syn=ori, n_attacks=n_attacks, seed=0, **kw)
    np.random.seed(0)  # noqa: NPY002  (anonymeter draws some of its choices from numpy's global state)
    for e in out:
        _quiet(e.evaluate, mode=mode)
    return out


def _singles_out(query: Any, frame: pd.DataFrame) -> bool:
    """One row selected: a polars expression (anonymeter 1.1.0) or a pandas query (the facade)."""
    if isinstance(query, str):
        return len(frame.query(query)) == 1
    import polars as pl

    return pl.DataFrame(frame).filter(query).height == 1


SO_CASES = {
    # name: (frame builder, modes, n_attacks, n_cols)
    "acs12-mixed-missing": (lambda d: shared_rows(d, "acs12.csv", 10, seed=3), ("univariate", "multivariate"), 5, 3),
    "anes96-numeric-coded": (lambda d: shared_rows(d, "anes96.csv", 10, seed=4), ("univariate", "multivariate"), 5, 3),
    "single-column": (lambda d: pd.DataFrame({"name": ["ida", "lou", "max", "ned", "ona", "pia"]}),
                      ("univariate",), 6, 1),
    "numeric-only": (lambda d: edge_frame(8, 2, numeric=3, categorical=0), ("univariate", "multivariate"), 6, 2),
    "categorical-only-with-constant": (lambda d: edge_frame(5, 5, numeric=0, categorical=0,
                                                            constant=("same", "also")).assign(
        c0=["alder", "birch", "cedar", "daphne", "elm"]), ("univariate", "multivariate"), 5, 2),
    "two-rows": (lambda d: edge_frame(2, 6, numeric=1, categorical=1), ("univariate", "multivariate"), 2, 2),
    "datetime-seconds": (lambda d: edge_frame(6, 7, numeric=0, categorical=1, datetime=1), ("univariate",), 6, 1),
    "missing-values": (lambda d: edge_frame(7, 8, numeric=1, categorical=1, missing=0.3), ("univariate",), 4, 1),
}


@pytest.mark.parametrize("case", list(SO_CASES))
def test_singling_out_of_the_original_itself_is_forced(shared_data, case):
    """Release = original: every query built on a synthetic row singles out that same row of the
    original. Both libraries' queries select exactly one row of each frame; every query succeeds,
    so both rates are n/n and the risks and intervals agree (upper bound 1) at any level."""
    build, modes, n_attacks, n_cols = SO_CASES[case]
    ori = build(shared_data)
    for mode in modes:
        ref, got = _singling_out(ori, mode, n_attacks, n_cols=n_cols)
        for e in (ref, got):
            qs = e.queries()
            assert len(qs) == n_attacks, (case, mode, type(e).__module__, len(qs))
            assert all(_singles_out(q, ori) for q in qs), (case, mode, type(e).__module__)
        for level in (0.5, 0.68, 0.95, 0.99):
            _same_risk(ref.risk(confidence_level=level), got.risk(confidence_level=level))
            _same_rate(ref.results(confidence_level=level).attack_rate,
                       got.results(confidence_level=level).attack_rate)
            assert got.risk(confidence_level=level).ci[1] == pytest.approx(1.0)


@pytest.mark.parametrize("max_attempts", [1, 3, 5])
def test_singling_out_keeps_within_max_attempts_like_anonymeter(shared_data, max_attempts):
    """At most one query per attempt, in both (the counts are random, so only the bound is shared)."""
    ori = shared_rows(shared_data, "acs12.csv", 10, seed=3)
    for e in _singling_out(ori, "multivariate", 10, max_attempts=max_attempts):
        assert len(e.queries()) <= max_attempts


# ------------------------------------------------------------------------------------------ misuse
@pytest.mark.parametrize("cls,kwargs", [
    ("SinglingOutEvaluator", {}),
    ("LinkabilityEvaluator", {"aux_cols": (["x0"], ["c0"])}),
    ("InferenceEvaluator", {"aux_cols": ["x0"], "secret": "c0"}),
])
def test_reading_before_evaluate_raises_like_anonymeter(cls, kwargs):
    frame = edge_frame(6, 9)
    ref, got = _both(cls, ori=frame, syn=frame, **kwargs)
    for method in ("risk", "results"):
        r, g = outcome(getattr(ref, method)), outcome(getattr(got, method))
        assert r["error"][0] == g["error"][0] == "RuntimeError"
