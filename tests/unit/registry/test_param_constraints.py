"""Parameter constraints are declared in ``@register`` and checked by the registry on every path."""

from __future__ import annotations

import pytest

from synthguard.errors import ConfigError
from synthguard.registry import Context, Interval, Param, all_metrics, get_metric


def _package_metrics():
    """The package's metrics (other tests register throwaway ones in the same process)."""
    return [s for s in all_metrics() if s.func.__module__.startswith("synthguard.metrics.")]


def test_every_registered_parameter_declares_a_constraint():
    undeclared = [f"{s.name}.{p.name}" for s in _package_metrics() for p in s.params
                  if not p.declared]
    assert undeclared == []


def test_every_declared_default_satisfies_its_own_constraint():
    for spec in _package_metrics():
        for p in spec.params:
            p.validate(p.default, spec.name)  # raises ConfigError if a default breaks its constraint


def test_named_constraint_sets_type_and_interval():
    p = Param("top_n", 20, "rows listed", "positive int")
    assert p.kind is int and p.interval == Interval(1)
    assert p.validate(3.0, "m") == 3
    with pytest.raises(ConfigError, match=r"metric 'm': parameter 'top_n' must be an integer >= 1, got 0"):
        p.validate(0, "m")
    with pytest.raises(ConfigError, match="got None"):
        p.validate(None, "m")  # a non-None default: null is not accepted unless declared
    assert Param("max_rows", 10, "cap", "positive int", nullable=True).validate(None, "m") is None


def test_interval_bounds_and_words():
    assert Interval(0, 1, closed="neither").describe() == "strictly between 0 and 1"
    assert not Interval(0, 1, closed="neither").contains(1.0)
    assert Interval(0, 1, closed="right").contains(1.0) and not Interval(0, 1, closed="right").contains(0)
    with pytest.raises(ValueError):
        Param("x", 1, "", "strictly positive")  # unknown named constraint: a declaration error


@pytest.mark.parametrize("name, params, words", [
    ("exact_matches", {"top_n": 0}, "'top_n' must be an integer >= 1"),
    ("exact_matches", {"confidence_level": 1.5}, "'confidence_level' must be a number strictly between"),
    ("dcr", {"percentile": 100}, "'percentile'"),
    ("near_copies", {"max_diff": 3}, "'max_diff' must be an integer in [1, 2]"),
    ("accuracy", {"binning": "nope"}, "'binning' must be one of"),
])
def test_direct_call_validates_like_a_run(name, params, words):
    spec = get_metric(name)
    with pytest.raises(ConfigError) as run_error:
        spec.resolve_params(params)
    module = __import__(spec.func.__module__, fromlist=[spec.func.__name__])
    direct = getattr(module, spec.func.__name__)
    ctx = Context.from_frames(*_frames()).for_metric(spec)
    with pytest.raises(ConfigError) as direct_error:
        direct(ctx, **params)
    assert str(direct_error.value) == str(run_error.value)
    assert f"metric {name!r}" in str(run_error.value) and words in str(run_error.value)


def _frames():
    import pandas as pd

    o = pd.DataFrame({"a": [1, 2, 3, 4, 5, 6], "b": list("xyxyxz")})
    return o, o.iloc[:4].copy(), o.iloc[2:].copy()


def test_a_numpy_integer_is_an_int_parameter():
    import numpy as np

    p = Param("top_n", 20, "rows listed", "positive int")
    got = p.validate(np.int64(5), "m")
    assert got == 5 and type(got) is int
