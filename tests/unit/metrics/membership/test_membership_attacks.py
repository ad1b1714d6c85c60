"""The membership-attack ensemble (``membership_attacks``): calibrated on fresh samples, powerful on
realistic leaks, a DP-unit bound, the most exposed records, and the tests behind them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from synthguard.calibration import calibration_split, leaky_release
from synthguard.core.results import Evidence
from synthguard.demo import make_demo, make_population
from synthguard.metrics.membership import ATTACKS
from synthguard.metrics.membership.ensemble import membership_attacks
from synthguard.metrics.privacy.closest_distance_mia import closest_distance_mia
from synthguard.metrics.privacy.near_copies import materiality_tail
from synthguard.registry import Context, get_metric
from synthguard.stats import auc_max_t, auc_test, epsilon_lower_bound

from ....helpers import run


# ---------------------------------------------- releases (the calibration suite, with its null and
# realistic leaks on five tables, is tests/calibration/test_membership_ensemble.py)
def release(kind: str, parts: dict[str, pd.DataFrame], seed: int) -> pd.DataFrame:
    """The release of ``kind`` for a calibration split."""
    fresh, train = parts["fresh"], parts["original"]
    if kind == "fresh":
        return fresh
    if kind == "near10":  # near-copies make up 10 % of the release
        return leaky_release(fresh, train, share=0.1 * len(fresh) / len(train), seed=seed,
                             perturb=True)
    if kind == "copies30":
        return leaky_release(fresh, train, share=0.3, seed=seed)
    raise ValueError(kind)


def split(frame: pd.DataFrame, seed: int) -> dict[str, pd.DataFrame]:
    return calibration_split(frame, seed=seed)


def _table(shared_data, name: str) -> pd.DataFrame:
    return pd.read_csv(shared_data / f"{name}.csv")


def _run(frame: pd.DataFrame, kind: str, seed: int, **kw):
    parts = split(frame, seed)
    ctx = Context.from_frames(parts["original"], release(kind, parts, seed), parts["control"],
                              seed=seed)
    return run(membership_attacks, ctx=ctx, **{"n_perm": 499, **kw})


def _shift_for_auc(auc: float) -> float:
    from scipy.special import ndtri

    return float(np.sqrt(2.0) * ndtri(auc))  # two unit normals: AUC = Phi(shift / sqrt 2)


# --------------------------------------------------------------------------- the tests themselves
def test_true_auc_of_070_with_200_members_and_200_non_members_reads_significant_in_80pct_of_runs():
    rng = np.random.default_rng(7)
    lab = np.r_[np.ones(200, bool), np.zeros(200, bool)]
    shift = _shift_for_auc(0.70)
    hits = 0
    runs = 60
    for r in range(runs):
        signal = rng.standard_normal(400) + shift * lab
        noise = rng.standard_normal((6, 400))  # six attacks that see nothing join the max-T
        mt = auc_max_t(lab, np.vstack([signal, noise]), n_perm=199, seed=r, tails=(0.01, 0.05))
        hits += mt["p_max"] < 0.05
    assert hits / runs >= 0.8


def test_max_t_over_attacks_keeps_its_level_on_null_score_vectors():
    rng = np.random.default_rng(11)
    lab = np.r_[np.ones(150, bool), np.zeros(100, bool)]
    alarms = 0
    runs = 300
    for r in range(runs):
        base = rng.standard_normal(250)
        att = np.vstack([base + 0.5 * rng.standard_normal(250) for _ in range(5)]
                        + [np.round(rng.standard_normal(250))])  # correlated attacks and ties
        alarms += auc_max_t(lab, att, n_perm=199, seed=r, tails=(0.01, 0.05))["p_max"] < 0.05
    assert alarms / runs <= 0.08  # 0.05 plus sampling error of 300 runs


def test_an_auc_interval_excluding_one_half_is_significant():
    rng = np.random.default_rng(3)
    lab = np.r_[np.ones(200, bool), np.zeros(200, bool)]
    seen = 0
    for auc in np.linspace(0.52, 0.75, 40):
        for _ in range(5):
            s = rng.standard_normal(400) + _shift_for_auc(auc) * lab
            t = auc_test(lab, s)
            if t["ci"][0] > 0.5:
                seen += 1
                assert t["p_value"] < 0.05
    assert seen > 50


def test_epsilon_bound_of_a_chance_attack_has_an_interval_including_zero():
    b = epsilon_lower_bound(30, 300, 30, 300)
    assert b["interval"][0] < 0 < b["interval"][1]
    assert b["epsilon_lower"] == 0.0
    assert epsilon_lower_bound(90, 300, 0, 300)["epsilon_lower"] > 2.0


# ------------------------------------------------------------------------------ on the metric
@pytest.mark.slow
def test_thirty_percent_exact_copies_give_an_epsilon_bound_well_above_zero(shared_data):
    for name in ("hhs_breaches", "anes96", "nhefs"):
        res = _run(_table(shared_data, name), "copies30", 0)
        eps = res.details["epsilon"]
        assert eps["epsilon_lower"] > 0.5, (name, eps)
        assert res.details["ensemble"]["p_value"] < 0.01
        assert res.evidence.effect > 0.1  # TPR - FPR in the pooled tail: a share of training records


def test_fresh_sample_gives_an_epsilon_interval_including_zero(shared_data):
    res = _run(_table(shared_data, "diabetes_raw"), "fresh", 0)
    eps = res.details["epsilon"]
    assert eps["interval"][0] <= 0.0 <= eps["interval"][1]


def test_evidence_is_one_presence_test_weighted_two_with_the_ensemble_p_value(shared_data):
    res = _run(_table(shared_data, "diabetes_raw"), "copies30", 1)
    ev = res.evidence
    assert ev.risk == "presence" and ev.sees == () and ev.weight == 2.0
    assert ev.p_value == res.details["ensemble"]["p_value"]
    assert ev.effect == pytest.approx(res.details["advantage"]["value"])
    assert set(res.details["attacks"]) == set(ATTACKS)
    for a, entry in res.details["attacks"].items():
        assert {"auc", "ci", "p_value", "p_adjusted", "tpr_at_fpr_0.01", "tpr_at_fpr_0.001",
                "top_records"} <= set(entry), a
    d = res.to_dict()  # serialises
    assert d["name"] == "membership_attacks" and d["evidence"]["risk"] == "presence"


def _population_run(seed: int, copied: float = 0.0, materiality: float = 0.05, **params):
    """membership_attacks on 400 training and 400 control people of a made-up population; the
    release is 400 fresh people of the same population plus verbatim copies of ``copied`` of the
    training records (0: a fresh release, the null)."""
    pop = make_population(1200, seed)
    o, c, fresh = pop.iloc[:400], pop.iloc[400:800], pop.iloc[800:]
    rel = pd.concat([fresh, o.sample(int(round(copied * len(o))), random_state=seed)],
                    ignore_index=True)
    ctx = dataclasses.replace(Context.from_frames(o, rel, c, seed=seed), materiality=materiality)
    return run(membership_attacks, ctx=ctx, **{"n_perm": 99, **params})


def test_effect_counts_every_scored_member_and_non_member_in_a_materiality_tail():
    # a half split would count 200 and 200 (or 150 and 150 with max_rows=300)
    for max_rows, n in ((None, 400), (300, 300)):
        res = _population_run(0, max_rows=max_rows)
        ev, adv = res.evidence, res.details["advantage"]
        assert (ev.n_member, ev.n_non_member) == (n, n) == (adv["members"], adv["non_members"])
        assert res.n == 2 * n
        # the tail is close_neighbours' default on the scored records: 2.5 x 5 % x n of 2n
        assert adv["tail"] == materiality_tail(2 * n, n, 0.05) == 0.0625
        for a, b in adv["by_attack"].items():  # ties at the cut included: at least the tail's share
            assert b["members_flagged"] + b["non_members_flagged"] >= np.ceil(0.0625 * 2 * n), a
    # a larger materiality widens the tail (room for 2.5 material leaks)
    wide = _population_run(0, materiality=0.1).details["advantage"]
    assert wide["tail"] == 0.125
    assert all(b["members_flagged"] + b["non_members_flagged"] >= 100
               for b in wide["by_attack"].values())


def test_evidence_is_the_attack_whose_one_sided_upper_bound_is_largest():
    res = _population_run(1, copied=0.02)
    ev, adv = res.evidence, res.details["advantage"]
    uppers = {}
    for a, b in adv["by_attack"].items():  # every attack's bound from its own counts
        e = Evidence.from_counts("x", b["members_flagged"], 400, b["non_members_flagged"], 400)
        assert (e.effect, e.upper) == pytest.approx((b["value"], b["upper"])), a
        uppers[a] = e.upper
    assert len(set(uppers.values())) > 1  # the choice matters on this release
    assert adv["attack"] == max(uppers, key=uppers.get)
    assert ev.upper == pytest.approx(max(uppers.values())) == pytest.approx(adv["upper"])
    assert (ev.k_member, ev.k_non_member) == (adv["members_flagged"], adv["non_members_flagged"])
    assert ev.p_value == res.details["ensemble"]["p_value"]  # the max-T p, not the attack's Fisher p
    assert "largest one-sided upper bound" in ev.test and "largest true effect" in ev.note


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_leak_of_the_materiality_is_not_ruled_out(seed):
    # 5 % of the training records copied into a fresh release, materiality 5 %: the effect's upper
    # bound must reach 5 % (else the presence risk could read low on a material leak)
    ev = _population_run(seed, copied=0.05).evidence
    assert ev.upper >= 0.05, (ev.effect, ev.effect_ci, ev.upper)


def test_demo_leaky_release_is_bounded_above_the_materiality_from_below():
    d = make_demo(1200, seed=0)  # 40 % of the release verbatim copies, 30 % near-copies
    ctx = dataclasses.replace(Context.from_frames(d["original"], d["leaky"], d["control"], seed=0),
                              materiality=0.05)
    ev = run(membership_attacks, ctx=ctx, n_perm=99).evidence
    assert ev.effect_ci[0] > 0.05 and ev.p_value < 0.05


def test_roles_partition_the_control_and_records_list_the_most_exposed_training_rows(shared_data):
    frame = _table(shared_data, "anes96")
    parts = split(frame, 0)
    rel = release("copies30", parts, 0)
    ctx = Context.from_frames(parts["original"], rel, parts["control"], seed=0)
    roles = run(membership_attacks, ctx=ctx, n_perm=199, reference="split").details["roles"]
    ref, nm = set(roles["reference_rows"]), set(roles["non_member_rows"])
    assert not ref & nm and ref | nm == set(range(len(parts["control"])))
    assert roles["reference"] + roles["non_members"] == len(parts["control"])
    res = run(membership_attacks, ctx=ctx, n_perm=199)  # pooled: every control row is a non-member
    roles = res.details["roles"]
    assert roles["reference_kind"] == "pooled" and "reference_rows" not in roles
    assert roles["non_member_rows"] == list(range(len(parts["control"])))
    assert roles["reference"] == len(parts["original"]) + len(parts["control"])
    recs = [r for r in res.records if r["attack"] == "closest_distance"]
    assert len(recs) == 10 and recs[0]["score"] >= recs[-1]["score"]
    # the closest-distance attack's most exposed rows are copied training rows (distance 0)
    copied = set(map(tuple, rel.astype(str).to_numpy()))
    rows = parts["original"].astype(str).to_numpy()
    assert all(tuple(rows[r["row"]]) in copied for r in recs)


def _canonical(original, synthetic, control, seed):
    """The context the runner builds: tables in canonical content order (as ``evaluate`` does)."""
    from synthguard.data.encoding import EncodedView

    tables = Context.from_frames(original, synthetic, control, seed=seed).tables.in_canonical_order()
    return Context(tables=tables, encoded=EncodedView(tables), seed=seed)


def test_same_seed_same_numbers_whatever_the_row_order(shared_data):
    frame = _table(shared_data, "diabetes_raw")
    parts = split(frame, 2)
    rel = release("near10", parts, 2)
    a = run(membership_attacks, ctx=_canonical(parts["original"], rel, parts["control"], 5), n_perm=199)
    rng = np.random.default_rng(0)
    shuf = {k: v.iloc[rng.permutation(len(v))] for k, v in parts.items()}
    b = run(membership_attacks, ctx=_canonical(shuf["original"], rel.iloc[::-1], shuf["control"], 5),
                           n_perm=199)
    for key in ("ensemble", "epsilon", "advantage", "attacks"):
        da, db = a.to_dict()[key], b.to_dict()[key]
        da.pop("seconds", None)
        db.pop("seconds", None)
        if key == "attacks":
            for x in (*da.values(), *db.values()):
                x.pop("seconds")
                x.pop("top_records")  # input row numbers: differ by construction
        assert da == db, key
    a, c = (run(membership_attacks, ctx=_canonical(parts["original"], rel, parts["control"], seed),
                               n_perm=199, reference="split") for seed in (5, 6))
    assert c.details["roles"]["reference_rows"] != a.details["roles"]["reference_rows"]


def test_membership_attacks_is_registered_in_the_attacks_family():
    spec = get_metric("membership_attacks")
    assert spec.family == "attacks" and spec.needs == ("original", "synthetic", "control")


def test_closest_distance_mia_counts_its_auc_test_not_only_the_tail():
    # members a little closer on the whole (AUC ~0.62) but no closer in the 1 % tail
    rng = np.random.default_rng(0)
    n = 200
    syn = pd.DataFrame({"x": np.linspace(0, 1, 1001)})  # a grid: distance = offset from it
    base = np.round(rng.random(2 * n) * 990) / 1000
    orig = pd.DataFrame({"x": base[:n] + rng.uniform(0.00005, 0.00020, n)})
    ctrl = pd.DataFrame({"x": base[n:] + rng.uniform(0.00005, 0.00025, n)})
    res = run(closest_distance_mia, ctx=Context.from_frames(orig, syn, ctrl, seed=0), n_boot=50)
    tail_p = res.details["tail_0.01"]["p_value"]
    assert tail_p > 0.05  # the tail alone would not see it
    assert res.ci[0] > 0.5 and res.details["auc_test"]["p_value"] < 0.025
    assert res.evidence.p_value < 0.05
    assert res.evidence.p_value == pytest.approx(2 * min(tail_p, res.details["auc_test"]["p_value"]))
    assert res.evidence.risk == "presence"


def test_evaluate_runs_the_ensemble_and_maps_exposed_records_to_input_rows(demo_data):
    import json

    from synthguard import evaluate
    from synthguard.demo import DEMO_METADATA

    rep = evaluate(demo_data["original"], demo_data["leaky"], demo_data["control"], DEMO_METADATA,
                   metrics=["membership_attacks"])
    res = rep["membership_attacks"]["result"]
    json.dumps(res)  # plain JSON
    assert res["ensemble"]["p_value"] < 0.01 and res["value"] > 0.6
    assert res["epsilon"]["epsilon_lower"] > 0.5
    rows = {r["row"] for r in res["records"] if r["attack"] == "closest_distance"}
    top = {r["row"] for r in res["attacks"]["closest_distance"]["top_records"]}
    assert rows == top and all(0 <= r < len(demo_data["original"]) for r in rows)


def test_scored_records_above_max_rows_are_a_random_draw_not_clusters_of_twins():
    """Above ``max_rows`` the scored records are a seeded random draw over the canonical order: the
    same rows whatever the input order, and identical rows are drawn independently (a content key
    would keep or drop every copy of a row together)."""
    import pandas as pd

    from synthguard.metrics.membership.ensemble import _random_draw

    df = pd.DataFrame({"a": np.repeat(np.arange(100), 4), "b": 1.0})  # every row four times
    shuffled = df.iloc[np.random.default_rng(9).permutation(len(df))].reset_index(drop=True)
    a = _random_draw(df, 200, np.random.default_rng(3))
    b = _random_draw(shuffled, 200, np.random.default_rng(3))
    assert sorted(df.iloc[a]["a"]) == sorted(shuffled.iloc[b]["a"])
    copies = np.bincount(df.iloc[a]["a"], minlength=100)
    assert 0 < np.mean((copies > 0) & (copies < 4))  # some rows keep only some of their copies


def test_closest_distance_mia_votes_once_when_membership_attacks_contains_its_attack():
    """``membership_attacks`` runs the closest-distance attack and tests it jointly with the others:
    when both ran, ``closest_distance_mia`` is contained in it (``contained_in``; not ``same_as``,
    which is the same statistic on the same records: its numbers are its own), takes its container's
    adjusted p-value and level, and is one Holm unit with it, which carries the pair's share of the
    false-alarm budget (weight 2 + 2): counted once, and the ensemble loses no power by it."""
    from synthguard import evaluate
    from synthguard.demo import make_demo

    d = make_demo(600, seed=1)
    both = evaluate(d["original"], d["leaky"], d["control"], seed=0,
                    metrics=["exact_matches", "closest_distance_mia", "membership_attacks"])
    alone = evaluate(d["original"], d["leaky"], d["control"], seed=0,
                     metrics=["exact_matches", "membership_attacks"])
    rows = {t["metric"]: t for t in both.verdict.to_dict()["tests"]}
    cdm, ma = rows["closest_distance_mia"], rows["membership_attacks"]
    assert cdm["contained_in"] == "membership_attacks" and cdm["same_as"] is None
    assert ma["same_as"] is None and "contained_in" not in ma
    assert cdm["p_adjusted"] == ma["p_adjusted"] and cdm["level"] == ma["level"]
    assert "counted once" in both.result("closest_distance_mia").evidence.note
    w_cdm = both.result("closest_distance_mia").evidence.weight
    assert both.result("membership_attacks").evidence.weight == pytest.approx(
        alone.result("membership_attacks").evidence.weight + w_cdm)
    # without the ensemble it votes on its own
    solo = evaluate(d["original"], d["leaky"], d["control"], seed=0,
                    metrics=["exact_matches", "closest_distance_mia"])
    row = next(t for t in solo.verdict.to_dict()["tests"] if t["metric"] == "closest_distance_mia")
    assert row["same_as"] is None and "contained_in" not in row


def test_html_lists_the_most_exposed_training_records_per_attack_and_the_roles(demo_data):
    """The HTML report has a (folded, script-free) section with each attack's ten most exposed
    training rows, as in the JSON, and which control rows were reference and non-members (the
    metric's typed sections, drawn by the report without reading its details)."""
    import re
    from html import unescape

    from synthguard import evaluate
    from synthguard.core.format import row_ranges

    d = {k: v.iloc[:600] for k, v in demo_data.items()}
    rep = evaluate(d["original"], d["leaky"], d["control"], seed=0, metrics=["membership_attacks"])
    page = rep.to_html()
    assert "<script" not in page.lower()
    start = page.index("<b>membership_attacks</b>: the most exposed training records per attack")
    section = unescape(page[start:page.index("</details>", start)])
    det = rep.result("membership_attacks").details
    for attack, entry in det["attacks"].items():
        row = re.search(rf"<td>{attack}</td>.*?</tr>", section).group(0)
        listed = [int(x) for x in re.findall(r"(\d+) \(", row)]
        assert listed == [r["row"] for r in entry["top_records"]] and len(listed) == 10, attack
    start = page.index("<b>membership_attacks</b>: which control rows were reference")
    roles_html = unescape(page[start:page.index("</details>", start)])
    roles = det["roles"]
    assert "every other real record" in roles_html  # the pooled reference
    assert row_ranges(roles["non_member_rows"]) in roles_html
    assert f"{roles['reference']} rows" in roles_html and f"{roles['non_members']} rows" in roles_html
    assert row_ranges([0, 1, 2, 5, 7, 8]) == "0-2, 5, 7-8"


def test_one_cell_counts_equal_a_brute_force_count_with_missing_values_and_exact_twins():
    from synthguard.data.encoding import Block
    from synthguard.metrics.membership.attacks import one_cell_counts

    rng = np.random.default_rng(0)
    num = rng.integers(0, 3, (400, 3)).astype(float)
    num[rng.random((400, 3)) < 0.1] = np.nan
    num[rng.random((400, 3)) < 0.05] = -0.0
    cat = rng.integers(-1, 3, (400, 2))  # -1 = missing
    pool = Block(num, cat, ("a", "b", "c"), ("d", "e"))
    got = one_cell_counts(pool.take(np.arange(80)), pool)
    full = np.c_[num, cat]
    eq = (full[:80, None, :] == full[None, :, :]) | (np.isnan(full[:80, None, :])
                                                     & np.isnan(full[None, :, :]))
    assert got.tolist() == (eq.sum(axis=2) >= 4).sum(axis=1).tolist()


def test_pooled_reference_scores_each_record_as_if_it_were_left_out_of_the_reference():
    """With the reference = every real record (unlabelled) the score of a record equals its score
    against the reference without it: the same for members and non-members (label-free), so the
    label permutation stays exact."""
    from synthguard.data.encoding import Block
    from synthguard.engine.neighbors import gower
    from synthguard.metrics.membership.attacks import attack_scores

    rng = np.random.default_rng(4)
    mk = lambda a: Block(a, np.zeros((len(a), 0), dtype=np.int64), ("a", "b", "c"), ())  # noqa: E731
    real = np.round(rng.normal(size=(300, 3)), 1)
    real[7] = real[3]  # an exact twin: its twin stays in its reference
    syn = mk(real[:100] + rng.normal(scale=0.3, size=(100, 3)))
    metric = gower(np.ptp(real, axis=0))
    names = ("dcr_diff", "plagiarism", "gen_lra")
    pooled = attack_scores(mk(real), syn, mk(real), metric, k=5, attacks=names,
                           query_in_reference=np.arange(300))
    for i in (0, 3, 7, 150, 299):
        rest = mk(np.delete(real, i, axis=0))
        alone = attack_scores(mk(real[i:i + 1]), syn, rest, metric, k=5, attacks=names)
        for a in names:
            assert pooled.scores[a][i] == pytest.approx(alone.scores[a][0]), (a, i)


def test_classifier_features_do_not_depend_on_the_order_of_the_category_codes():
    """Codes follow the tables' order (training rows first); the classifier's features must not,
    or ties between equally frequent values would set members apart under the null."""
    from synthguard.data.encoding import Block
    from synthguard.metrics.membership.attacks import classifier_features

    rng = np.random.default_rng(2)
    codes = rng.integers(0, 400, size=(3, 500, 2))  # many values seen once or twice
    perm = rng.permutation(400)  # the same values under another code order
    mk = lambda c: Block(np.zeros((len(c), 0)), c, (), ("a", "b"))  # noqa: E731
    a, _ = classifier_features([mk(c) for c in codes])
    b, _ = classifier_features([mk(perm[c]) for c in codes])
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_domias_reads_the_population_density_from_the_reference_search_with_the_same_bits():
    """When the reference holds every real record, DOMIAS' nearest other real records come from
    the reference search: the same scores bit for bit as one search of each real block (mixed
    columns, ties, a block smaller than k + 1)."""
    from synthguard.data.encoding import Block
    from synthguard.engine.neighbors import gower
    from synthguard.metrics.membership.attacks import attack_scores

    rng = np.random.default_rng(5)

    def mk(num, cat):
        return Block(num, cat, ("a", "b"), ("c",))

    for n_c in (3, 120):  # a control block smaller than k + 1, then a larger one
        num = np.round(rng.normal(size=(300 + n_c, 2)), 1)
        cat = rng.integers(0, 4, size=(300 + n_c, 1))
        real = mk(num, cat)
        blocks = [mk(num[:300], cat[:300]), mk(num[300:], cat[300:])]
        syn = mk(num[:100] + rng.normal(scale=0.2, size=(100, 2)), cat[:100])
        metric = gower(np.ptp(num, axis=0), clip=True)
        args = dict(k=5, attacks=("domias",), real=blocks, query_in_reference=np.arange(300 + n_c))
        searched = attack_scores(real, syn, real, metric, **args)
        read = attack_scores(real, syn, real, metric, reference_is_real=True, **args)
        assert np.array_equal(read.scores["domias"], searched.scores["domias"]), n_c
        assert read.notes["domias"] == searched.notes["domias"]


def test_rows_and_ranks_equal_numpys_unique_and_searchsorted():
    from synthguard.metrics.membership.attacks import _rows_and_ranks

    rng = np.random.default_rng(0)
    idx = rng.integers(-1, 500, (300, 7))
    uniq, at = _rows_and_ranks(idx, 500)
    want = np.unique(idx[idx >= 0])
    assert np.array_equal(uniq, want)
    assert np.array_equal(at, np.where(idx >= 0, np.searchsorted(want, idx), -1))
    _, inv = np.unique(idx[idx >= 0], return_inverse=True)
    assert np.array_equal(at[idx >= 0], inv.reshape(-1))


def test_the_classifier_reads_only_the_release_rows_it_is_fitted_on(monkeypatch):
    """Above ``max_fit_rows`` the classifier's release rows are a subsample: only those are taken
    from the backend (the whole release was taken and dropped, which on a cluster at 10M rows
    fetched every release row to the driver), and its scores are those of a classifier fitted on
    the subsample."""
    from synthguard.engine.backend import LocalBackend

    d = make_demo(n=600, seed=3)
    ctx = Context.from_frames(d["original"], d["leaky"], d["control"], seed=0)
    asked: list[tuple[str, int]] = []
    taken = LocalBackend.encoded_rows

    def counted(self, role, columns, rows):
        asked.append((role, int(np.asarray(rows).size)))
        return taken(self, role, columns, rows)

    monkeypatch.setattr(LocalBackend, "encoded_rows", counted)
    res = run(membership_attacks, ctx=ctx, max_fit_rows=100)
    release_rows = [n for role, n in asked if role == "synthetic"]  # also the rows gen_lra searches
    assert 100 in release_rows and max(release_rows) < len(d["leaky"])
    assert "100 release and 100 reference rows" in str(res.to_dict())
