"""Above RETEST_JOBS_ROWS rows the advice's re-tests run one metric at a time by default (they
also hold what the run kept for them), while the run itself takes the default of
``resolve_jobs``; a ``jobs`` the user gives holds for both (engine.parallel.retest_jobs)."""

from __future__ import annotations

import pytest

import synthguard
import synthguard.engine.parallel as parallel
import synthguard.run.runner as runner
from synthguard.demo import DEMO_METADATA, make_demo


@pytest.fixture(scope="module")
def demo():
    return make_demo(300, 0)


def _jobs_of_each_round(monkeypatch, demo, **kw) -> list:
    seen = []
    real = runner.run_all

    def spy(names, one, run_config, ctx, *, jobs, **rest):
        seen.append(jobs)
        return real(names, one, run_config, ctx, jobs=jobs, **rest)

    monkeypatch.setattr(runner, "run_all", spy)
    rep = synthguard.evaluate(demo["original"], demo["leaky"], control=demo["control"], metadata=DEMO_METADATA,
                              metrics=["exact_matches", "near_copies"], seed=0, retest_columns=0, **kw)
    assert rep.to_dict()["actions"]["drop_retest"]["rounds"], "the leaky demo must be re-tested"
    return seen


def test_a_large_retest_runs_one_metric_at_a_time_and_the_run_the_default(monkeypatch, demo):
    monkeypatch.setattr(parallel, "RETEST_JOBS_ROWS", 10)
    seen = _jobs_of_each_round(monkeypatch, demo)
    assert seen[0] is None and set(seen[1:]) == {1}, seen


def test_a_small_retest_keeps_the_default(monkeypatch, demo):
    seen = _jobs_of_each_round(monkeypatch, demo)
    assert len(seen) >= 2 and set(seen) == {None}, seen


def test_the_jobs_a_user_gives_hold_for_the_retests_too(monkeypatch, demo):
    monkeypatch.setattr(parallel, "RETEST_JOBS_ROWS", 10)
    seen = _jobs_of_each_round(monkeypatch, demo, jobs=2)
    assert len(seen) >= 2 and set(seen) == {2}, seen
