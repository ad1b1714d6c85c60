"""Text columns take part in ``distinguishability`` (TF-IDF features): a difference that lives only in
the text column must be detected, and a bag-of-words-identical text must not be."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthguard import evaluate


def _frames(shared_data, n=200):
    df = pd.read_csv(shared_data / "fine_foods_reviews_train.csv").iloc[: 2 * n].reset_index(drop=True)
    rng = np.random.default_rng(0)
    original = df.iloc[:n][["review", "score"]].reset_index(drop=True)
    # same tabular distribution: the score column is resampled from the original
    score = rng.choice(original["score"].to_numpy(), n)
    other = df.iloc[n:]["review"].astype(str).tolist()
    # text leak: a template generator with its own vocabulary
    nouns = ["coffee", "tea", "snack", "cookie", "sauce", "cereal", "candy", "chips"]
    templated = [f"This {rng.choice(nouns)} is wonderful and I would definitely recommend it to everyone"
                 for _ in range(n)]
    # no text difference for a bag-of-words model: other real reviews with their words shuffled
    shuffled = [" ".join(rng.permutation(t.split())) for t in other]
    leak = pd.DataFrame({"review": templated, "score": score})
    same = pd.DataFrame({"review": shuffled, "score": score})
    return original, leak, same


def test_text_only_difference_is_detected(shared_data):
    original, leak, same = _frames(shared_data)
    meta = {"text_columns": ["review"], "columns": {"score": {"sdtype": "categorical"}}}
    params = {"distinguishability": {"n_permutations": 1, "n_estimators": 50, "n_boot": 100}}
    hit = evaluate(original, leak, metadata=meta, metrics=params).result("distinguishability")
    miss = evaluate(original, same, metadata=meta, metrics=params).result("distinguishability")
    assert hit.to_dict()["text_columns_used"] == ["review"]
    assert hit.value > 0.9 and hit.ci[0] > 0.8
    assert miss.value < 0.7
    assert hit.value - miss.value > 0.25
