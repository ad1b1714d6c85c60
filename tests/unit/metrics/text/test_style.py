"""text_style_outliers: O(n d) mean cosine distance, reproducible Word2Vec, injected outliers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics.pairwise import cosine_distances

from synthguard.metrics.text.style import mean_cosine_distance

from .conftest import frame, run


def test_mean_cosine_distance_equals_full_matrix():
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(60, 7))
    emb[5] = 0.0  # an empty document
    full = cosine_distances(emb)
    np.fill_diagonal(full, 0.0)
    expected = full.sum(axis=1) / (len(emb) - 1)
    expected[5] = 1.0  # zero vector: similarity 0 to every other document
    assert np.allclose(mean_cosine_distance(emb), expected)
    # SynEval averages over the row including itself: z-scores are the same (affine map)
    syneval = cosine_distances(emb).mean(axis=1)
    ours = mean_cosine_distance(emb)
    z = lambda v: (v - v.mean()) / v.std()  # noqa: E731
    nonzero = np.ones(len(emb), bool)
    nonzero[5] = False
    assert np.allclose(z(syneval[nonzero]), z(ours[nonzero]), atol=1e-9)


def _reviews(shared_data, n, offset=0):
    df = pd.read_csv(shared_data / "fine_foods_reviews_train.csv")
    return df["review"].astype(str).tolist()[offset:offset + n]


def test_injected_outliers_and_reproducibility(shared_data):
    orig = _reviews(shared_data, 150)
    rng = np.random.default_rng(1)
    gibberish = [" ".join("".join(rng.choice(list("qxzjkvw"), 6)) for _ in range(12)) for _ in range(30)]
    syn = _reviews(shared_data, 120, offset=150) + gibberish
    a = run("text_style_outliers", frame(orig), frame(syn), seed=3, cache=False)
    b = run("text_style_outliers", frame(orig), frame(syn), seed=3, cache=False)
    assert a.to_dict() == b.to_dict()  # seeded, one worker: bit-identical
    d = a.to_dict()
    assert d["synthetic"]["outliers"] == round(a.value * d["synthetic"]["documents"])
    assert a.baseline.value == d["original"]["outlier_share"]
    assert d["synthetic"]["documents"] == 150 and d["original"]["documents"] == 150
    # the gibberish documents dominate the synthetic outliers
    listed = {r["row"] for r in d["records"]}
    assert listed and listed <= set(range(120, 150))
    assert d["outlier_ratio"] == pytest.approx(a.value / d["original"]["outlier_share"]) \
        if d["original"]["outliers"] else d["outlier_ratio"] is None


def test_cache_gives_same_result(shared_data, isolated_cache):
    orig, syn = _reviews(shared_data, 60), _reviews(shared_data, 60, offset=60)
    a = run("text_style_outliers", frame(orig), frame(syn))
    assert list(isolated_cache.glob("text/*.json.gz"))
    b = run("text_style_outliers", frame(orig), frame(syn))
    assert a.to_dict() == b.to_dict()


def test_too_few_documents():
    from synthguard.errors import MetricError

    with pytest.raises(MetricError, match="at least 3"):
        run("text_style_outliers", frame(["one two three four five", "six seven eight nine ten"]),
            frame(["a b c d e f", "g h i j k l", "m n o p q r"]))


def test_row_order_does_not_change_outliers(shared_data):
    orig, syn = _reviews(shared_data, 80), _reviews(shared_data, 80, offset=80)
    a = run("text_style_outliers", frame(orig), frame(syn), cache=False).to_dict()
    b = run("text_style_outliers", frame(orig[::-1]), frame(syn[::-1]), cache=False).to_dict()
    for key in ("value", "ci", "n", "baseline", "difference"):
        assert a[key] == b[key]
    assert a["original"]["mean_distance"] == pytest.approx(b["original"]["mean_distance"], abs=1e-12)
    assert {r["row"] for r in a["records"]} == {79 - r["row"] for r in b["records"]}
