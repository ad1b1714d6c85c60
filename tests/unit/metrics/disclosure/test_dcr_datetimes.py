"""The DCR metrics compare datetimes in exact seconds, and reusing the ``dcr``/``nndr`` neighbour
search (datetimes in days) changes none of their numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.data.encoding import exact_seconds
from synthguard.registry import Context, get_metric
from synthguard.run.executor import run_metric


def test_exact_seconds_holds_whole_seconds_and_their_differences():
    t = pd.Series(pd.Timestamp("2031-07-09 13:00:00") + pd.to_timedelta([0, 1, 5, 86_399], unit="s"))
    t[4] = pd.NaT
    origin = int(pd.Timestamp("2031-07-09").timestamp())
    got = exact_seconds(t, origin)
    assert got[:4].tolist() == [46_800.0, 46_801.0, 46_805.0, 133_199.0]
    assert np.isnan(got[4])
    assert (got[1] - got[0]) / (got[2] - got[0]) == 0.2  # in days since 1970: 0.19999998...
    aware = exact_seconds(t.dt.tz_localize("Europe/Oslo"), origin)
    assert aware[:4].tolist() == [v - 7_200.0 for v in got[:4]]  # UTC, as numeric_view


def _tables(seconds: bool) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(3)

    def frame(n: int) -> pd.DataFrame:
        day = pd.Timestamp("2022-01-01") + pd.to_timedelta(rng.integers(0, 400, n), unit="D")
        if seconds:
            day = day + pd.to_timedelta(rng.integers(0, 86_400, n), unit="s")
        return pd.DataFrame({"when": day, "x": rng.normal(size=n).round(1), "c": rng.choice(list("abc"), n)})

    ori, ctl = frame(150), frame(150)
    syn = pd.concat([ori.iloc[:40], frame(110)], ignore_index=True)
    return ori, syn, ctl


@pytest.mark.parametrize("seconds", [False, True], ids=["whole-days", "seconds"])
@pytest.mark.parametrize("name", ["dcr_baseline_protection", "dcr_overfitting_protection"])
def test_dcr_protections_are_the_same_with_or_without_the_shared_search(name, seconds):
    """With ``dcr`` in the run, whole-day datetimes reuse its search; times of day do not (their
    days since 1970 are rounded). Either way the result is the one of a run without ``dcr``."""
    ctx = Context.from_frames(*_tables(seconds), seed=0)
    spec = get_metric(name)
    alone = run_metric(spec, ctx.for_run([name]).for_metric(spec), spec.resolve_params({}))
    shared_ctx = ctx.for_run([name, "dcr", "nndr"])
    with_dcr = run_metric(spec, shared_ctx.for_metric(spec), spec.resolve_params({}))
    assert with_dcr.details == alone.details
    assert with_dcr.records == alone.records
    reused = any(str(k).startswith("distance.knn") for k in shared_ctx._memo._entries)
    assert reused == (not seconds)


def test_random_baseline_rows_come_from_the_value_summaries():
    """The random rows are drawn from the backend's summaries (bounds in int64 nanoseconds, missing
    shares, distinct values); a numeric or datetime column without a value is a clear error."""
    from synthguard.errors import MetricError
    from synthguard.metrics.disclosure._dcr import random_baseline_frame

    t = pd.Series(pd.to_datetime(["2020-01-01", "2020-01-03", None]))
    orig = pd.DataFrame({"t": t, "k": ["b", "a", None], "x": [1.0, 4.0, 2.0]})
    meta = {"columns": {"t": {"sdtype": "datetime"}, "k": {"sdtype": "categorical"},
                        "x": {"sdtype": "numerical"}}}
    data = Context.from_frames(orig, orig.copy(), None, meta).data
    sdtypes = {"t": "datetime", "k": "categorical", "x": "numerical"}
    summaries = data.value_summaries("original", ["t", "k", "x"])
    got = random_baseline_frame(summaries, ["t", "k", "x"], sdtypes, 400, np.random.default_rng(0))
    assert got["t"].min() >= t.min() and got["t"].max() <= t.max() and got["t"].isna().any()
    assert set(got["k"].dropna()) == {"a", "b"} and set(got["x"]) <= {1.0, 2.0, 3.0, 4.0}
    empty = {**summaries, "x": {**summaries["x"], "lo": None, "hi": None}}
    with pytest.raises(MetricError, match="no numerical value"):
        random_baseline_frame(empty, ["t", "k", "x"], sdtypes, 10, np.random.default_rng(0))
