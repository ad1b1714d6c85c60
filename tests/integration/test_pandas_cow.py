"""pandas copy-on-write (the only mode from pandas 3): ``to_numpy()`` returns read-only views, so
no metric may write into one in place. Under pandas 2 the same mode is switched on here; the CI's
newest-versions venv (scripts/test.sh) runs the whole suite on pandas 3 itself."""

from __future__ import annotations

import contextlib
import warnings

import pandas as pd
import pytest

from synthguard import evaluate


@contextlib.contextmanager
def copy_on_write():
    if int(pd.__version__.split(".")[0]) >= 3:
        yield  # always on
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pd.option_context("mode.copy_on_write", True):
            yield


TEXTS = ["The teacher told my sister that Helen Carter from Boston won the contest.",
         "My neighbor Peter Parker works at the Daily Bugle in New York City.",
         "The product arrived late but tasted fine, my husband liked it a lot.",
         "We bought this at Costco in Seattle and the kids loved it every day."]


@pytest.mark.parametrize("metric", ["text_nominals", "text_entities", "text_exact_matches"])
def test_text_metrics_under_copy_on_write(metric, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTHGUARD_CACHE_DIR", str(tmp_path))
    orig = pd.DataFrame({"note": TEXTS})
    syn = pd.DataFrame({"note": TEXTS[:2] + ["Nice snack for the road, not too salty at all."]})
    params = {} if metric == "text_exact_matches" else {"backend": "rules", "cache": False}
    with copy_on_write():
        rep = evaluate(orig, syn, metadata={"text_columns": ["note"]}, metrics={metric: params})
    assert rep[metric]["status"] == "ok", rep[metric]["reason"]


def test_tabular_metrics_under_copy_on_write(demo_data, demo_metadata):
    d = {k: v.iloc[:300] for k, v in demo_data.items()}
    with copy_on_write():
        rep = evaluate(d["original"], d["leaky"], d["control"], metadata=demo_metadata,
                       preset="quick")
    bad = {m: rep[m]["reason"] for m in rep.metrics if rep[m]["status"] == "error"}
    assert not bad
