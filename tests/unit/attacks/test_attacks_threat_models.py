"""Threat models and attacks: known answers (Raw leaks, independent marginals do not),
reproducibility, memoisation, labellers, generator-knowledge modes, AIA."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.attacks import (
    AuxiliaryDataKnowledge,
    BlackBoxKnowledge,
    ClosestDistanceAIA,
    ClosestDistanceMIA,
    DensityEstimateMIA,
    ExactDataKnowledge,
    LocalNeighbourhoodAttack,
    NoBoxKnowledge,
    SyntheticPredictorAIA,
    TargetedAIA,
    TargetedMIA,
    UncertainBoxKnowledge,
    select_vulnerable_targets,
)
from synthguard.demo import DEMO_METADATA, make_population
from synthguard.errors import ConfigError
from synthguard.generators import IndependentMarginals, Raw


@pytest.fixture(scope="module")
def pop() -> pd.DataFrame:
    return make_population(1200, seed=3)


def _mia(pop, gen, targets, seed=0, n=200):
    return TargetedMIA(AuxiliaryDataKnowledge(pop, num_training_records=n, seed=seed),
                       BlackBoxKnowledge(gen, n), targets, metadata=DEMO_METADATA, seed=seed)


def test_raw_generator_closest_distance_auc_close_to_one_on_any_target(pop):
    tm = _mia(pop, Raw(), "auto:2")
    ids = []
    for view in tm:
        for dist in ("gower", "hamming"):
            att = ClosestDistanceMIA(dist).train(view, num_samples=30)
            m = view.test(att, num_samples=40).metrics(n_boot=50)
            assert m["auc"] >= 0.95, (view.target_id, dist, m["auc"])
            assert m["accuracy"] >= 0.95
        ids.append(view.target_id)
    # a typical record given by row id leaks just the same
    view = _mia(pop, Raw(), [int(np.setdiff1d(np.arange(50), ids)[0])]).view(0)
    att = ClosestDistanceMIA("gower").train(view, num_samples=30)
    assert view.test(att, num_samples=40).metrics(n_boot=50)["auc"] >= 0.95


def test_independent_marginals_auc_is_one_half_within_its_ci(pop):
    tm = _mia(pop, IndependentMarginals(), [17], n=200)
    view = tm.view(0)
    att = ClosestDistanceMIA("gower").train(view, num_samples=40)
    m = view.test(att, num_samples=80).metrics(n_boot=300)
    lo, hi = m["auc_ci"]
    assert lo <= 0.5 <= hi, m["auc_ci"]


def test_same_seed_same_numbers_and_another_seed_differs(pop):
    def run(seed):
        view = _mia(pop, IndependentMarginals(), [4], seed=seed, n=150).view(0)
        att = DensityEstimateMIA().train(view, num_samples=12)
        return view.test(att, num_samples=12).scores

    a, b, c = run(5), run(5), run(6)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_memoised_samples_do_not_depend_on_the_order_of_requests(pop):
    tm1 = _mia(pop, IndependentMarginals(), [4], n=100)
    tm1.generate_training_samples(3)
    ds1, lab1 = tm1.generate_training_samples(6)
    tm2 = _mia(pop, IndependentMarginals(), [4], n=100)
    ds2, lab2 = tm2.generate_training_samples(6)
    assert np.array_equal(lab1, lab2)
    for a, b in zip(ds1, ds2, strict=True):
        pd.testing.assert_frame_equal(a, b)
    again, _ = tm2.generate_training_samples(6)
    assert all(x is y for x, y in zip(again, ds2, strict=True))  # memoised, not regenerated


def test_mia_labeller_makes_complementary_pairs_differing_only_by_targets(pop):
    tm = _mia(pop, Raw(), [1, 2, 3], n=100)
    kn, lab = tm.data_knowledge, tm.labeller
    for j in range(3):
        r0, l0 = lab.sample(kn, tm.targets, True, 2 * j, 0, "train")
        r1, l1 = lab.sample(kn, tm.targets, True, 2 * j + 1, 0, "train")
        assert np.array_equal(l0, 1 - l1)
        base0 = np.setdiff1d(r0, tm.targets)
        base1 = np.setdiff1d(r1, tm.targets)
        assert np.array_equal(base0, base1)
        assert set(np.intersect1d(r0, tm.targets)) == set(tm.targets[l0 == 1])


def test_exact_knowledge_and_no_box_direct_lookup(pop):
    train = pop.iloc[:150]
    tm = TargetedMIA(ExactDataKnowledge(train), NoBoxKnowledge(Raw(), 150), [7], metadata=DEMO_METADATA)
    view = tm.view(0)
    with pytest.raises(ConfigError, match="no-box"):
        ClosestDistanceMIA("hamming").train(view, num_samples=5)
    att = ClosestDistanceMIA("hamming", criterion=("threshold", 0.0)).train(view)
    m = view.test(att, num_samples=20).metrics(n_boot=20)
    assert m["accuracy"] == 1.0 and m["threshold"] == 0.0
    _, labels = view.generate_test_samples(20)
    assert 0 < labels.sum() < 20


def test_uncertain_box_draws_generator_parameters_from_the_prior(pop):
    def factory(kind: str, seed: int = 0):
        return Raw(seed=seed) if kind == "raw" else IndependentMarginals(seed=seed)

    gk = UncertainBoxKnowledge(factory, 100, prior=lambda rng: {"kind": ["raw", "marginals"][
        int(rng.integers(2))]}, final_parameters={"kind": "raw"})
    tm = TargetedMIA(AuxiliaryDataKnowledge(pop, num_training_records=100), gk, [9], metadata=DEMO_METADATA)
    view = tm.view(0)
    att = ClosestDistanceMIA("gower").train(view, num_samples=20)
    assert view.test(att, num_samples=20).metrics(n_boot=20)["auc"] >= 0.9


def test_local_neighbourhood_mia_on_raw(pop):
    view = _mia(pop, Raw(), [11], n=150).view(0)
    att = LocalNeighbourhoodAttack("gower", radius=0.0).train(view, num_samples=20)
    assert view.test(att, num_samples=20).metrics(n_boot=20)["auc"] >= 0.95


def test_aia_known_answers_with_raw(pop):
    tm = TargetedAIA(AuxiliaryDataKnowledge(pop, num_training_records=150), BlackBoxKnowledge(Raw(), 150),
                     [21, 22], "sex", ["F", "M"], metadata=DEMO_METADATA)
    for view in tm:
        att = ClosestDistanceAIA("hamming").train(view, num_samples=20)
        m = view.test(att, num_samples=30).metrics(n_boot=20)
        assert m["auc"] >= 0.95
        assert m["kind"] == "AIA"
        # fixed threshold -0.5 = "pick the closer variant"
        att = ClosestDistanceAIA("hamming", criterion=("threshold", -0.5)).train(view)
        assert view.test(att, num_samples=30).metrics(n_boot=20)["accuracy"] >= 0.9
    view = tm.view(0)
    s = view.test(LocalNeighbourhoodAttack("hamming").train(view, num_samples=10), num_samples=10)
    assert np.isfinite(s.scores).all()
    # a model trained on a copy of the data recalls the target's own value
    s = view.test(SyntheticPredictorAIA().train(view, num_samples=16), num_samples=20)
    assert s.metrics(n_boot=20)["auc"] >= 0.9


def test_replace_target_keeps_sizes_and_aia_pairs_are_complementary(pop):
    tm = TargetedMIA(AuxiliaryDataKnowledge(pop, num_training_records=100), BlackBoxKnowledge(Raw(), 100),
                     [1, 2], replace_target=True, metadata=DEMO_METADATA)
    for i in range(4):
        rows, _ = tm.labeller.sample(tm.data_knowledge, tm.targets, True, i, 0, "train")
        assert rows.size == 100 and np.unique(rows).size == 100
    aia = TargetedAIA(AuxiliaryDataKnowledge(pop, num_training_records=100), BlackBoxKnowledge(Raw(), 100),
                      [1, 2], "sex", ["F", "M"], generate_pairs=True, metadata=DEMO_METADATA)
    ds, labels = aia.generate_training_samples(4)
    assert np.array_equal(labels[0], 1 - labels[1]) and np.array_equal(labels[2], 1 - labels[3])
    real0 = aia.labeller.sample(aia.data_knowledge, aia.targets, True, 0, 0, "train")[0]
    real1 = aia.labeller.sample(aia.data_knowledge, aia.targets, True, 1, 0, "train")[0]
    assert np.array_equal(real0, real1)
    with pytest.raises(ConfigError, match="generate_pairs"):
        TargetedAIA(AuxiliaryDataKnowledge(pop, num_training_records=50), BlackBoxKnowledge(Raw(), 50),
                    [1], "sex", ["F", "M"], distribution=[0.3, 0.7], generate_pairs=True)


def test_aia_rejects_bad_values(pop):
    with pytest.raises(ConfigError, match="exactly two"):
        TargetedAIA(AuxiliaryDataKnowledge(pop, num_training_records=50), BlackBoxKnowledge(Raw(), 50),
                    [1], "sex", ["F"], metadata=DEMO_METADATA)


def test_auto_targets_find_a_planted_outlier(pop):
    df = pop.copy()
    df.loc[len(df)] = {"age": 95, "sex": "M", "zip": "00001", "education": "doctorate",
                       "occupation": "astronaut", "income": 9e6, "bmi": 55.0, "diagnosis": "cancer",
                       "admission_date": pd.Timestamp("2030-01-01")}
    picked = select_vulnerable_targets(df, 3)
    assert len(df) - 1 in picked
    tm = _mia(df, Raw(), "auto:1", n=100)
    assert tm.targets.tolist() == [len(df) - 1]


@pytest.mark.parametrize("bad", ["auto:x", "1,a", [5000], [1, 1]])
def test_bad_targets_raise(pop, bad):
    with pytest.raises(ConfigError):
        _mia(pop, Raw(), bad, n=50)


def test_oversized_training_sets_raise(pop):
    tm = _mia(pop, Raw(), [1], n=5000)
    with pytest.raises(ConfigError, match="num_training_records"):
        tm.generate_training_samples(1)


def test_parallel_generation_and_save_load_give_identical_datasets(pop, tmp_path):
    serial = _mia(pop, IndependentMarginals(), [4], n=100)
    ds1, lab1 = serial.generate_test_samples(6)
    par = TargetedMIA(AuxiliaryDataKnowledge(pop, num_training_records=100),
                      BlackBoxKnowledge(IndependentMarginals(), 100), [4], metadata=DEMO_METADATA,
                      n_jobs=2)
    ds2, lab2 = par.generate_test_samples(6)
    assert np.array_equal(lab1, lab2)
    for a, b in zip(ds1, ds2, strict=True):
        pd.testing.assert_frame_equal(a, b)
    path = tmp_path / "tm.pkl"
    par.save(path)
    back = TargetedMIA.load(path)
    ds3, lab3 = back.generate_test_samples(6)
    assert np.array_equal(lab3, lab1)
    pd.testing.assert_frame_equal(ds3[5], ds1[5])
    view = back.view(0)
    att = ClosestDistanceMIA("gower").train(view, num_samples=4)
    assert np.isfinite(view.test(att, num_samples=6).scores).all()


@pytest.mark.parametrize("dist", ["gower", "hamming", "lp"])
def test_stacked_distance_scores_equal_the_engine_per_dataset(pop, monkeypatch, dist):
    """The batched (stacked, chunked) distance attacks give exactly the engine's per-dataset
    nearest distances and radius counts, also when a chunk boundary splits the batch."""
    from synthguard.attacks import distance as dmod
    from synthguard.engine.neighbors import count_within, nearest_distances

    monkeypatch.setattr(dmod, "_CELLS", 250)  # datasets of 100 rows: several chunks
    view = _mia(pop, IndependentMarginals(), [8], n=100).view(0)
    ds, _ = view.generate_test_samples(7)
    cd = ClosestDistanceMIA(dist).train(view, num_samples=4)
    ln = LocalNeighbourhoodAttack(dist, radius=0.2).train(view, num_samples=4)
    got_cd, got_ln = cd.attack_score(ds), ln.attack_score(ds)
    for i, frame in enumerate(ds):
        block = view.encode(frame, cd.columns, categorical_only=cd.cat_only)
        assert got_cd[i] == -nearest_distances(cd.target_block, block, cd.metric, backend="numpy")[0]
        n_in = count_within(ln.target_block, block, ln.metric, 0.2, backend="numpy")[0]
        assert got_ln[i] == n_in / len(frame)


def test_conform_restores_dtypes_lost_in_a_csv_round_trip(pop):
    import io

    from synthguard.attacks.threat_models import conform
    from synthguard.data.schema import infer_schema

    schema = infer_schema(pop, DEMO_METADATA)
    back = pd.read_csv(io.StringIO(pop.iloc[:50].to_csv(index=False)))  # zip -> int, dates -> str
    fixed = conform(back, pop, schema, "test")
    assert pd.api.types.is_datetime64_any_dtype(fixed["admission_date"].dtype)
    assert fixed["zip"].tolist() == pop["zip"].iloc[:50].tolist()
    assert list(fixed.columns) == list(pop.columns)


def test_csv_loaded_data_with_text_dates_leaks_like_typed_data(pop, tmp_path):
    """Dates read from CSV are text: the data is typed once, so a target matches its own copy."""
    path = tmp_path / "pop.csv"
    pop.iloc[:300].to_csv(path, index=False)
    raw = pd.read_csv(path)
    assert not pd.api.types.is_datetime64_any_dtype(raw["admission_date"].dtype)
    tm = TargetedMIA(ExactDataKnowledge(raw), BlackBoxKnowledge(Raw(), 300), "auto:1")
    view = tm.view(0)
    cd = ClosestDistanceMIA("gower").train(view, num_samples=6)
    assert cd.train_scores[cd.train_labels == 1].max() == 0.0  # distance 0 to its own copy
    ln = LocalNeighbourhoodAttack("gower").train(view, num_samples=10)
    assert view.test(ln, num_samples=10).metrics(n_boot=20)["auc"] == 1.0


def test_isolation_on_a_reference_sample_still_finds_the_outlier(pop):
    from synthguard.attacks import isolation_scores

    df = pop.copy()
    df.loc[len(df)] = {"age": 95, "sex": "M", "zip": "00001", "education": "doctorate",
                       "occupation": "astronaut", "income": 9e6, "bmi": 55.0, "diagnosis": "cancer",
                       "admission_date": pd.Timestamp("2030-01-01")}
    iso = isolation_scores(df, max_reference=200, seed=1)
    assert iso.shape == (len(df),) and np.isfinite(iso).all()
    assert int(np.argmax(iso)) == len(df) - 1
    exact = isolation_scores(df.iloc[:300])
    assert (exact >= 0).all()
