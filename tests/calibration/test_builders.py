"""The calibration release builders do what they say: the ground truth they return is the training
records the release exposes, as the leak family it names, built by the same row builders a run uses
to measure its detection limits; the nulls use no training row, and the same seed gives the same
release."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.calibration import (
    FAMILY_KINDS,
    PUBLIC_TABLE_METADATA,
    build_release,
    calibration_split,
    equal_split,
    exact_copies,
    family_release,
    kde_release,
    leaky_release,
    mixed_release,
    mixture_release,
    mode_seeking_release,
    near_copies,
    person_copies,
    person_panel,
    rare_copies,
    rare_records,
    sized_split,
    smote_release,
    text_near_copies,
)
from synthguard.data.entities.calibration import entity_calibration_split
from synthguard.data.loading import CSV_FLOAT_KW
from synthguard.errors import ConfigError

QI = ["age", "gender", "race", "edu", "married"]


@pytest.fixture(scope="module")
def acs12(shared_data):
    return pd.read_csv(shared_data / "acs12.csv", **CSV_FLOAT_KW)


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
    assert leak.n_leaked == 40 and leak.share == pytest.approx(0.05) and leak.family == "exact"
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
    assert len(leak.release) == 300 and leak.family is None  # no single leak family
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


# ----------------------------------------------------------------------------------- leak families
def _people(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Records unlike each other (a unique real-valued column), with quasi-identifiers, a sensitive
    column, whole-number and categorical columns."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 90, n), "sex": rng.choice(["f", "m"], n),
                         "city": rng.choice(list("abcdefgh"), n), "income": rng.normal(4e4, 1e4, n),
                         "x": np.arange(n) * 1.37, "score": rng.integers(0, 100, n),
                         "dx": rng.choice(["none", "flu", "copd"], n)})


PEOPLE_META = {"quasi_identifiers": ["age", "sex", "city"], "sensitive": ["dx"]}
NUMERIC = ["age", "income", "x", "score"]


@pytest.fixture(scope="module")
def people():
    return calibration_split(_people(), 2)


def _pairs(leak) -> tuple[pd.DataFrame, np.ndarray]:
    """The leak rows of a release and their sources (positions in the training rows)."""
    rows = np.flatnonzero(leak.origin >= 0)
    return leak.release.iloc[rows].reset_index(drop=True), leak.origin[rows]


@pytest.mark.parametrize("family", FAMILY_KINDS)
def test_family_release_states_its_ground_truth(people, family):
    leak = family_release(family, people, 0.1, 3, metadata=PEOPLE_META)
    o, f = people["original"], people["fresh"]
    assert leak.family == family and leak.n_leaked == round(0.1 * len(o))
    assert len(leak.release) == len(f) and list(leak.release.columns) == list(o.columns)
    assert (leak.release.dtypes == f.dtypes).all()
    assert (leak.origin >= 0).sum() == leak.n_leaked  # one leak row per leaked record
    assert sorted(leak.origin[leak.origin >= 0]) == sorted(np.flatnonzero(leak.leaked))
    assert _rows_in(leak.release[leak.origin < 0], f).all()  # the rest are fresh rows
    same = family_release(family, people, 0.1, 3, metadata=PEOPLE_META)
    pd.testing.assert_frame_equal(leak.release, same.release)


@pytest.mark.parametrize("family", FAMILY_KINDS)
def test_family_rows_are_what_the_family_says(people, family):
    o, c = people["original"], people["control"]
    leak = family_release(family, people, 0.1, 3, metadata=PEOPLE_META)
    rows, src = _pairs(leak)
    source = o.iloc[src].reset_index(drop=True)
    qi, sens = PEOPLE_META["quasi_identifiers"], PEOPLE_META["sensitive"]
    off = (rows != source).sum(axis=1).to_numpy()
    pooled = pd.concat([o, c], ignore_index=True)
    unique_qi = ~pooled.duplicated(qi, keep=False).to_numpy()[:len(o)]
    if family in ("exact", "rare"):
        assert (off == 0).all()
        if family == "rare":  # unique on the quasi-identifiers among all real records
            assert unique_qi[src].all() and not unique_qi.all()
    elif family in ("near1", "near2"):
        assert (off == int(family[-1])).all()
    elif family.startswith("noise"):
        scale = {"noise2": 0.02, "noise5": 0.05, "noise10": 0.10}[family]
        pd.testing.assert_frame_equal(rows[["sex", "city", "dx"]], source[["sex", "city", "dx"]])
        sd = pooled[NUMERIC].std(ddof=0)
        moved = (rows[NUMERIC] - source[NUMERIC]).abs()
        assert (moved <= 6 * scale * sd + 0.5).all().all()  # 6 sd of the noise (+ rounding)
        assert (moved["x"] > 0).mean() > 0.9  # real-valued cells move
        assert (rows[["age", "score"]] == rows[["age", "score"]].round()).all().all()
    elif family == "linkage":
        pd.testing.assert_frame_equal(rows[qi + sens], source[qi + sens])
        assert unique_qi[src].all()
        assert (rows["x"] != source["x"]).mean() > 0.9  # the other cells come from other people
    else:  # interpolation: between the record and its nearest other training record
        from synthguard.calibration import _nearest_training_records
        from synthguard.registry import Context

        ctx = Context.from_frames(o, people["fresh"], c, PEOPLE_META)
        partner = o.iloc[_nearest_training_records(ctx, src)].reset_index(drop=True)
        lo = np.minimum(source[NUMERIC], partner[NUMERIC]) - 0.5
        hi = np.maximum(source[NUMERIC], partner[NUMERIC]) + 0.5
        assert ((rows[NUMERIC] >= lo) & (rows[NUMERIC] <= hi)).all().all()
        for col in ("sex", "city", "dx"):
            assert ((rows[col] == source[col]) | (rows[col] == partner[col])).all()
        assert not (off == 0).all()


@pytest.fixture(scope="module")
def acs12_run(acs12):
    """acs12 at 800 / 800 / 400 and a run's view of it (its leak rows are built once)."""
    from synthguard.registry import Context

    p = equal_split(acs12, 5)
    meta = PUBLIC_TABLE_METADATA["acs12"]
    return p, meta, Context.from_frames(p["original"], p["fresh"], p["control"], meta, seed=5)


@pytest.mark.parametrize("family", FAMILY_KINDS)
def test_calibration_leak_rows_are_the_runs_injected_leak_rows(acs12_run, family):
    """Given the run's random stream, the calibration builder rebuilds exactly the leak rows a run
    injects to measure its detection limits (``metrics/_leakrows``): same candidates, same
    sources, same rows (interpolation partners included)."""
    from synthguard.calibration import _candidates, _family_setup, _leak_rows
    from synthguard.metrics._leakrows import leak_sets, max_candidates
    from synthguard.stats import make_rng

    _, meta, ctx = acs12_run
    run = leak_sets(ctx)[family]
    # the run's tables: typed ("yes" read as True) and in its canonical row and column order
    p = {"original": ctx.tables.original, "control": ctx.tables.control,
         "fresh": ctx.tables.synthetic}
    view, spec, pool = _family_setup(p, meta)
    mask = _candidates(family, p["original"], pool, spec)
    k = min(max_candidates(len(p["original"])), int(mask.sum()))
    rows, src = _leak_rows(p["original"], family, k, make_rng(5, "leak-rows", family), pool=pool,
                           spec=spec, candidates=mask, view=view)
    assert np.array_equal(src, run.sources)
    pd.testing.assert_frame_equal(rows.astype(object), run.rows.astype(object), check_dtype=False)


def test_mixed_release_leaks_each_record_once(people):
    leak = mixed_release(people, {"exact": 0.3, "near1": 0.3}, 1)
    f, o = people["fresh"], people["original"]
    assert leak.family == "exact+near1" and len(leak.release) == len(f)
    assert leak.n_leaked == 2 * round(0.3 * len(f))
    src = leak.origin[leak.origin >= 0]
    assert len(np.unique(src)) == len(src) == leak.n_leaked
    rows = leak.release[leak.origin >= 0].reset_index(drop=True)
    off = (rows != o.iloc[src].reset_index(drop=True)).sum(axis=1)
    assert sorted(off.value_counts().to_dict().items()) == [(0, leak.n_leaked // 2),
                                                             (1, leak.n_leaked // 2)]


def test_dates_stay_written_as_the_input_writes_them(shared_data):
    df = pd.read_csv(shared_data / "hhs_breaches.csv", **CSV_FLOAT_KW).drop(
        columns=["Summary", "Number", "Name_of_Covered_Entity"])
    p = calibration_split(df, 0)
    for family in ("noise10", "interpolation"):
        leak = family_release(family, p, 0.1, 0, metadata=PUBLIC_TABLE_METADATA["hhs_breaches"])
        assert (leak.release.dtypes == p["fresh"].dtypes).all()
        rows = leak.release.loc[leak.origin >= 0, "breach_start"].dropna()
        assert rows.str.fullmatch(r"\d{4}-\d{2}-\d{2}").all() and len(rows) > 10


def test_a_family_that_does_not_apply_says_why(people):
    with pytest.raises(ConfigError, match="quasi-identifiers and sensitive"):
        family_release("linkage", people, 0.05, 0)
    with pytest.raises(ConfigError, match="person_copies"):
        family_release("person", people, 0.05, 0)
    with pytest.raises(ConfigError, match="candidate"):
        family_release("rare", people, 0.9, 0, metadata=PEOPLE_META)
    clipped = family_release("rare", people, 0.9, 0, metadata=PEOPLE_META, clip=True)
    assert 0 < clipped.share < 0.9


def test_sized_split_is_the_equal_split_by_counts(acs12):
    a, b = sized_split(acs12, 3, 800), equal_split(acs12, 3)
    for k in a:
        pd.testing.assert_frame_equal(a[k], b[k])
    with pytest.raises(ConfigError, match="needs more than 2000 rows"):
        sized_split(acs12, 0, 1000)
