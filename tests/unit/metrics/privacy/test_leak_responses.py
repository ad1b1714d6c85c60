"""Leak responses are what re-running a test on the release plus the leak rows gives (issue #29).

The detection limits are measured by putting leak rows built from the run's own training records into
the release and re-testing; the verdict does it incrementally, from each test's measured
:class:`~synthguard.core.results.LeakResponse`. These tests prove the increment exact: for every
family and every monotone test, the flags after injecting a random set of leak rows equal the flags
of a full re-run of the metric on the release with those rows appended.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.core.results import tail_flags
from synthguard.metrics._leakrows import leak_sets
from synthguard.registry import Context, get_metric
from synthguard.run.executor import run_metric
from tests.conftest import SHARED_DATA

TESTS = ("exact_matches", "near_copies", "near_copies_2", "close_neighbours", "qi_linkage")
META = {"quasi_identifiers": ["age", "gender", "race", "edu", "married"],
        "sensitive": ["employment", "disability"]}


@pytest.fixture(scope="module")
def parts():
    if not (SHARED_DATA / "acs12.csv").exists():
        pytest.skip("../shared/data is not present")
    df = pd.read_csv(SHARED_DATA / "acs12.csv").sample(900, random_state=3).reset_index(drop=True)
    o, c, s = df.iloc[:300], df.iloc[300:600], df.iloc[600:]
    return o.reset_index(drop=True), s.reset_index(drop=True), c.reset_index(drop=True)


def _context(o, s, c):
    return Context.from_frames(o, s, c, META, seed=5)


@pytest.mark.parametrize("name", TESTS)
def test_injected_flags_equal_a_full_rerun_on_the_release_with_the_leak_rows(parts, name):
    o, s, c = parts
    spec = get_metric(name)
    ctx = _context(o, s, c).for_run([name])
    res = run_metric(spec, ctx, spec.resolve_params(None))
    flags = res.evidence.flags
    assert flags.leaks, f"{name} states no leak responses"
    sets = leak_sets(ctx)
    rng = np.random.default_rng(0)
    checked = 0
    for family, resp in flags.leaks.items():
        ls = sets[family]
        pick = np.sort(rng.choice(ls.sources.size, min(25, ls.sources.size), replace=False))
        leaked = np.zeros(len(o), dtype=bool)
        leaked[ls.sources[pick]] = True
        injected = tail_flags(resp.apply(flags.scores, leaked), flags.tail)
        release = pd.concat([s, ls.rows.iloc[pick]], ignore_index=True)
        again = run_metric(spec, _context(o, release, c), spec.resolve_params(None)).evidence.flags
        rerun = np.concatenate([again.member, again.non_member])
        assert np.array_equal(injected, rerun), (
            f"{name}, family {family}: injected flags differ from a re-run on "
            f"{int((injected != rerun).sum())} records")
        checked += 1
    assert checked >= 5


def test_leak_rows_come_from_the_training_records_of_each_family(parts):
    o, s, c = parts
    ctx = _context(o, s, c)
    sets = leak_sets(ctx)
    o = ctx.tables.original  # the typed training table the leak rows are built from
    assert sets["exact"].rows.reset_index(drop=True).equals(o.iloc[sets["exact"].sources]
                                                            .reset_index(drop=True))

    def differing(a: pd.DataFrame, b: pd.DataFrame) -> pd.Series:
        a, b = a.reset_index(drop=True), b.reset_index(drop=True)
        same = pd.DataFrame({c: (a[c] == b[c]) | (a[c].isna() & b[c].isna()) for c in a.columns})
        return (~same).sum(axis=1)

    for family, cells in (("near1", 1), ("near2", 2)):
        ls = sets[family]
        assert (differing(ls.rows, o.iloc[ls.sources]) == cells).all(), family
    link = sets["linkage"]
    kept = META["quasi_identifiers"] + META["sensitive"]
    assert (differing(link.rows[kept], o.iloc[link.sources][kept]) == 0).all()
    assert sets["person"].reason and sets["text"].reason  # named, with the reason they do not apply


def test_leak_responses_do_not_depend_on_which_test_ran_before_in_the_run(parts):
    """The run's encoder codes values on demand (numbers get codes when a copy test first asks):
    leak rows must get the real rows' codes however many tests ran before. Run alone, and last in
    one run after every other test (numbers coded in between), each test states the same
    responses."""
    o, s, c = parts

    def responses(res):
        return {f: (r.src.tolist(), r.target.tolist(), r.score.tolist())
                for f, r in res.evidence.flags.leaks.items()}

    alone = {}
    for name in TESTS:
        spec = get_metric(name)
        alone[name] = responses(run_metric(spec, _context(o, s, c).for_run([name]),
                                           spec.resolve_params(None)))
    shared = _context(o, s, c).for_run(list(TESTS))
    for name in reversed(TESTS):  # the distance tests first, the copy tests after them
        spec = get_metric(name)
        got = responses(run_metric(spec, shared, spec.resolve_params(None)))
        assert got == alone[name], name


def test_real_rows_by_position_are_the_same_from_the_fetched_columns_as_asked_of_the_backend(
        monkeypatch):
    """A small table's rows by position come from its columns fetched once (no round trip per
    leak family on a cluster); a large one's are asked of the backend: the same frame."""
    from synthguard.engine.backend import LocalBackend
    from synthguard.metrics._leakrows import RealRows
    from synthguard.registry import Context

    rng = np.random.default_rng(0)
    o = pd.DataFrame({"a": rng.normal(size=50), "b": rng.choice(["x", "y", None], 50),
                      "d": pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 9, 50), "D")})
    ctx = Context.from_frames(o, o.head(5), o.tail(5))
    backend = LocalBackend(ctx.tables, ctx.encoded)
    asked = []
    real_take = backend.take
    monkeypatch.setattr(backend, "take", lambda *a: asked.append(a) or real_take(*a))
    pos = np.array([7, 3, 3, 49, 0])
    small = RealRows(backend, ("original",), ["a", "b", "d"])
    got = [small.iloc[pos], small.iloc[pos[::-1]]]
    assert len(asked) == 1  # the whole table, once
    big = RealRows(backend, ("original",), ["a", "b", "d"])
    monkeypatch.setattr(RealRows, "CACHE_BYTES", 0)
    want = [big.iloc[pos], big.iloc[pos[::-1]]]
    assert len(asked) == 3  # one per read
    for g, w in zip(got, want, strict=True):
        pd.testing.assert_frame_equal(g, w)
