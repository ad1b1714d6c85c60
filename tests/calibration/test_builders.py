"""The calibration release builders do what they say: the ground truth they return is the training
records the release exposes, the nulls use no training row, and the same seed gives the same
release."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.calibration import (
    build_release,
    calibration_split,
    equal_split,
    exact_copies,
    kde_release,
    leaky_release,
    mixture_release,
    mode_seeking_release,
    near_copies,
    person_copies,
    person_panel,
    rare_copies,
    rare_records,
    smote_release,
    text_near_copies,
)
from synthguard.data.entities.calibration import entity_calibration_split
from synthguard.errors import ConfigError

QI = ["age", "gender", "race", "edu", "married"]


@pytest.fixture(scope="module")
def acs12(shared_data):
    return pd.read_csv(shared_data / "acs12.csv")


@pytest.fixture(scope="module")
def parts(acs12):
    return calibration_split(acs12, 4)


def _codes(a: pd.DataFrame, b: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of the cells of ``a`` and ``b``, coded together (every missing value alike)."""
    pooled = pd.concat([a, b[a.columns]], ignore_index=True)
    codes = np.column_stack([pd.factorize(pooled[c])[0] for c in a.columns])
    return codes[:len(a)], codes[len(a):]


def _cells_off(a: pd.DataFrame, b: pd.DataFrame) -> np.ndarray:
    """Per row of ``a``: the fewest cells in which it differs from a row of ``b``."""
    x, y = _codes(a, b)
    return (x[:, None, :] != y[None, :, :]).sum(axis=2).min(axis=1)


def _rows_in(rows: pd.DataFrame, table: pd.DataFrame) -> np.ndarray:
    """Per row of ``rows``: equal (missing equals missing) to some row of ``table``."""
    return _cells_off(rows, table) == 0


def test_equal_split_gives_800_800_400_on_acs12(acs12):
    p = equal_split(acs12, 0)
    assert [len(p[k]) for k in ("original", "control", "fresh")] == [800, 800, 400]


def test_exact_copies_are_the_leaked_training_rows_and_match_leaky_release(parts):
    o, f = parts["original"], parts["fresh"]
    leak = exact_copies(f, o, 0.05, 4)
    assert leak.n_leaked == 40 and leak.share == pytest.approx(0.05) and leak.leak_type == "exact"
    assert _rows_in(o[leak.leaked], leak.release).all()
    assert len(leak.release) == len(f)
    pd.testing.assert_frame_equal(leak.release, leaky_release(f, o, 0.05, 4))


@pytest.mark.parametrize("n_cells", [1, 2])
def test_near_copies_differ_from_their_source_in_exactly_n_cells(n_cells):
    # rows unlike each other (three unique columns), so a copy's nearest row is its source
    n = 300
    df = pd.DataFrame({"x": np.arange(n) * 1.5, "y": np.arange(n) * 7, "g": [f"g{i}" for i in range(n)],
                       "h": list("abc") * (n // 3), "m": [np.nan, 1.0] * (n // 2)})
    p = calibration_split(df, 4)
    o, f = p["original"], p["fresh"]
    leak = near_copies(f, o, 0.1, 4, n_cells=n_cells, of="release")
    assert leak.n_leaked == round(0.1 * len(f))
    src = o[leak.leaked].reset_index(drop=True)
    # each source's nearest release row is off in exactly n_cells cells
    assert (_cells_off(src, leak.release) == n_cells).all()


def test_rare_copies_copy_records_unique_on_the_quasi_identifiers(parts):
    o, f = parts["original"], parts["fresh"]
    leak = rare_copies(f, o, 0.05, 4, quasi_identifiers=QI)
    assert leak.n_leaked == 40
    rare = rare_records(o, QI)
    assert rare[leak.leaked].all() and 0 < rare.mean() < 1
    counts = o.groupby(QI, dropna=False).size()
    keys = pd.MultiIndex.from_frame(o.loc[leak.leaked, QI])
    assert (counts.reindex(keys).to_numpy() == 1).all()
    assert rare_records(o, reference=parts["control"]).sum() > 0  # no QIs: pooled-quantile bins
    with pytest.raises(ConfigError, match="candidate"):
        rare_copies(f, o, 0.9, 4, quasi_identifiers=QI)


def test_mode_seeking_null_uses_fresh_rows_only_and_favours_common_people(parts):
    o, f = parts["original"], parts["fresh"]
    leak = mode_seeking_release(f, o, 4, quasi_identifiers=["race", "gender"])
    assert leak.n_leaked == 0 and len(leak.leaked) == len(o)
    assert _rows_in(leak.release, f).all()
    common = f.groupby(["race", "gender"]).size().idxmax()
    share = lambda d: (d[["race", "gender"]].apply(tuple, axis=1) == common).mean()  # noqa: E731
    assert share(leak.release) > share(f)


def test_smote_rows_lie_between_training_neighbours(parts):
    o = parts["original"]
    leak = smote_release(o, 300, 4)
    assert len(leak.release) == 300 and leak.leak_type == "neighbourhood"
    age = leak.release["age"]
    assert age.between(o["age"].min(), o["age"].max()).all()
    assert (age == age.round()).all()  # integer-valued columns stay whole
    assert set(leak.release["race"].dropna()) <= set(o["race"].dropna())
    assert 0.1 < leak.share < 0.5
    into = smote_release(o, seed=4, base=parts["fresh"], share=0.05)
    assert into.n_leaked == 40 and len(into.release) == len(parts["fresh"])


def test_mixture_and_kde_keep_the_members_categories(parts):
    o = parts["original"]
    for leak in (mixture_release(o, 200, 4), mixture_release(o, 200, 4, per_component=20),
                 kde_release(o, 200, 4, bandwidth=1.0)):
        assert len(leak.release) == 200
        assert list(leak.release.columns) == list(o.columns)
        assert (leak.release.dtypes == o.dtypes).all()
        assert set(leak.release["edu"].dropna()) <= set(o["edu"].dropna())
        assert 0 < leak.share <= 200 / len(o)


def test_person_copies_copy_whole_persons(parts):
    panel = person_panel(parts["original"].head(300), 4)
    sizes = panel.groupby("person_id").size()
    assert sizes.between(2, 4).all() and len(sizes) == 300
    split = entity_calibration_split(panel, "person_id", seed=4)
    o, f = split["original"].events, split["fresh"].events
    leak = person_copies(f, o, 0.1, 4)
    assert leak.n_leaked == round(0.1 * o["person_id"].nunique())
    ids = np.asarray(sorted(o["person_id"].unique(), key=str), dtype=object)
    src = o[o["person_id"].isin(ids[leak.leaked])].drop(columns="person_id")
    assert _rows_in(src, leak.release.drop(columns="person_id")).all()
    assert leak.release["person_id"].nunique() == f["person_id"].nunique()


def test_text_near_copies_change_one_word(shared_data):
    train = pd.read_csv(shared_data / "fine_foods_reviews_train.csv").head(400)
    test = pd.read_csv(shared_data / "fine_foods_reviews_test.csv").head(200)
    leak = text_near_copies(test, train, 0.05, 4, column="review")
    assert leak.n_leaked == 20
    src = train.loc[leak.leaked, "review"].str.split()
    rel = leak.release["review"].str.split()
    assert not leak.release["review"].isin(train["review"]).any()
    for words in src:  # each source has a release document one word away
        same_len = rel[rel.str.len() == len(words)]
        off = same_len.map(lambda w, words=words: sum(a != b for a, b in zip(w, words, strict=True)))
        assert off.min() == 1


@pytest.mark.parametrize("kind", ["fresh", "mode_seeking", "exact", "near", "rare", "smote",
                                  "mixture", "kde"])
def test_same_seed_same_release(parts, kind):
    share = 0.05 if kind in ("exact", "near", "rare") else None
    a = build_release(kind, parts, 7, share=share, quasi_identifiers=QI)
    b = build_release(kind, parts, 7, share=share, quasi_identifiers=QI)
    pd.testing.assert_frame_equal(a.release, b.release)
    assert np.array_equal(a.leaked, b.leaked)


def test_builders_never_touch_their_inputs(parts):
    before = {k: v.copy() for k, v in parts.items()}
    for kind in ("near", "rare", "smote", "mixture", "kde", "mode_seeking"):
        build_release(kind, parts, 1, share=0.05 if kind in ("near", "rare") else None,
                      quasi_identifiers=QI)
    for k, v in parts.items():
        pd.testing.assert_frame_equal(v, before[k])
