"""text_exact_matches: verbatim and near-duplicate copies, duplication and holdout baselines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.metrics.text.near_dup import match_documents

from .conftest import frame, run


def test_known_copies(texts):
    res = run("text_exact_matches", frame(texts["original"]), frame(texts["synthetic"]))
    d = res.to_dict()
    assert d["exact_matches"] == 2 and d["near_duplicates"] == 1
    assert res.value == pytest.approx(3 / 6) and res.n == 6
    pairs = {(r["synthetic_row"], r["original_row"], r["kind"]) for r in d["records"]}
    assert pairs == {(0, 0, "exact"), (4, 6, "exact"), (2, 3, "near")}
    near = [r for r in d["records"] if r["kind"] == "near"][0]
    assert 0.9 <= near["similarity"] < 1.0
    assert res.risk_level == "high"
    assert d["original_duplication_rate"] == 0.0
    assert res.baseline.value == 0.0 and "duplication" in res.baseline.description


def test_exact_only_and_normalisation():
    orig = frame(["Hello   World, this is a test", "something else entirely here"])
    syn = frame(["hello world, this is a TEST", "<br />something else entirely here!"])
    res = run("text_exact_matches", orig, syn, threshold=1.0)
    assert res.to_dict()["exact_matches"] == 1 and res.to_dict()["near_duplicates"] == 0
    res = run("text_exact_matches", orig, syn)
    assert res.to_dict()["exact_matches"] == 1 and res.to_dict()["near_duplicates"] == 1


def test_clean_synthetic_and_short_texts(texts):
    syn = frame(texts["clean"] + ["ok", "great"])
    res = run("text_exact_matches", frame(texts["original"] + ["ok"]), syn)
    d = res.to_dict()
    assert res.value == 0.0 and d["per_column"]["note"]["too_short"] == 2 and res.n == 4


def test_original_duplication_and_control_baseline(texts):
    orig = frame(texts["original"] + [texts["original"][0], texts["original"][4].replace("day", "days")])
    control = frame([texts["original"][5], "A brand new review that nobody has ever written down before."])
    res = run("text_exact_matches", orig, frame(texts["synthetic"]), control)
    d = res.to_dict()
    # rows 0 and 8 are exact duplicates, rows 4 and 9 near duplicates: 4 of 10
    assert d["original_duplication_rate"] == pytest.approx(4 / 10)
    assert d["control_copy_rate"] == pytest.approx(1 / 2)
    assert res.baseline.value == pytest.approx(0.5) and "control" in res.baseline.description
    # 3/6 copies is not above a 1/2 holdout rate: not evidence of memorisation
    assert res.risk_level == "low" and "baseline" in res.warning


def test_match_documents_self_partner():
    docs = ["a b c d", "e f g h", "a b c d", "a b c d"]
    m = match_documents(docs, docs, threshold=0.9, same=True)
    assert m["kind"].tolist() == ["exact", "", "exact", "exact"]
    assert m["ref"].tolist()[0] == 2 and m["ref"].tolist()[2] == 0 and m["ref"].tolist()[3] == 0


def test_row_order_invariance(texts):
    a = run("text_exact_matches", frame(texts["original"]), frame(texts["synthetic"]))
    b = run("text_exact_matches", frame(texts["original"][::-1]), frame(texts["synthetic"][::-1]))
    for key in ("value", "ci", "n", "exact_matches", "near_duplicates", "original_duplication_rate"):
        assert a.to_dict()[key] == b.to_dict()[key]


def test_multiple_text_columns():
    orig = pd.DataFrame({"a": ["one two three four", "five six seven eight"],
                         "b": ["alpha beta gamma delta", "epsilon zeta eta theta"]})
    syn = pd.DataFrame({"a": ["alpha beta gamma delta", "five six seven eight"],
                        "b": ["one two three four", "nothing like the rest here"]})
    res = run("text_exact_matches", orig, syn, metadata={"text_columns": ["a", "b"]})
    d = res.to_dict()
    # copies only count within the same column
    assert d["exact_matches"] == 1 and res.n == 4
    assert d["per_column"]["a"]["exact_match_rate"] == 0.5 and d["per_column"]["b"]["exact_match_rate"] == 0
    only_b = run("text_exact_matches", orig, syn, metadata={"text_columns": ["a", "b"]}, columns="b")
    assert only_b.to_dict()["columns"] == ["b"] and only_b.value == 0.0


def test_candidate_blocks_are_bounded_and_do_not_change_matches(monkeypatch):
    """Many references shrink the query block (bounded dense scores) without changing the candidates."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    from synthguard.metrics.text import near_dup

    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(60)]
    ref = [" ".join(rng.choice(words, size=8)) for _ in range(300)]
    qry = [" ".join(rng.choice(words, size=8)) for _ in range(40)]
    vec = TfidfVectorizer().fit(ref + qry)
    rmat, qmat = vec.transform(ref), vec.transform(qry)
    full = near_dup._top_candidates(qmat, rmat, 5)
    seen = []
    monkeypatch.setattr(near_dup, "MAX_BLOCK_CELLS", 7 * 300)  # 7 queries per block
    orig_tocsr = type(rmat.T.tocsr()).toarray

    def spy(self, *a, **k):
        out = orig_tocsr(self, *a, **k)
        seen.append(out.shape)
        return out

    monkeypatch.setattr(type(rmat.T.tocsr()), "toarray", spy)
    small = near_dup._top_candidates(qmat, rmat, 5)
    assert max(s[0] for s in seen) == 7 and all(s[0] * s[1] <= 7 * 300 for s in seen)
    assert sorted(zip(*map(list, full), strict=True)) == sorted(zip(*map(list, small), strict=True))


def test_density_ci_uses_the_shared_bootstrap():
    import numpy as np

    from synthguard.metrics.text._common import _ratio_ci
    from synthguard.stats import bootstrap_ci

    num = np.array([0, 2, 1, 5, 0, 3], dtype=float)
    den = np.array([10, 20, 8, 30, 5, 12], dtype=float)
    ci = _ratio_ci(num, den, np.random.default_rng(7))
    ref = bootstrap_ci(lambda a, b: a.sum() / b.sum(), [num, den], n_boot=400, seed=np.random.default_rng(7))
    assert ci == pytest.approx(ref)
    assert ci[0] <= num.sum() / den.sum() <= ci[1]
    assert _ratio_ci(num[:1], den[:1], np.random.default_rng(7)) is None
    assert _ratio_ci(num, np.zeros(6), np.random.default_rng(7)) is None


def test_evidence_flags_training_documents_copied_into_the_release(texts):
    control = frame(["Completely different words about a garden hose that leaks water daily.",
                     "The teacher told my sister that Helen Carter from Boston had won the baking "
                     "contest."])
    ev = run("text_exact_matches", frame(texts["original"]), frame(texts["synthetic"]),
             control).evidence
    # training rows 0 and 6 copied verbatim, row 3 with one word changed
    assert np.flatnonzero(ev.flags.member).tolist() == [0, 3, 6]
    # the control's second document equals training row 6, which the release copies
    assert ev.flags.non_member.tolist() == [False, True]
    assert ev.sees == ("text",) and ev.risk == "presence"
    assert ev.visibility["text"] == 1.0
    assert run("text_exact_matches", frame(texts["original"]), frame(texts["synthetic"])).evidence \
        is None  # no control: nothing to compare with


def test_evidence_on_fine_food_reviews_sees_planted_near_copies_only():
    import os
    from pathlib import Path

    from synthguard.stats import make_rng

    root = Path(os.environ.get("SYNTHGUARD_SHARED_DATA",
                               Path(__file__).resolve().parents[5] / "shared" / "data"))
    if not (root / "fine_foods_reviews_train.csv").exists():
        pytest.skip("shared data not found")
    tr = pd.read_csv(root / "fine_foods_reviews_train.csv")
    te = pd.read_csv(root / "fine_foods_reviews_test.csv")
    order = make_rng(0, "split").permutation(len(tr))
    o = tr.iloc[np.sort(order[:2000])].reset_index(drop=True)
    c = tr.iloc[np.sort(order[2000:])].reset_index(drop=True)
    rng = make_rng(0, "plant")
    planted = o.iloc[np.sort(rng.choice(len(o), 100, replace=False))].copy()
    words = planted["review"].str.split(" ")
    planted["review"] = [" ".join(w[:1] + ["zzplanted"] + w[2:]) for w in words]
    meta = {"text_columns": ["review"]}
    clean = run("text_exact_matches", o, te, c, meta).evidence
    leaky = run("text_exact_matches", o, pd.concat([te, planted], ignore_index=True), c,
                meta).evidence
    assert clean.effect_ci[0] <= 0 < clean.effect_ci[1] < 0.01  # no excess; 1 % ruled out
    assert leaky.effect_ci[0] > 0.03 and leaky.p_value < 1e-6  # 5 % planted: seen
