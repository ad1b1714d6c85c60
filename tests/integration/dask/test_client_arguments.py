"""``evaluate(client=...)`` honours every argument as in one process, or refuses it with one line."""

from __future__ import annotations

import json

import pytest

from synthguard import evaluate
from synthguard.errors import ConfigError

from .test_distributed_equality import META, _frame

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")


def test_on_progress_is_called_as_often_with_a_client_as_without(dask_client):
    orig, syn = _frame(60, 1), _frame(60, 2)
    metrics = ["exact_matches", "ims", "generalized_cap"]  # the last one skipped on Dask
    calls: dict[str, list] = {"local": [], "dask": []}
    evaluate(orig, syn, None, META, metrics=metrics, seed=1,
             on_progress=lambda *a: calls["local"].append(a))
    evaluate(orig, syn, None, META, metrics=metrics, seed=1, client=dask_client,
             on_progress=lambda *a: calls["dask"].append(a))
    assert calls["dask"] == calls["local"] == [(m, i + 1, 3) for i, m in enumerate(metrics)]


def test_named_runs_on_a_client_equal_one_process(dask_client):
    orig = _frame(200, 3)
    syn = _frame(150, 4)
    config = {"metrics": [{"name": "k3", "metric": "k_anonymity", "k": 3},
                          {"name": "k5", "metric": "k_anonymity", "k": 5}]}
    single = evaluate(orig, syn, None, META, config=config, seed=2).to_dict()["metrics"]
    dist = evaluate(orig, syn, None, META, config=config, seed=2, client=dask_client).to_dict()["metrics"]
    for name in ("k3", "k5"):
        assert dist[name]["status"] == "ok", dist[name]["reason"]
        assert dist[name]["metric"] == "k_anonymity"
        assert json.dumps(dist[name]["result"], sort_keys=True, default=str) == \
            json.dumps(single[name]["result"], sort_keys=True, default=str)


@pytest.mark.parametrize("arg, value", [("original_stats", {"rows": 1}), ("entity_key", "a"),
                                        ("sequence_key", "c"), ("generator", object()), ("jobs", 2),
                                        ("cache", True),
                                        ("max_records", 100)])
def test_an_argument_a_cluster_cannot_honour_is_refused_by_name(dask_client, arg, value):
    with pytest.raises(ConfigError, match=rf"cannot take {arg}="):
        evaluate(_frame(20, 0), _frame(20, 1), None, META, metrics=["ims"], client=dask_client,
                 **{arg: value})
