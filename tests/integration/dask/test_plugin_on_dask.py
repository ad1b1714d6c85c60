"""The example plugin on a Dask cluster: its card says ``backend="local"``, so a distributed run
reports it skipped with the reason, next to the metrics that run (see ``tests/plugins``)."""

from __future__ import annotations

from ...plugins.conftest import PLUGIN, plugin_installed  # noqa: F401 - the fixture
from ...plugins.test_example_plugin import META, _people


def test_a_local_plugin_is_reported_skipped_with_its_reason_on_a_cluster(plugin_installed,  # noqa: F811
                                                                         dask_client):
    import synthguard

    original, control, other = _people(200, 1), _people(200, 2), _people(200, 3)
    rep = synthguard.evaluate(original, other, control, META, metrics=[PLUGIN, "exact_matches"],
                              seed=0, client=dask_client).to_dict()["metrics"]
    assert rep[PLUGIN]["status"] == "skipped"
    assert "not available in a distributed run" in rep[PLUGIN]["reason"]
    assert rep["exact_matches"]["status"] == "ok"
