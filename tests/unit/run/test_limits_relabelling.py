"""The detection limits' relabelling (:mod:`synthguard.run.limits`): computed from the keys' ranks
once, it must name the same training records as the definition, the forced records plus the
smallest keys (an ``argpartition`` per repetition), and count the same flagged training records."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard.core.results import Evidence, tail_flags
from synthguard.run import limits
from synthguard.run.limits import _p_and_upper, _Relabelling, _Tested, newcombe_upper
from synthguard.stats.maxt import fisher_p


def _by_definition(keys: np.ndarray, forced: np.ndarray, n_member: int) -> np.ndarray:
    members = np.zeros(keys.shape, dtype=bool)
    for r in range(len(keys)):
        key = keys[r].copy()
        key[forced[r][forced[r] >= 0]] = -1.0
        members[r, np.argsort(key, kind="stable")[:n_member]] = True
    return members


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("size", [300, 6000])
def test_relabelling_by_ranks_names_the_training_records_of_the_definition(seed, size, dense,
                                                                          monkeypatch):
    # 6000 records: the band of sorted keys (1024 wide) is narrower than the training records;
    # dense=False: the membership answers of large tables (binary searches, sorted lookups)
    if not dense:
        monkeypatch.setattr(limits, "_DENSE_CELLS", 0)
    rng = np.random.default_rng(seed)
    reps, big_n = 7, int(rng.integers(size // 15, size))
    n_member = int(rng.integers(1, big_n))
    keys = rng.random((reps, big_n))
    width = int(rng.integers(0, min(n_member, 12 if size < 1000 else 700) + 1))
    # forced records with repeats and padding (-1), as leaked sources and their partners are
    forced = rng.integers(-1, n_member, size=(reps, 2 * width))
    rel = _Relabelling(keys, n_member)
    draw = rel.draw(forced)
    want = _by_definition(keys, forced, n_member)
    got = rel.members(draw, 0, reps, forced)
    assert (got.sum(axis=1) == n_member).all()
    np.testing.assert_array_equal(got, want)
    # a membership query and a count over any set of records agree with the matrix
    rows, idx = rng.integers(0, reps, 50), rng.integers(0, big_n, 50)
    np.testing.assert_array_equal(draw.is_member(rows, idx), want[rows, idx])
    # every (repetition, record) pair, the forced ones and the last record included
    rows, idx = np.repeat(np.arange(reps), big_n), np.tile(np.arange(big_n), reps)
    np.testing.assert_array_equal(draw.is_member(rows, idx), want.ravel())
    mask = rng.random(big_n) < 0.3
    counts = draw.members_among(rel.sorted_keys(np.flatnonzero(mask)), mask)
    np.testing.assert_array_equal(counts, (want & mask[None, :]).sum(axis=1))


def test_more_forced_than_training_records_falls_back_to_the_smallest_keys():
    rng = np.random.default_rng(1)
    keys = rng.random((3, 40))
    forced = np.tile(np.arange(12), (3, 1))
    rel = _Relabelling(keys, 10)
    assert rel.draw(forced) is None
    got = rel.members(None, 0, 3, forced)
    assert (got.sum(axis=1) == 10).all() and not got[:, 12:].any()


def test_p_values_and_bounds_per_distinct_count_equal_those_of_every_repetition():
    rng = np.random.default_rng(3)
    n1, big_n = 700, 1300
    k1 = rng.integers(0, 40, 200)  # repeated counts, as relabellings give
    k2 = rng.integers(0, 40, 200)
    p, hi = _p_and_upper(k1, k2, n1, big_n, 0.95)
    np.testing.assert_array_equal(p, fisher_p(k1, k1 + k2, n1, big_n))
    np.testing.assert_array_equal(hi, newcombe_upper(k1, n1, k2, big_n - n1, 0.95))


@pytest.mark.parametrize("seed", range(8))
def test_tail_counts_from_the_raised_records_equal_the_recut_flags_of_every_repetition(seed):
    # the counts of a tail test after leak rows raise some scores (limits._TailCounter) equal those
    # of the definition: every repetition's scores raised (np.maximum.at), the tail re-cut
    # (tail_flags, row by row), flags counted against the relabelling's training records
    rng = np.random.default_rng(seed)
    reps, big_n = 9, int(rng.integers(50, 3000))
    n_member = int(rng.integers(1, big_n))
    # ties on purpose: scores drawn from few values on some seeds
    scores = (rng.integers(0, 6, big_n).astype(float) if seed % 2 else rng.normal(size=big_n))
    tail = float(rng.choice([1 / big_n, 0.02, 0.1, 0.5, 1.0]))
    m = int(rng.integers(0, 4 * big_n // 10 + 1))
    rows, targets = rng.integers(0, reps, m), rng.integers(0, big_n, m)  # repeated targets too
    raised = scores[targets] + rng.normal(0, 1, m)  # some below the old score: no change there
    if seed % 2:
        raised = np.round(raised)
    rel = _Relabelling(rng.random((reps, big_n)), n_member)
    forced = rng.integers(-1, n_member, size=(reps, 6))
    draw = rel.draw(forced)
    members = rel.members(draw, 0, reps, forced)
    full = np.repeat(scores[None, :], reps, axis=0)
    np.maximum.at(full, (rows, targets), raised)
    flags = tail_flags(full, tail)
    k1, k2 = limits._TailCounter(scores, tail).counts(draw, reps, rows, targets, raised)
    np.testing.assert_array_equal(k1, (flags & members).sum(axis=1))
    np.testing.assert_array_equal(k2, (flags & ~members).sum(axis=1))


def test_a_tail_tests_detection_limit_is_the_same_by_the_counter_and_by_the_matrix(monkeypatch):
    # family_limits counts a tail test's flags from the raised records while reps x tail fits the
    # memory bound, else re-cuts the matrix chunk by chunk: the same limits either way
    from synthguard.core.results import LeakResponse

    rng = np.random.default_rng(3)
    n1, n2 = 300, 300
    scores = rng.normal(size=n1 + n2)
    src = np.arange(0, n1, 2)
    resp = LeakResponse(src, src, src, scores[src] + 4.0)
    test = limits.InjectionTest("close", scores, 0.05, n1, 0.05, ("presence", "any"), {"noise5": resp})
    counter = limits.family_limits([test], "noise5", ["presence"], materiality=0.01, reps=20)
    monkeypatch.setattr(limits, "_CELLS", 1)  # the counter would exceed the bound: the matrix path
    matrix = limits.family_limits([test], "noise5", ["presence"], materiality=0.01, reps=20)
    assert counter == matrix and counter["presence"]["k"] is not None


@pytest.mark.parametrize("width", [0, 5, 10_000])
def test_draws_wider_than_the_band_and_narrower_ones_name_the_training_records_of_the_definition(
        width):
    # the band of sorted keys is selected for `width` forced records and again, wider, when a draw
    # forces more; narrower draws after it use the wider band
    rng = np.random.default_rng(width)
    reps, big_n, n_member = 5, 3000, 1700
    rel = _Relabelling(rng.random((reps, big_n)), n_member, width)
    for w in (3, 40, 900, 2, 1600):
        forced = rng.integers(-1, n_member, size=(reps, w))
        got = rel.members(rel.draw(forced), 0, reps, forced)
        np.testing.assert_array_equal(got, _by_definition(rel.keys, forced, n_member))


@pytest.mark.parametrize("seed", range(4))
def test_ranks_of_the_band_by_their_bracket_or_by_a_selection_are_those_of_a_sort(seed):
    # the band's keys from a bracket found on a sample of the keys; a sample that misleads (every
    # sampled key 0) falls back to a selection over every key: the values of a full sort either way
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20_000, 60_000))
    for keys in (rng.random(n), rng.integers(0, 7, n).astype(float)):
        misleading = keys.copy()
        misleading[::max(1, n // limits._SAMPLE)] = 0.0
        for k in (keys, misleading):
            stop = int(rng.integers(1, n + 1))
            for start in (0, max(0, stop - 900), stop - 1):
                np.testing.assert_array_equal(limits._ranks_sorted(k, start, stop),
                                              np.sort(k)[start:stop])


def test_kept_p_values_are_the_ones_each_call_computes_bit_for_bit():
    # a family's re-tests: counts that recur across calls, new ones among them, in any order
    rng = np.random.default_rng(4)
    n1, big_n = 800, 1300
    tested = _Tested(n1, big_n, 0.95)
    for size in (40, 40, 7, 40, 1, 40):
        k1 = rng.integers(0, 30, size)
        k2 = rng.integers(0, 12, size)
        p, hi = tested(k1, k2)
        want_p, want_hi = _p_and_upper(k1, k2, n1, big_n, 0.95)
        assert p.tobytes() == want_p.tobytes() and hi.tobytes() == want_hi.tobytes()
    assert 0 < tested.codes.size < 6 * 40 and (np.diff(tested.codes) > 0).all()


def _limits_by_every_test_at_every_size(tests, family, risks, materiality, power, reps, seed):
    """The detection limits by their definition: at each leak size the search visits, every test
    re-run on a repetitions x records matrix (relabelling by ``argsort``, scores raised, flags
    re-cut), then the doubling and bisection on the share of repetitions any of a risk's tests
    reads high in."""
    from synthguard.stats import make_rng

    n1, big_n = tests[0].n_member, tests[0].scores.size
    cands = limits._candidates(tests, family)
    rng = make_rng(seed, "limits", family)
    orders = np.vstack([rng.permutation(cands) for _ in range(reps)])
    partner_of = np.full(n1, -1, dtype=np.int64)
    first = tests[0].leaks[family]
    if first.partners is not None:
        partner_of[first.sources] = first.partners
    keys = rng.random((reps, big_n))

    def highs(k):
        src = orders[:, :k]
        members = _by_definition(keys, np.concatenate([src, partner_of[src]], axis=1), n1)
        res = np.zeros((reps, len(tests)), dtype=bool)
        for j, t in enumerate(tests):
            resp = t.leaks[family]
            for r in range(reps):  # loop over repetitions (a dozen): the reference
                scores = t.scores.copy()
                hit = np.isin(resp.src, src[r])
                np.maximum.at(scores, resp.target[hit], resp.score[hit])
                flags = scores > 0 if t.tail is None else tail_flags(scores, t.tail)
                k1 = int((flags & members[r]).sum())
                k2 = int(flags.sum()) - k1
                p = fisher_p(np.array([k1]), np.array([k1 + k2]), n1, big_n)[0]
                # the verdict's reading of this test: its evidence's one-sided bound
                up = Evidence.from_counts("t", k1, n1, k2, big_n - n1).upper
                res[r, j] = p <= t.threshold and up >= materiality
        return res

    out = {}
    for risk in risks:
        cols = [j for j, t in enumerate(tests) if risk in t.risks]

        def pw(k, cols=cols):
            return float(highs(k)[:, cols].any(axis=1).mean())

        hi = 1
        while hi < cands.size and pw(hi) < power:
            hi = min(int(cands.size), hi * 2)
        if pw(hi) < power:
            out[risk] = (None, pw(hi))
            continue
        lo = hi // 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            hi, lo = (mid, lo) if pw(mid) >= power else (hi, mid)
        out[risk] = (hi, pw(hi))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_limits_trying_a_risks_tests_one_at_a_time_are_those_of_every_test_at_every_size(seed):
    """family_limits runs a risk's tests at a leak size one at a time and stops once the share
    of repetitions some of them read high in reaches the power (cheap counts first): the limits
    and powers are those of running every test at every size. Plain tests, a tail test, a test
    no leak row raises, leak rows built of two training records (partners), sources outside the
    common candidates, repeated sources; risks seen by one test, by several, by none."""
    from synthguard.core.results import LeakResponse

    rng = np.random.default_rng(seed)
    n1, n2, reps = 160, 140, 12
    big_n = n1 + n2
    src = np.sort(rng.choice(n1, 60, replace=False))
    partners = rng.choice(np.setdiff1d(np.arange(n1), src), src.size)

    def response(lift, keep=1.0):
        # sources: the family's candidates as this test states them (a share of them: the
        # others leak rows to it all the same, outside the common candidates)
        sources = src[rng.random(src.size) < keep]
        s = np.r_[src, src[:5]]  # updates of every source, five of them twice
        target = np.where(rng.random(s.size) < 0.5, s, rng.integers(0, big_n, s.size))
        return LeakResponse(sources, s, target, lift * rng.random(s.size),
                            partners=partners[np.searchsorted(src, sources)])

    tests = [
        limits.InjectionTest("copies", (rng.random(big_n) < 0.03).astype(float), None, n1, 0.05,
                             ("presence", "any"), {"interp": response(1.0)}),
        limits.InjectionTest("near", (rng.random(big_n) < 0.05).astype(float), None, n1, 0.2,
                             ("presence", "linkability", "any"), {"interp": response(1.0, 0.8)}),
        limits.InjectionTest("tail", rng.normal(size=big_n), 0.1, n1, 0.1,
                             ("linkability", "any"), {"interp": response(6.0)}),
        limits.InjectionTest("deaf", (rng.random(big_n) < 0.1).astype(float), None, n1, 0.05,
                             ("inference", "any"), {"interp": response(0.0)}),
    ]
    risks = ["presence", "linkability", "inference", "singling_out", "any"]
    got = limits.family_limits(tests, "interp", risks, materiality=0.01, power=0.8, reps=reps,
                               seed=seed)
    want = _limits_by_every_test_at_every_size(tests, "interp", risks, 0.01, 0.8, reps, seed)
    for risk in risks:
        assert (got[risk]["k"], got[risk]["power"]) == (want[risk] if risk != "singling_out"
                                                        else (None, None))


def test_limits_from_one_threads_kept_arrays_are_those_of_fresh_arrays_family_after_family():
    """A thread measuring several families keeps its repetitions x records arrays (``Scratch``):
    each family's limits are those it gets with fresh arrays, whichever family came before (the
    arrays hold the last family's keys and places when the next one starts), and the arrays are
    reused rather than made again."""
    from synthguard.core.results import LeakResponse

    rng = np.random.default_rng(5)
    n1, n2 = 300, 260
    scores = rng.normal(size=n1 + n2)
    whole, half = {}, {}
    for j, fam in enumerate(("exact", "noise5", "interp")):
        src = np.sort(rng.choice(n1, 80 + 40 * j, replace=False))
        whole[fam] = LeakResponse(src, src, src, scores[src] + 3.0 + j)
        # the second test states half the sources: the others lie outside the candidates
        half[fam] = LeakResponse(src[::2], src[::2], src[::2], scores[src[::2]] + 1.0)
    # tail tests seeing every family: what they keep from one family's keys must not serve the next
    tests = [limits.InjectionTest("whole", scores, 0.05, n1, 0.05, ("presence", "any"), whole),
             limits.InjectionTest("half", scores, 0.05, n1, 0.05, ("presence", "any"), half)]
    kw = {"materiality": 0.01, "reps": 20}
    fresh = {fam: limits.family_limits(tests, fam, ["presence"], **kw) for fam in ("exact", "noise5", "interp")}
    scratch = limits.Scratch()
    for fam in ("interp", "exact", "noise5", "interp"):
        assert limits.family_limits(tests, fam, ["presence"], scratch=scratch, **kw) == fresh[fam], fam
    keys = scratch.array("keys", (20, n1 + n2), np.float64)
    limits.family_limits(tests, "exact", ["presence"], scratch=scratch, **kw)
    assert scratch.array("keys", (20, n1 + n2), np.float64).base is keys.base  # the same memory
    assert fresh["exact"]["presence"]["k"] is not None


def test_a_limit_reads_each_test_as_the_verdict_does():
    """A leak reads high in the limits' repetitions when the test's evidence would read high in
    the verdict: significant and its one-sided bound (``Evidence.upper``, the interval's upper
    end) reaching the materiality. With no chance flags the limit is that first count: 13 of 2,000
    at 1 % (the two-sided 95 % end, which the limits read before, reaches 1 % at 12)."""
    from synthguard.core.results import LeakResponse
    from synthguard.run.limits import InjectionTest, family_limits

    n, m = 2000, 0.01
    resp = LeakResponse(np.arange(n), np.arange(n), np.arange(n), np.ones(n))
    t = InjectionTest("copies", np.zeros(2 * n), None, n, 0.05, ("presence",), {"exact": resp})
    first = next(k for k in range(1, n) if Evidence.from_counts("t", k, n, 0, n).upper >= m
                 and Evidence.from_counts("t", k, n, 0, n).p_value <= 0.05)
    assert first == 13 and newcombe_upper(np.array([12]), n, np.array([0]), n, 0.95)[0] >= m
    assert family_limits([t], "exact", ["presence"], materiality=m, reps=20)["presence"]["k"] == first
