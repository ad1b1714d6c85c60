"""The example plugin on a Dask cluster: its card says ``backend="local"``, so a distributed run
reports it skipped with the reason, next to the metrics that run, and the verdict names it under
the risk it answers for (see ``tests/plugins``)."""

from __future__ import annotations

from ...plugins.conftest import PLUGIN, plugin_installed  # noqa: F401 - the fixture
from ...plugins.test_example_plugin import META, _people


def test_a_local_plugin_is_reported_skipped_with_its_reason_on_a_cluster(plugin_installed,  # noqa: F811
                                                                         dask_client):
    import synthguard

    original, control, other = _people(200, 1), _people(200, 2), _people(200, 3)
    whole = synthguard.evaluate(original, other, control, META, metrics=[PLUGIN, "exact_matches"],
                                seed=0, client=dask_client).to_dict()
    rep = whole["metrics"]
    assert rep[PLUGIN]["status"] == "skipped"
    assert "not available in a distributed run" in rep[PLUGIN]["reason"]
    assert rep["exact_matches"]["status"] == "ok"
    # the verdict says which criterion's test did not run, and why, where the level is written
    risk = {r["risk"]: r for r in whole["verdict"]["risks"]}["singling_out"]
    assert risk["not_run"] == [f"{PLUGIN} (not available in a distributed run)"]
    assert risk["summary"].endswith(f"did not run: {PLUGIN} (not available in a distributed run)")


def test_a_local_test_the_data_leave_nothing_to_test_with_is_not_named_on_a_cluster(dask_client):
    # no text column, no key columns: in one process these tests are skipped for that and named
    # under no risk; a cluster says the same instead of "not available in a distributed run"
    import synthguard

    original, control, other = _people(200, 1), _people(200, 2), _people(200, 3)
    names = ["exact_matches", "text_entities", "text_nominals", "generalized_cap"]
    for client in (None, dask_client):
        rep = synthguard.evaluate(original, other, control, metrics=names, seed=0, client=client).to_dict()
        assert all("not_run" not in r for r in rep["verdict"]["risks"]), client
        reasons = {n: rep["metrics"][n]["reason"] for n in names[1:]}
        assert reasons["text_entities"].startswith("no text column"), reasons
        assert reasons["generalized_cap"].startswith("no key columns"), reasons
