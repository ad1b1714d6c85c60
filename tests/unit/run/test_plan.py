"""The plan a run prints before any metric runs (synthguard.run.plan): its content, the large-plan
notes (issue #33.4: 1,400 rows x 2,002 columns without metadata), ``--dry-run`` and ``--quiet``.
Timings are never asserted: only what the plan says and that nothing runs after a dry run."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from synthguard.cli import main
from synthguard.registry import get_metric
from synthguard.run.plan import LARGE_SECONDS, estimate, make_plan, per_column_parameter, stage


def _wide(shared_data, rows: int = 1400, columns: int = 2002) -> pd.DataFrame:
    """nhefs (real person-level survey rows) widened to ``columns`` columns by repeating its columns
    under new names: the shape of the issue's case."""
    df = pd.read_csv(shared_data / "nhefs.csv").iloc[:rows]
    reps = -(-columns // df.shape[1])
    wide = pd.concat([df.add_suffix(f"_{i}") for i in range(reps)], axis=1).iloc[:, :columns]
    return wide.fillna(0)


def test_inference_left_to_every_column_is_read_from_its_card():
    spec = get_metric("inference")
    assert per_column_parameter(spec, {}) == "secret"
    assert per_column_parameter(spec, {"secret": "age"}) is None
    assert per_column_parameter(get_metric("exact_matches"), {}) is None


def test_the_plan_names_tables_tests_and_estimates():
    plan = make_plan({"original": (2000, 15), "synthetic": (2000, 15), "control": (500, 15)},
                     ["exact_matches", "dcr"], {}, {}, unavailable={"text_entities": "no text column"})
    text = plan.render()
    assert "original 2,000 rows x 15 columns" in text and "control 500 rows x 15 columns" in text
    assert "2 tests: exact_matches, dcr" in text and "not run (no text column): text_entities" in text
    assert "every record (no sample)" in text and "peak memory" in text
    assert plan.large == () and json.loads(json.dumps(plan.to_dict()))["metrics"] == ["exact_matches", "dcr"]
    # the estimate grows with the cells (real and release) and the tests, never shrinks
    small = estimate(1e5, 1e5, 15, 20)
    for big in (estimate(1e7, 1e5, 15, 20), estimate(1e5, 1e7, 15, 20)):
        assert big[0] > small[0] and big[1] > small[1]
    assert estimate(1e5, 1e5, 15, 30)[0] > small[0]


def test_the_estimate_follows_the_real_records_more_than_the_release():
    """The sampled 1M run (200,000 training and 200,000 control records against the 1M release)
    costs less than the unsampled one, and the same cells cost more as real records (the tests'
    queries) than as release rows: one power of all the cells could not tell them apart."""
    names = [f"m{i}" for i in range(28)]
    sampled = make_plan({"original": (200_000, 15), "synthetic": (1_000_000, 15), "control": (200_000, 15)},
                        names, {}, {}, sample="200,000 of 1,000,000 training records")
    whole = make_plan({"original": (1_000_000, 15), "synthetic": (1_000_000, 15), "control": (250_000, 15)},
                      names, {}, {})
    assert sampled.seconds < whole.seconds and sampled.memory_mb < whole.memory_mb
    # the sampled run's cells, the release's share moved to the real records
    more_real = make_plan({"original": (1_000_000, 15), "synthetic": (200_000, 15), "control": (200_000, 15)},
                          names, {}, {})
    assert more_real.seconds > sampled.seconds


def test_a_per_column_test_grows_with_its_columns_by_the_fitted_power():
    """``inference`` without its secret runs once per column: at the same cells its cost grows as
    (columns / 15) ** COLUMN_EXPONENT, fitted on nhefs widened to 15-401 columns; faster than the
    columns (the old rule, linear, gave 11-31 s for a 91 s test at 401 columns)."""
    from synthguard.run.plan import CALIBRATION_COLUMNS, COLUMN_EXPONENT, FIXED_SECONDS

    assert COLUMN_EXPONENT > 1.0
    cells = 700 * 401
    one = estimate(cells, cells, CALIBRATION_COLUMNS, 1, 1)[0] - FIXED_SECONDS
    for columns in (50, 100, 200, 401):
        many = estimate(cells, cells, columns, 1, 1)[0] - FIXED_SECONDS
        assert many / one == pytest.approx((columns / CALIBRATION_COLUMNS) ** COLUMN_EXPONENT)
        # a test that runs once whatever the columns costs the same
        assert estimate(cells, cells, columns, 1, 0)[0] == estimate(cells, cells, CALIBRATION_COLUMNS, 1, 0)[0]


def test_a_wide_plan_without_metadata_is_large_and_says_what_to_declare():
    names = ["exact_matches", "inference", "singling_out_multivariate"]
    plan = make_plan({"original": (1400, 2002), "synthetic": (1400, 2002)}, names,
                     {n: get_metric(n) for n in names}, {})
    assert plan.seconds > LARGE_SECONDS and plan.per_column == {"inference": "secret"}
    text = " ".join(plan.large)
    assert "2,002 columns" in text and "'inference' runs once per column (2,002 times" in text
    assert "no quasi-identifiers are declared" in text and "declare 'quasi_identifiers'" in text
    assert "give 'inference' its 'secret'" in text and "--preset quick" in text
    assert "--max-records" not in text  # 1,400 rows: a sample would save little
    # the same run with the secret named and the quasi-identifiers declared: no per-column note
    named = make_plan({"original": (1400, 2002), "synthetic": (1400, 2002)}, names,
                      {n: get_metric(n) for n in names}, {"inference": {"secret": "age_0"}},
                      quasi_identifiers=["age_0", "sex_0"])
    assert named.per_column == {} and "no quasi-identifiers" not in " ".join(named.large)
    assert named.seconds < plan.seconds


def test_a_large_plan_with_one_remedy_left_says_it_as_a_sentence():
    """A sampled run on declared roles (the 10M privacy run: its 28 tests, estimated 14 min; the
    first run took about 10 min at load 2.6-4 in session 24) has only fewer tests left to offer:
    "to bound it: run fewer tests", not "to bound it: or run fewer tests"."""
    from synthguard.run.config import PRESETS

    names = list(PRESETS["privacy"])
    plan = make_plan({"original": (200_000, 15), "synthetic": (10_000_000, 15), "control": (200_000, 15)},
                     names, {n: get_metric(n) for n in names}, {}, sample="a seeded sample",
                     quasi_identifiers=["age", "sex"], sensitive=["income"])
    assert plan.seconds > LARGE_SECONDS
    assert plan.large[-1] == "to bound it: run fewer tests (--preset quick, --metrics)"


def test_dry_run_prints_the_plan_runs_nothing_and_exits_0(shared_data, tmp_path):
    wide = _wide(shared_data, rows=1400, columns=201)  # (2,002 columns: the same, minutes of typing)
    for role, part in (("original", wide.iloc[:700]), ("synthetic", wide.iloc[700:])):
        part.to_csv(tmp_path / f"{role}.csv", index=False)
    out = tmp_path / "report.json"
    res = CliRunner().invoke(main, ["evaluate", "-o", str(tmp_path / "original.csv"), "-s",
                                    str(tmp_path / "synthetic.csv"), "--dry-run", "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("plan: original 700 rows x 201 columns, synthetic 700 rows x 201 columns")
    assert "inference" in res.output and "estimated" in res.output
    assert not out.exists()  # nothing ran, nothing written


def test_a_large_plan_is_noted_before_the_run_and_quiet_silences_it(capsys):
    from synthguard.cli.evaluate import plan_printer
    from synthguard.run.plan import PlanOnly

    names = ["exact_matches", "inference"]
    plan = make_plan({"original": (1400, 2002), "synthetic": (1400, 2002)}, names,
                     {n: get_metric(n) for n in names}, {})
    plan_printer(quiet=False, dry_run=False)(plan)  # stderr is not a terminal here: the notes only
    err = capsys.readouterr().err
    assert err.splitlines() == [f"note: large plan: {line}" for line in plan.large]
    plan_printer(quiet=True, dry_run=False)(plan)
    assert capsys.readouterr().err == ""
    with pytest.raises(PlanOnly) as stop:
        plan_printer(quiet=True, dry_run=True)(plan)
    assert stop.value.plan is plan


def test_stage_bars_stay_off_when_disabled_or_not_a_terminal():
    with stage("reading inputs", False) as bar:
        assert bar is None
    with stage("reading inputs", True) as bar:  # pytest's stderr is not a terminal
        assert bar.disable
    assert np.isfinite(estimate(0, 0, 0, 0)[0])


def test_declared_columns_are_neither_counted_per_column_nor_asked_for_again():
    # the 1M-row bench's plan said "'inference' runs once per column (15 times)" and advised declaring
    # sensitive columns that were declared: inference attacks the declared sensitive columns only
    # (10M rows here: the 1M run, 158 s, is no longer a large plan)
    names = ["exact_matches", "inference", *(f"test_{i}" for i in range(26))]  # the preset's 28
    sizes = {"original": (10_000_000, 15), "synthetic": (10_000_000, 15), "control": (2_500_000, 15)}
    specs = {n: get_metric(n) for n in names[:2]}
    none = make_plan(sizes, names, specs, {})
    declared = make_plan(sizes, names, specs, {}, quasi_identifiers=["age", "sex"], sensitive=["employment"])
    assert none.per_column == {"inference": "secret"} and declared.per_column == {}
    assert "once per column" not in " ".join(declared.large) and declared.seconds <= none.seconds * (1 + 1e-12)
    # nor does it ask to declare what is declared; it offers the sample instead
    assert declared.large and "declare" not in " ".join(declared.large)
    assert "--max-records" in declared.large[-1] and "--max-records" in none.large[-1]
    sampled = make_plan(sizes, names, specs, {}, quasi_identifiers=["age", "sex"], sensitive=["employment"],
                        sample="200,000 of 10,000,000 training records")
    assert "--max-records" not in " ".join(sampled.large)
    qis_only = make_plan({"original": (1400, 2002), "synthetic": (1400, 2002)}, names, specs, {},
                         quasi_identifiers=["a", "b"])
    assert "'inference' runs once per column that is not a quasi-identifier (2,000 times" in \
        " ".join(qis_only.large)


def test_the_plan_bounds_the_advices_reruns_it_does_not_count_in_its_estimate():
    """A leaky release makes the advice re-run the verdict's tests (drops, then coarsenings): the
    plan said so beforehand, with at least as many runs as the run made; switched off, it says
    nothing of them, and a run without control (no advice) neither."""
    import synthguard
    from synthguard.demo import make_demo

    d = make_demo(600, seed=0)
    metrics = ["exact_matches", "singling_out_univariate", "inference"]
    plans: list = []
    rep = synthguard.evaluate(d["original"], d["leaky"], control=d["control"], metrics=metrics,
                              on_plan=plans.append)
    actions = rep.header["actions"]
    made = len(actions["drop_retest"]["rounds"]) + len(actions["coarsen_retest"]["runs"])
    assert made >= 2 and plans[0].retests >= made and plans[0].retest_seconds > 0
    assert f"up to {plans[0].retests} more runs of the verdict's tests" in plans[0].render()
    plans.clear()
    synthguard.evaluate(d["original"], d["leaky"], control=d["control"], metrics=metrics,
                        on_plan=plans.append, retest_columns=0, retest_rows=0)
    assert plans[0].retests == 0 and "re-test" not in plans[0].render()
    plans.clear()
    synthguard.evaluate(d["original"], d["leaky"], metrics=metrics, on_plan=plans.append)
    assert plans[0].retests == 0
    plans.clear()  # the reference rule re-tests nothing
    rep = synthguard.evaluate(d["original"], d["leaky"], control=d["control"], metrics=metrics,
                              on_plan=plans.append, risk_rule="reference")
    assert plans[0].retests == 0 and not rep.header.get("actions")
    plans.clear()  # no test of singling out or inference: nothing to coarsen, the drop round only
    rep = synthguard.evaluate(d["original"], d["leaky"], control=d["control"],
                              metrics=["exact_matches"], on_plan=plans.append)
    assert plans[0].retests == 1 and "coarsen_retest" not in rep.header.get("actions", {})
