"""anonymeter's own evaluator-level tests, run against ``synthguard.compat.anonymeter``.

Ported from statice/anonymeter (https://github.com/statice/anonymeter, BSD 3-Clause Clear License,
Copyright (c) 2022 Anonos IP LLC): tests/test_singling_out_evaluator.py, tests/test_linkability_evaluator.py
and tests/test_inference_evaluator.py, with the ``get_adult`` fixture of tests/fixtures.py reading the
first rows of its adults_ori.csv / adults_syn.csv (copied to tests/oracles/data/). Each test keeps its
inputs and assertions; only the import differs. Tests of private helpers (query builders, the
``LinkabilityIndexes`` class, ``evaluate_inference_guesses``, the probability integral) are not
evaluator-level and are not ported. ``test_so_general`` checks the queries with ``DataFrame.query``, as
anonymeter 1.0.0's version of the test did (1.1.0 returns polars expressions and uses ``.filter``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthguard.compat.anonymeter import (
    InferenceEvaluator,
    LinkabilityEvaluator,
    SinglingOutEvaluator,
)

DATA = Path(__file__).parent / "data"

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def get_adult(which: str, deduplicate_on: list[str] | None = None, n_samples: int | None = None) -> pd.DataFrame:
    if which not in ("ori", "syn"):
        raise ValueError(f"Invalid value {which} for parameter `which`. Available are: 'ori' or 'syn'.")
    if isinstance(deduplicate_on, int):  # the older fixture's signature: get_adult(which, n_samples)
        deduplicate_on, n_samples = None, deduplicate_on
    samples = pd.read_csv(DATA / f"adults_{which}_head.csv")
    if deduplicate_on:
        samples = samples.drop_duplicates(subset=deduplicate_on)
    return samples.iloc[:n_samples]


# ------------------------------------------------------------------------------------------ singling out
@pytest.mark.parametrize("mode", ["univariate", "multivariate"])
def test_so_general(mode):
    ori = get_adult("ori", n_samples=10)
    syn = get_adult("syn", n_samples=10)
    soe = SinglingOutEvaluator(ori=ori, syn=syn, n_attacks=5).evaluate(mode=mode)

    for q in soe.queries():
        assert len(syn.query(q)) == 1
        assert len(ori.query(q)) == 1


@pytest.mark.parametrize("confidence_level", [0.5, 0.68, 0.95, 0.99])
@pytest.mark.parametrize("mode", ["univariate", "multivariate"])
def test_singling_out_risk_estimate(confidence_level, mode):
    ori = get_adult("ori", 10)
    soe = SinglingOutEvaluator(ori=ori, syn=ori, n_attacks=5)
    soe.evaluate(mode=mode)
    _, ci = soe.risk(confidence_level=confidence_level)
    np.testing.assert_allclose(ci[1], 1.0)


def test_so_evaluator_not_evaluated():
    soe = SinglingOutEvaluator(ori=pd.DataFrame(), syn=pd.DataFrame())
    with pytest.raises(RuntimeError):
        soe.risk()


@pytest.mark.parametrize("max_attempts", [1, 2, 3])
def test_so_evaluator_max_attempts(max_attempts: int) -> None:
    ori = get_adult("ori", 10)
    soe = SinglingOutEvaluator(ori=ori, syn=ori, n_attacks=10, max_attempts=max_attempts)
    soe.evaluate(mode="multivariate")

    assert len(soe.queries()) <= max_attempts


# ------------------------------------------------------------------------------------------ linkability
rng = np.random.default_rng(seed=42)


@pytest.mark.parametrize("n_attacks", [4, None])
@pytest.mark.parametrize(
    "n_neighbors, confidence_level, expected_risk, expected_ci",
    [
        (1, 0, 0.25, (0.25, 0.25)),
        (2, 0, 1, (1.0, 1.0)),
        (3, 0, 1, (1.0, 1.0)),
        (4, 0, 1, (1.0, 1.0)),
        (1, 0.95, 0.3725, (0.045587, 0.699358)),
        (2, 0.95, 0.7551, (0.5102, 1.0)),
    ],
)
def test_linkability_evaluator(n_neighbors, confidence_level, expected_risk, expected_ci, n_attacks):
    ori = pd.DataFrame({"col0": [0, 0, 4, 0], "col1": [0, 1, 9, 4]})
    syn = pd.DataFrame({"col0": [0, 1, 4, 9], "col1": [0, 1, 4, 9]})

    evaluator = LinkabilityEvaluator(
        ori=ori, syn=syn, n_attacks=n_attacks, n_neighbors=n_neighbors, aux_cols=(["col0"], ["col1"])
    )
    evaluator.evaluate(n_jobs=1)
    risk, ci = evaluator.risk(confidence_level=confidence_level)
    np.testing.assert_allclose(risk, expected_risk, atol=1e-4)
    np.testing.assert_allclose(ci, expected_ci, atol=1e-4)


@pytest.mark.parametrize("n_attacks", [4, None])
@pytest.mark.parametrize(
    "n_neighbors, confidence_level, expected_risk, expected_ci",
    [
        (1, 0, 0.25, (0.25, 0.25)),
        (2, 0, 1, (1.0, 1.0)),
        (3, 0, 1, (1.0, 1.0)),
        (4, 0, 1, (1.0, 1.0)),
        (1, 0.95, 0.3725, (0.045587, 0.699358)),
        (2, 0.95, 0.7551, (0.5102, 1.0)),
    ],
)
def test_linkability_evaluator_neighbors(n_neighbors, confidence_level, expected_risk, expected_ci, n_attacks):
    ori = pd.DataFrame({"col0": [0, 0, 4, 0], "col1": [0, 1, 9, 4]})
    syn = pd.DataFrame({"col0": [0, 1, 4, 9], "col1": [0, 1, 4, 9]})

    evaluator = LinkabilityEvaluator(
        ori=ori, syn=syn, n_attacks=n_attacks, n_neighbors=4, aux_cols=(["col0"], ["col1"])
    )
    evaluator.evaluate(n_jobs=1)
    risk, ci = evaluator.risk(confidence_level=confidence_level, n_neighbors=n_neighbors)
    np.testing.assert_allclose(risk, expected_risk, atol=1e-4)
    np.testing.assert_allclose(ci, expected_ci, atol=1e-4)


@pytest.mark.parametrize("n_neighbors, fails", [(1, False), (2, False), (3, False), (4, False), (5, True), (45, True)])
def test_linkability_evaluator_neighbors_fails(n_neighbors, fails):
    ori = pd.DataFrame({"col0": [0, 0, 4, 0], "col1": [0, 1, 9, 4]})
    syn = pd.DataFrame({"col0": [0, 1, 4, 9], "col1": [0, 1, 4, 9]})

    evaluator = LinkabilityEvaluator(ori=ori, syn=syn, n_attacks=4, n_neighbors=4, aux_cols=(["col0"], ["col1"]))
    evaluator.evaluate(n_jobs=1)

    if fails:
        with pytest.raises(ValueError):
            evaluator.risk(n_neighbors=n_neighbors)
    else:
        evaluator.risk(n_neighbors=n_neighbors)


@pytest.mark.parametrize("n_neighbors, expected_risk", [(1, 0.25), (2, 5 / 6), (3, 1), (4, 1)])
def test_baseline(n_neighbors, expected_risk):
    # note that for the baseline attack, it does not really matter
    # what's inside the synthetic or the original dataframe.
    ori = pd.DataFrame(rng.choice(["a", "b"], size=(400, 2)), columns=["c0", "c1"])
    syn = pd.DataFrame([["a", "a"], ["b", "b"], ["a", "a"], ["a", "a"]], columns=["c0", "c1"])
    evaluator = LinkabilityEvaluator(ori=ori, syn=syn, n_attacks=None, n_neighbors=n_neighbors, aux_cols=("c0", "c1"))
    evaluator.evaluate(n_jobs=1)
    baseline_risk, _ = evaluator.risk(confidence_level=0.95, baseline=True)
    np.testing.assert_allclose(baseline_risk, expected_risk, atol=5e-2)


@pytest.mark.parametrize("confidence_level", [0.5, 0.68, 0.95, 0.99])
def test_linkability_risk(confidence_level):
    ori = get_adult("ori", n_samples=10)
    col_sample = rng.choice(ori.columns, size=4, replace=False)

    evaluator = LinkabilityEvaluator(
        ori=ori, syn=ori, n_attacks=10, n_neighbors=5, aux_cols=(col_sample[:2], col_sample[2:])
    )
    evaluator.evaluate(n_jobs=1)
    risk, ci = evaluator.risk(confidence_level=confidence_level)
    np.testing.assert_allclose(ci[1], 1.0)


def test_linkability_evaluator_not_evaluated():
    evaluator = LinkabilityEvaluator(ori=pd.DataFrame(), syn=pd.DataFrame(), aux_cols=[])
    with pytest.raises(RuntimeError):
        evaluator.risk()


# ------------------------------------------------------------------------------------------ inference
@pytest.mark.parametrize(
    "ori, syn, expected",
    [
        ([["a", "b"], ["c", "d"]], [["a", "b"], ["c", "d"]], 1.0),
        ([["a", "b"], ["c", "d"]], [["a", "b"], ["c", "e"]], 0.5),
        ([["a", "b"], ["c", "d"]], [["a", "h"], ["c", "g"]], 0.0),
    ],
)
def test_inference_evaluator_rates(ori: Iterable, syn: Iterable, expected: float):
    # created a dataframe from ori and name columns c0 and c1
    ori = pd.DataFrame(ori, columns=pd.Index(["c0", "c1"]))
    syn = pd.DataFrame(syn, columns=pd.Index(["c0", "c1"]))
    evaluator = InferenceEvaluator(
        ori=ori,
        syn=syn,
        control=ori,
        aux_cols=["c0"],
        secret="c1",
        n_attacks=2,
    ).evaluate(n_jobs=1)
    results = evaluator.results(confidence_level=0)

    np.testing.assert_equal(results.attack_rate, (expected, 0))
    np.testing.assert_equal(results.control_rate, (expected, 0))


@pytest.mark.parametrize(
    "aux_cols",
    [
        ["type_employer", "capital_loss", "hr_per_week", "age"],
        ["education_num", "marital", "capital_loss"],
        ["age", "type_employer", "race"],
    ],
)
@pytest.mark.parametrize("secret", ["education", "marital", "capital_gain"])
def test_inference_evaluator_leaks(aux_cols, secret):
    ori = get_adult("ori", deduplicate_on=aux_cols, n_samples=10)
    evaluator = InferenceEvaluator(ori=ori, syn=ori, control=ori, aux_cols=aux_cols, secret=secret, n_attacks=ori.shape[0])
    evaluator.evaluate(n_jobs=1)
    results = evaluator.results(confidence_level=0)

    np.testing.assert_equal(results.attack_rate, (1, 0))
    np.testing.assert_equal(results.control_rate, (1, 0))


def test_inference_evaluator_not_evaluated():
    df = get_adult("ori", n_samples=10)
    evaluator = InferenceEvaluator(
        ori=df,
        syn=df,
        control=df,
        aux_cols=["education_num", "marital", "capital_loss"],
        secret="age",
    )
    with pytest.raises(RuntimeError):
        evaluator.risk()


@pytest.mark.parametrize(
    "aux_cols",
    [
        ["type_employer", "capital_loss", "hr_per_week", "age"],
        ["education_num", "marital", "capital_loss"],
    ],
)
@pytest.mark.parametrize("secret", ["education", "marital"])
def test_inference_evaluator_group_wise_rates(aux_cols, secret):
    ori = get_adult("ori", deduplicate_on=aux_cols, n_samples=10)
    evaluator = InferenceEvaluator(ori=ori, syn=ori, control=ori, aux_cols=aux_cols, secret=secret, n_attacks=ori.shape[0])
    evaluator.evaluate(n_jobs=1)

    group_wise = evaluator.risk_for_groups(confidence_level=0)

    for _, results in group_wise.items():
        np.testing.assert_equal(results.attack_rate, (1, 0))
        np.testing.assert_equal(results.control_rate, (1, 0))


@pytest.mark.parametrize(
    "aux_cols",
    [
        ["type_employer", "capital_loss", "hr_per_week", "age"],
        ["education_num", "marital", "capital_loss"],
    ],
)
@pytest.mark.parametrize("secret", ["education", "marital"])
def test_inference_evaluator_group_wise_risks(aux_cols, secret):
    ori = get_adult("ori", deduplicate_on=aux_cols, n_samples=10)
    evaluator = InferenceEvaluator(ori=ori, syn=ori, control=ori, aux_cols=aux_cols, secret=secret, n_attacks=ori.shape[0])
    evaluator.evaluate(n_jobs=1)
    main_risk = evaluator.risk(confidence_level=0.95)

    group_wise = evaluator.risk_for_groups(confidence_level=0.95)

    sum_risks = 0.0
    for _, results in group_wise.items():
        risk = results.risk().value
        np.testing.assert_equal(risk, 0)

        sum_risks += risk

    np.testing.assert_allclose(sum_risks, main_risk.value)
