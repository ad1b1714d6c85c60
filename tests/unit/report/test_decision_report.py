"""Issue #23: a report a privacy officer can sign.

The decision block (one line per risk) leads the console, the HTML page and the notebook display;
the records behind it share one schema; the dossier's numbers are the JSON's; the page is short
and shows each test once; the console never cuts a number or a sentence.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import synthguard
from synthguard.cli import main
from synthguard.demo import DEMO_METADATA, make_demo
from synthguard.report.risks import RISK_ORDER, pct
from tests.console_text import flat
from tests.helpers import coded_copies

PRIVACY = ("exact_matches,dcr,closest_distance_mia,singling_out_univariate,"
           "singling_out_multivariate,linkability,inference,anonymeter,cap,zero_cap,"
           "disclosure_protection,k_anonymity,quality_report,accuracy")


@pytest.fixture(scope="module")
def demo_reports():
    data = make_demo(900, 0)
    # the safe release: held-out people of the demo's population (150 of its 450 control rows, the
    # control the other 300), none of them a training person. The demo's copula of a few hundred
    # training rows redraws rare values (a true singling-out finding, docs/calibration.md) close
    # to the false-alarm line, on one CPU's floats and not on another's.
    data["safe"] = data["control"].iloc[300:].reset_index(drop=True)
    data["control"] = data["control"].iloc[:300].reset_index(drop=True)
    reps = {name: synthguard.evaluate(data["original"], data[name], control=data["control"],
                                      metadata=DEMO_METADATA, metrics=PRIVACY.split(","), seed=0)
            for name in ("leaky", "safe")}
    return data, reps


def test_decision_block_names_every_risk_with_level_interval_and_what_it_asks(demo_reports):
    _, reps = demo_reports
    rep = reps["leaky"]
    risks = rep.risks()
    assert [r["risk"] for r in risks] == list(RISK_ORDER)
    flat = " ".join(rep.to_console(100).split())
    first: dict[str, str] = {}
    for r in risks:
        assert r["level"] == "high"
        assert r["effect_ci"] is not None and r["detection_limits"]
        # the verdict's own summary, unchanged, then what it asks for (run.wording); a finding
        # that drives several criteria is stated once, the later risks pointing back to it
        assert pct(r["effect"]) in r["summary"]
        if r["summary"] in first:
            assert (f"{r['title']}: HIGH. The same finding as for {first[r['summary']]} (above). "
                    "Do not publish as is.") in flat
        else:
            first[r["summary"]] = r["title"].lower()
            assert f"{r['title']}: HIGH. {r['summary']}. Do not publish as is." in flat
        assert flat.count(r["summary"]) == 1, r["summary"]
    assert re.search(r"\d+ of the \d+ release rows \(\d+\.\d %\) are (verbatim training rows|"
                     r"listed to drop, \d+ verbatim training rows)[^:]*: drop them", flat)
    safe = {r["risk"]: r["level"] for r in reps["safe"].risks()}
    assert safe["presence"] in ("low", "inconclusive")
    # the demo's Gaussian copula, fitted on 300 training rows, reproduces training-only zip codes
    # (4 of the 5 zips held by one training person appear in the release, none of the 3 held by
    # one control person): a true singling-out leak, which the verdict may rightly call
    assert safe["linkability"] in ("low", "inconclusive")


def test_records_out_lists_every_copied_release_row_and_nothing_else(tmp_path):
    rng = np.random.default_rng(5)
    n = 500
    original = pd.DataFrame({"x": rng.normal(size=n).round(6), "y": rng.normal(size=n).round(6),
                             "g": rng.choice(list("abc"), n)})
    control = pd.DataFrame({"x": rng.normal(size=n).round(6), "y": rng.normal(size=n).round(6),
                            "g": rng.choice(list("abc"), n)})
    fresh = pd.DataFrame({"x": rng.normal(size=n).round(6), "y": rng.normal(size=n).round(6),
                          "g": rng.choice(list("abc"), n)})
    release = fresh.copy()
    copied = np.sort(rng.choice(n, int(0.3 * n), replace=False))  # release rows that are copies
    source = rng.choice(n, copied.size, replace=False)  # the training rows they copy
    release.iloc[copied] = original.iloc[source].to_numpy()
    paths = {}
    for key, frame in (("original", original), ("control", control), ("release", release)):
        paths[key] = tmp_path / f"{key}.csv"
        frame.to_csv(paths[key], index=False)
    out = tmp_path / "rows.csv"
    res = CliRunner().invoke(main, ["evaluate", "-o", str(paths["original"]), "-s",
                                    str(paths["release"]), "-c", str(paths["control"]),
                                    "--metrics", "exact_matches,dcr,new_row_synthesis",
                                    "--no-progress", "--records-out", str(out)])
    assert res.exit_code == 0, res.output
    rows = pd.read_csv(out)
    assert list(rows.columns) == ["metric", "risk", "action", "release_row", "training_row", "reason",
                                  "rank", "family", "tests", "round"]
    drop = rows[rows["action"] == "drop"]  # every copy, nothing else
    assert set(drop["release_row"].astype(int)) == set(copied.tolist())
    exact = rows[rows["metric"] == "exact_matches"]
    assert len(exact) == copied.size
    pairs = dict(zip(exact["release_row"].astype(int), exact["training_row"].astype(int),
                     strict=True))
    assert all(pairs[int(r)] == int(s) for r, s in zip(copied, source, strict=True))
    # new_row_synthesis's tolerance matches are listed for review, never as copies to drop
    assert set(rows.loc[rows["metric"] == "new_row_synthesis", "action"]) <= {"review"}


def test_console_never_cuts_a_number_or_sentence_at_80_and_200_columns(demo_reports):
    _, reps = demo_reports
    rep = reps["leaky"]
    for width in (80, 200):
        text = rep.to_console(width)
        assert max(len(line) for line in text.splitlines()) <= width
        whole = flat(text)
        for row in rep.summary_rows():
            assert flat(row["note"] or "") in whole
        for r in rep.risks():
            assert flat(r["summary"]) in whole


def test_compare_wraps_to_the_width(demo_reports):
    _, reps = demo_reports
    from synthguard.report.compare import Comparison

    comp = Comparison(reps)
    for width in (80, 200):
        assert max(len(line) for line in comp.to_console(width).splitlines()) <= width
    assert repr(comp).startswith("<Comparison of 2 release(s): ")
    html = comp._repr_html_()
    assert html.count('id="decision"') == 2


def test_notebook_views_frame_records_and_reprs(demo_reports):
    data, reps = demo_reports
    rep = reps["leaky"]
    frame = rep.to_frame()
    assert len(frame) == len(rep.metrics)
    assert str(frame["n"].dtype) == "Int64"
    assert frame["ci_low"].dtype == float and frame["ci_high"].dtype == float
    row = frame.set_index("metric").loc["exact_matches"]
    assert row["ci_low"] <= row["value"] <= row["ci_high"]
    html = rep._repr_html_()
    assert 'id="decision"' in html and "Singling out" in html and "<script" not in html
    assert "report.records(original, synthetic)" in html and "--records-out" not in html
    assert repr(rep).startswith("<Report verdict HIGH (presence high")
    assert repr(rep.verdict).startswith("<Verdict HIGH: presence high")
    assert rep.verdict.level == "high"
    recs = rep.records(data["original"], data["leaky"])
    assert list(recs.columns) == ["metric", "risk", "action", "release_row", "training_row", "reason",
                                  "rank", "family", "tests", "round"]
    k = rep["exact_matches"]["result"]["synthetic_match_rate"]["k"]
    assert (recs["metric"] == "exact_matches").sum() == k


def test_without_control_the_decision_says_how_to_get_one():
    data = make_demo(400, 0)
    rep = synthguard.evaluate(data["original"], data["leaky"], metadata=DEMO_METADATA,
                              metrics=["exact_matches", "dcr"])
    text = rep.to_console(100)
    assert "Without a control:" in text and "SynEval" in text
    assert re.search(r"about [\d,]+ training and [\d,]+ control rows give a detection limit of 1 %",
                     flat(text))


def test_page_is_short_and_shows_each_test_once(demo_reports):
    _, reps = demo_reports
    rep = reps["leaky"]
    html = rep.to_html()
    assert "<script" not in html.lower()
    privacy = html.split('id="privacy"', 1)[1].split('id="fidelity"', 1)[0]
    heads = re.findall(r"<tr><td><b>([^<]+)</b>", privacy)
    assert len(heads) == len(set(heads))
    tests = {t.metric: t for t in rep.verdict.tests}
    # one row per test the verdict counts; a metric the verdict found to be the same statistic
    # on the same records is named in its host's row, never given a row of its own
    hosts = {m for m, t in tests.items() if t.get("same_as") not in tests}
    assert hosts <= set(heads) and not (set(tests) - hosts) & set(heads)
    util = html.split('id="utility"', 1)[1].split('id="records"', 1)[0]
    assert "badge" not in util
    assert '<details id="config">' in html
    assert "e+0" not in html.split('id="fidelity"', 1)[1].split('id="utility"', 1)[0]


def _decision_cells(html):
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<td>(.*?)</td>", row) for row in body.split("</tr>") if "<td>" in row]


def test_decision_table_states_the_bound_and_nothing_where_a_risk_alarms(demo_reports):
    from synthguard.report.html import decision_html

    _, reps = demo_reports
    for rep in reps.values():
        cells = _decision_cells(decision_html(rep))
        for r, row in zip(rep.risks(), cells, strict=True):
            shown = row[3].replace("\u00a0", " ")
            if r["level"] in ("high", "medium"):
                assert shown == "-"  # a risk that alarms states what it found
                assert pct(r["effect"]) in row[2].replace("\u00a0", " ")
                continue
            # the verdict's bound: the largest of its tests' upper bounds and families' limits;
            # none while a leak family is not assessed (it could leak any share)
            assert shown == ("none" if r["unassessed"] else
                             "nothing below the materiality" if r["bound"] is None
                             else pct(r["bound"]))


def _income_people(rng, n):
    return pd.DataFrame({"income": (rng.lognormal(10, 0.6, n) / 100).round() * 100,
                         "age": rng.integers(18, 80, n), "sex": rng.choice(["f", "m"], n),
                         "region": rng.choice(list("abcdef"), n)})


@pytest.fixture(scope="module")
def income_release():
    """A release whose other columns are fresh but whose incomes are the exact incomes of 30 % of
    the training people: one-column queries like ``income == 13800.0`` single them out."""
    rng = np.random.default_rng(1)
    n = 2000
    original, control, release = (_income_people(rng, n) for _ in range(3))
    pick = rng.choice(n, int(0.3 * n), replace=False)
    release.loc[: pick.size - 1, "income"] = original["income"].to_numpy()[pick]
    metrics = ["exact_matches", "dcr", "near_copies", "singling_out_univariate",
               "singling_out_multivariate", "inference"]
    rep = synthguard.evaluate(original, release, control=control, metrics=metrics, seed=0)
    return original, release, control, metrics, rep


def test_exact_income_singling_out_names_income_and_its_level_after_binning(income_release,
                                                                          tmp_path):
    original, release, control, metrics, rep = income_release
    so = next(r for r in rep.risks() if r["risk"] == "singling_out")
    assert so["level"] == "high"
    assert any(re.fullmatch(r"income == \d+\.0", str(r.get("query")))
               for r in rep["singling_out_univariate"]["result"]["records"])
    (c,) = [c for c in so["coarsening"] if c["column"] == "income"]
    assert c["level_before"] == "high" and c["coarsening"].startswith("10 quantile bins")
    # binned, the excess is gone: no alarm (low, or inconclusive where the run cannot rule out
    # near-copies at this size)
    assert c["level_after"] in ("low", "inconclusive") and c["effect_after"] < so["effect"]
    assert c["text"].startswith("singling out: HIGH, driven by exact values of income; binned "
                                "into 10 quantile bins it reads " + c["level_after"].upper())
    d = json.loads(rep.to_json())
    jso = next(r for r in d["verdict"]["risks"] if r["risk"] == "singling_out")
    assert jso["coarsening"][0]["level_after"] == c["level_after"]
    cost = d["actions"]["coarsen_retest"]
    assert cost["columns_retested"][0] == "income" and len(cost["columns_retested"]) <= 2
    assert set(cost["metrics_rerun"]) == set(metrics)
    from synthguard.run import wording

    flat = " ".join(rep.to_console(100).split())
    line = wording.retest(so["title"], c)
    assert line in flat and line in rep.to_html().replace("&#x27;", "'")
    assert line in rep.to_dossier(tmp_path / "d.md")
    # the re-test lowered the level: the coarsening is advised, in the same words everywhere
    advice = f"Release 'income' coarsened, {c['coarsening']}: re-tested so, singling out reads"
    assert advice in flat


def test_coarsen_retest_is_off_with_zero_columns_and_leaves_every_metric_number_unchanged(
        income_release):
    original, release, control, metrics, rep = income_release
    off = synthguard.evaluate(original, release, control=control, metrics=metrics, seed=0,
                              retest_columns=0)
    assert "actions" not in off.to_dict()
    assert all("coarsening" not in r for r in off.risks())

    def numbers(r):
        out = {n: m["result"] for n, m in r.to_dict()["metrics"].items()}
        return json.loads(json.dumps(out).replace('"seconds"', '"_s"'))

    strip = re.compile(r'"(seconds|_s)": [0-9.e-]+')
    assert strip.sub("", json.dumps(numbers(rep))) == strip.sub("", json.dumps(numbers(off)))
    v_on, v_off = rep.verdict.to_dict(), off.verdict.to_dict()
    for r in v_on["risks"]:
        r.pop("coarsening", None)
    assert v_on == v_off


def test_coarsening_bins_are_label_free():
    from synthguard.data.coarsening import coarsen_column

    rng = np.random.default_rng(3)
    a, b = (pd.DataFrame({"x": rng.normal(size=300), "g": rng.choice(list("abcdefghijklmn"), 300)})
            for _ in range(2))
    s = pd.DataFrame({"x": rng.normal(size=50), "g": rng.choice(list("abcdefghijklmnop"), 50)})
    for col, sd in (("x", "numerical"), ("g", "categorical")):
        one, how = coarsen_column({"original": a, "control": b, "synthetic": s}, col, sd, bins=5,
                                  top=6)
        two, _ = coarsen_column({"original": b, "control": a, "synthetic": s}, col, sd, bins=5,
                                top=6)
        assert one["synthetic"].tolist() == two["synthetic"].tolist()  # swapping labels: same bins
        assert one["original"].tolist() == two["control"].tolist()
        assert one["synthetic"].nunique() <= 7


def test_leaky_demo_retests_drivers_on_the_release_without_the_dropped_rows(demo_reports):
    _, reps = demo_reports
    rep = reps["leaky"]
    risks = {r["risk"]: r for r in rep.risks()}
    so = risks["singling_out"]["coarsening"]
    cost = rep.to_dict()["actions"]["coarsen_retest"]
    assert len(cost["columns_retested"]) == 2  # the budget: one more run per column, two columns
    # the 120 verbatim copies are dropped and re-tested first; singling out still alarms without
    # them, so its drivers are coarsened on the release without those rows
    dropped = risks["singling_out"]["drop_retest"]
    assert dropped["rows_dropped"] >= 120 and dropped["level_after"] == "high"
    assert all(c["rows_dropped_first"] == dropped["rows_dropped"] for c in so)
    # the demo's noisy copies remain: coarsening one column cannot remove that excess, and the
    # report shows the re-test without advising the coarsening
    assert all(c["level_after"] == "high" for c in so)
    flat = " ".join(rep.to_console(100).split())
    assert "Re-tested with" in flat and "coarsened, 10 quantile bins" in flat
    assert "Release '" not in flat and "merge categories" not in flat
    # re-tested only when singling out or inference alarms
    safe = reps["safe"]
    alarm = any(r["level"] in ("high", "medium") for r in safe.risks()
                if r["risk"] in ("singling_out", "inference"))
    assert ("coarsen_retest" in (safe.to_dict().get("actions") or {})) == alarm


def test_every_alarming_risk_states_what_it_reads_without_the_rows_to_drop_on_every_output(
        demo_reports, tmp_path):
    """The drop-and-retest is advice proved in the run: the console, the HTML and the dossier each
    say, in the verdict's one sentence, what every alarming risk reads without the listed rows."""
    import html as html_lib

    from synthguard.run import wording

    _, reps = demo_reports
    rep = reps["leaky"]
    said = [wording.dropped(r) for r in rep.model.verdict.risks if r["level"] in ("high", "medium")]
    said = [s for s in said if s]
    assert said, "the leaky demo states no drop-and-retest"
    console = flat(rep.to_console(100))
    page = html_lib.unescape(rep.to_html())
    dossier = flat(rep.to_dossier(tmp_path / "d.md").replace("\\", ""))
    for s in said:
        assert flat(s) in console
        assert s in page
        assert flat(s) in dossier
    assert all(wording.dropped(r) is None for r in reps["safe"].model.verdict.risks)


def test_a_column_the_retest_no_longer_compares_is_named_on_every_output_in_the_wordings_sentence():
    """Without the copies, the release's code reads as an identifier and is left out of the
    re-test: the console, the HTML page, the notebook view and the dossier (Markdown and HTML) each
    say so in run/wording's sentences (:func:`~synthguard.run.wording.retyped` of the JSON's last
    round, inside :func:`~synthguard.run.wording.dropped` and
    :func:`~synthguard.run.wording.dropped_all`), none in words of its own."""
    import html as html_lib

    from synthguard.run import wording

    original, release, control = coded_copies()
    rep = synthguard.evaluate(original, release, control, metrics=["exact_matches"], seed=0,
                              retest_columns=0)
    rounds = rep.to_dict()["actions"]["drop_retest"]["rounds"]
    clause = wording.retyped(rounds[-1]["typed_otherwise"])
    assert clause.startswith("without those rows, column 'code' reads as an identifier")
    risks = rep.model.verdict.risks
    each = [s for s in (wording.dropped(r) for r in risks) if s]
    grouped = wording.dropped_all(risks)
    assert each and grouped and all(clause in s for s in each + grouped)
    console = flat(rep.to_console(100))
    assert all(flat(s) in console for s in each)
    pages = {"html": rep.to_html(), "notebook": rep._repr_html_(),
             "dossier html": rep.to_dossier(fmt="html")}
    dossier = flat(rep.to_dossier().replace("\\", ""))
    for s in grouped:
        assert flat(s) in dossier
        for name, page in pages.items():
            assert s in html_lib.unescape(page), name
    named = "column 'code' reads as an identifier"
    for name, text in {"console": console, "dossier": dossier, **pages}.items():
        assert named in html_lib.unescape(text), name
