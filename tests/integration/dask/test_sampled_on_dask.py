"""``max_records`` on a cluster: the seeded sample of training and control records one process
draws, the release whole, and one process's report (issue #31): every metric entry, the verdict,
the records export (the full-table copies of records outside the sample included) and the header's
``sample`` entry equal."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate

from ...helpers import without_seconds
from .test_distributed_equality import META, _frame

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")


def _dumps(value) -> str:
    return json.dumps(without_seconds(value), sort_keys=True, default=str)


def _tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """500 training and 260 control records; a release of 300 fresh rows, 60 verbatim copies and
    30 copies with one cell changed of training records (most of them outside a sample of 200)."""
    orig, ctl = _frame(500, 11), _frame(260, 12)
    r = np.random.default_rng(13)
    near = orig.iloc[r.choice(500, 30, replace=False)].copy()
    near["c"] = np.arange(30) + 100.5  # a value no real record holds
    syn = pd.concat([_frame(300, 14), orig.iloc[r.choice(500, 60, replace=False)], near],
                    ignore_index=True)
    return orig, syn.sample(frac=1.0, random_state=5).reset_index(drop=True), ctl


def test_max_records_samples_on_a_cluster_as_in_one_process(dask_client):
    orig, syn, ctl = _tables()
    metrics = {"exact_matches": {}, "near_copies": {}, "dcr": {"n_boot": 50}, "ims": {},
               "k_anonymity": {"k": 3}}
    kw = {"metrics": metrics, "seed": 6, "max_records": 200}
    one = evaluate(orig, syn, ctl, META, **kw).to_dict()
    many = evaluate(orig, syn, ctl, META, client=dask_client, **kw).to_dict()
    sample = one["sample"]
    # the run samples: both tables cut to 200, copies of records outside the sample found by the
    # full-table joins, the release rows as dcr's queries sampled too
    assert sample["original"] == {"rows": 200, "of": 500} and sample["control"] == {"rows": 200, "of": 260}
    assert sample["exact_copies"]["outside_sample"] > 0 and sample["one_cell_copies"]["outside_sample"] > 0
    assert sample["release_queries"]["tests"] == ["dcr"]
    assert _dumps(many["sample"]) == _dumps(sample)
    for name in metrics:
        assert many["metrics"][name]["status"] == "ok", many["metrics"][name].get("reason")
        assert _dumps(many["metrics"][name]) == _dumps(one["metrics"][name]), name
    assert _dumps(many["verdict"]) == _dumps(one["verdict"])
    assert "sample" in many["verdict"]["summary"] or "sampl" in many["verdict"]["summary"]
    outside = [r for r in one["records"] if "is not among the sampled records" in r["reason"]]
    assert {r["family"] for r in outside} == {"exact", "near1"}
    assert _dumps(many["records"]) == _dumps(one["records"])
    assert _dumps(many.get("actions")) == _dumps(one.get("actions"))
