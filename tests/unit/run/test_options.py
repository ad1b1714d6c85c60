"""One options object (:class:`synthguard.run.options.EvaluateOptions`): ``evaluate`` and ``compare``
take the same options, every option is validated once with one line naming it, and a path that
cannot honour an option refuses it by name instead of dropping it."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re

import numpy as np
import pandas as pd
import pytest

import synthguard
from synthguard.errors import ConfigError
from synthguard.run.options import ENGINE_BACKENDS, OPTION_NAMES, EvaluateOptions

DATA_ARGS = {"evaluate": ("original", "synthetic", "control", "metadata"),
             "compare": ("original", "synthetics", "control", "metadata")}


def _options_of(func) -> dict[str, inspect.Parameter]:
    params = dict(inspect.signature(func).parameters)
    # ``context`` is the dossier's organisational context: kept on the report, not an option of the run
    for name in (*DATA_ARGS[func.__name__], "options", "context"):
        params.pop(name)
    return params


def test_evaluate_and_compare_accept_exactly_the_options_with_the_same_defaults():
    fields = {f.name: f.default for f in dataclasses.fields(EvaluateOptions)}
    for func in (synthguard.evaluate, synthguard.compare):
        params = _options_of(func)
        assert list(params) == list(OPTION_NAMES), func.__name__  # same names, same order
        assert {k: p.default for k, p in params.items()} == fields, func.__name__
        assert "options" in inspect.signature(func).parameters


def test_the_engine_backends_are_the_neighbour_engines():
    from synthguard.engine.neighbors.engine import BACKENDS

    assert ENGINE_BACKENDS == BACKENDS


@pytest.mark.parametrize("option, value", [
    ("seed", -1), ("seed", 1.5), ("seed", True), ("backend", "gpu"), ("progress", "yes"),
    ("on_progress", 3), ("jobs", 1.5), ("retest_columns", -1), ("risk_rule", "strict"),
    ("materiality", 2.0), ("alpha", 0.7), ("release_type", "public"), ("entity_key", 3),
    ("cache", 42), ("preset", 7)])
def test_a_bad_option_is_refused_in_one_line_naming_it(option, value):
    with pytest.raises(ConfigError) as err:
        EvaluateOptions(**{option: value})
    text = str(err.value)
    assert "\n" not in text
    assert (option if option != "risk_rule" else "risk_rule") in text


def test_evaluate_refuses_a_bad_option_before_reading_any_input(tmp_path):
    missing = tmp_path / "nowhere.csv"  # never read: the option is refused first
    with pytest.raises(ConfigError, match="alpha"):
        synthguard.evaluate(missing, missing, alpha=0.9)


def test_options_and_keyword_arguments_are_not_mixed():
    opts = EvaluateOptions(seed=2)
    assert EvaluateOptions.build(opts) is opts
    assert EvaluateOptions.build(opts, seed=None, backend="auto") is opts  # defaults are not "given"
    with pytest.raises(ConfigError, match="not both.*seed="):
        EvaluateOptions.build(opts, seed=3)
    frame = pd.DataFrame({"a": [1]})
    with pytest.raises(ConfigError, match="original_context="):
        EvaluateOptions.build(opts, original_context=frame)  # a frame is compared by identity


def _frames(n: int = 120, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)

    def people(k: int) -> pd.DataFrame:
        return pd.DataFrame({"age": rng.integers(18, 90, k), "zip": rng.choice(list("abcdef"), k),
                             "income": rng.integers(1, 10**6, k) * 1.0})

    original, control = people(n), people(n)
    release = pd.concat([original.iloc[: n // 4], people(n - n // 4)], ignore_index=True)
    return original, release, control


def test_evaluate_with_options_equals_evaluate_with_keywords():
    o, s, c = _frames()
    kw = {"metrics": ["exact_matches", "dcr"], "seed": 4, "alpha": 0.01, "materiality": 0.02}
    a = synthguard.evaluate(o, s, c, **kw).to_dict()
    b = synthguard.evaluate(o, s, c, options=EvaluateOptions(**kw)).to_dict()
    untimed = re.compile(r'"seconds": [0-9.e-]+')  # the metrics' and the re-tests' timings
    assert untimed.sub("", json.dumps(a, sort_keys=True, default=str)) == \
        untimed.sub("", json.dumps(b, sort_keys=True, default=str))


def test_compare_honours_the_options_it_used_to_drop():
    """alpha, retest_columns, retest_rows and the entity options reach every release's run (they
    were dropped)."""
    o, s, c = _frames()
    comp = synthguard.compare(o, {"r": s}, c, metrics=["exact_matches"], alpha=0.01,
                              retest_columns=0, retest_rows=0, seed=5)
    alone = synthguard.evaluate(o, s, c, metrics=["exact_matches"], alpha=0.01, retest_columns=0,
                                retest_rows=0, seed=5)
    got = comp.reports["r"]
    assert got.verdict.rule.alpha == 0.01
    assert got.to_dict()["verdict"] == alone.to_dict()["verdict"]
    assert "actions" not in got.header
    events = o.assign(pid=np.arange(len(o)) // 2)
    rel = s.assign(pid=np.arange(len(s)) // 2 + 1000)
    ctl = c.assign(pid=np.arange(len(c)) // 2 + 5000)
    comp = synthguard.compare(events, [rel], ctl, metrics=["exact_matches"], entity_key="pid")
    assert next(iter(comp.reports.values())).header.get("unit") == "entity"


def test_compare_refuses_by_name_an_option_it_cannot_honour():
    o, s, c = _frames()
    with pytest.raises(ConfigError, match=r"compare cannot take synthetic_context="):
        synthguard.compare(o, [s], c, entity_key="pid", synthetic_context=s)


def test_a_run_needs_a_run_config_not_something_that_looks_like_one():
    from synthguard.data.tables import prepare_tables
    from synthguard.run.runner import run_tables

    o, s, _ = _frames()
    with pytest.raises(ConfigError, match="RunConfig"):
        run_tables(prepare_tables(o, s), {"metrics": {"exact_matches": {}}})


@pytest.mark.parametrize("make", [
    lambda: synthguard.PrivacyEvaluator(pd.DataFrame({"a": [1]}), pd.DataFrame({"a": [1]}), seed=-1),
    lambda: synthguard.Evaluator("anonymeter-singlingout", seed=1.5),
    lambda: __import__("synthguard.compat.anonymeter", fromlist=["x"]).SinglingOutEvaluator(
        pd.DataFrame({"a": [1]}), pd.DataFrame({"a": [1]}), seed=2.5),
])
def test_the_facades_check_the_seed_as_every_path_does(make):
    with pytest.raises(ConfigError, match="seed must be a non-negative integer"):
        make()


def test_the_cli_builds_the_options_and_passes_alpha(tmp_path):
    from click.testing import CliRunner

    from synthguard.cli import main

    o, s, c = _frames()
    for name, frame in (("o", o), ("s", s), ("c", c)):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["evaluate", "-o", str(tmp_path / "o.csv"), "-s",
                                    str(tmp_path / "s.csv"), "-c", str(tmp_path / "c.csv"),
                                    "--metrics", "exact_matches", "--alpha", "0.01", "--no-progress",
                                    "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["verdict"]["alpha"] == 0.01
    res = CliRunner().invoke(main, ["evaluate", "-o", str(tmp_path / "o.csv"), "-s",
                                    str(tmp_path / "s.csv"), "--alpha", "0.9"])
    assert res.exit_code == 2 and "alpha" in res.output
