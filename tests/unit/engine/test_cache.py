"""The disk cache: a re-run after a config change recomputes only the changed metric."""

from __future__ import annotations

import json

from click.testing import CliRunner

import synthguard
from synthguard.cli import main
from synthguard.engine.cache import ENV_VAR, DiskCache, as_cache, default_cache_dir

METRICS = ["uitest_distance", "uitest_attack", "uitest_quality"]


def _run(data, cache, **kw):
    return synthguard.evaluate(data["original"].head(200), data["leaky"].head(200),
                               data["control"].head(200), metrics=kw.pop("metrics", METRICS),
                               cache=cache, **kw)


def test_off_by_default(demo_data, fake_metrics):
    _run(demo_data, None)
    _run(demo_data, None)
    assert fake_metrics["uitest_attack"] == 2


def test_rerun_after_param_change_recomputes_only_that_metric(tmp_path, demo_data, fake_metrics):
    cache = DiskCache(tmp_path / "c")
    first = _run(demo_data, cache)
    assert all("cached" not in first[m] for m in METRICS)
    assert cache.writes == 3
    changed = {"uitest_distance": {"percentile": 25}, "uitest_attack": {}, "uitest_quality": {}}
    second = _run(demo_data, cache, metrics=changed)
    assert fake_metrics == {"uitest_distance": 2, "uitest_attack": 1, "uitest_quality": 1}
    assert second["uitest_attack"]["cached"] is True and second["uitest_quality"]["cached"] is True
    assert "cached" not in second["uitest_distance"]
    # identical results, and the cached flag is in the JSON
    assert second["uitest_attack"]["result"] == first["uitest_attack"]["result"]
    assert json.loads(second.to_json())["metrics"]["uitest_attack"]["cached"] is True


def test_key_depends_on_seed_data_thresholds(tmp_path, demo_data, fake_metrics):
    cache = DiskCache(tmp_path)
    _run(demo_data, cache, metrics=["uitest_attack"])
    _run(demo_data, cache, metrics=["uitest_attack"], seed=1)
    _run(demo_data, cache, metrics=["uitest_attack"], config={"thresholds": {"uitest_attack": {"high": 0.9}}})
    synthguard.evaluate(demo_data["original"].head(200), demo_data["safe"].head(200),
                        metrics=["uitest_attack"], cache=cache)
    assert fake_metrics["uitest_attack"] == 4
    _run(demo_data, cache, metrics=["uitest_attack"], seed=1)
    assert fake_metrics["uitest_attack"] == 4 and cache.hits == 1


def test_corrupt_entry_is_a_miss_and_metricerror_not_cached(tmp_path, demo_data, fake_metrics):
    cache = DiskCache(tmp_path)
    _run(demo_data, cache, metrics=["uitest_attack", "uitest_cannot"])
    for f in tmp_path.glob("*/*.pkl"):
        f.write_bytes(b"not a pickle")
    rep = _run(demo_data, cache, metrics=["uitest_attack", "uitest_cannot"])
    assert rep.status("uitest_attack") == "ok" and "cached" not in rep["uitest_attack"]
    assert rep.status("uitest_cannot") == "skipped"
    assert fake_metrics["uitest_cannot"] == 2


def test_env_var_and_as_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env"))
    assert default_cache_dir() == tmp_path / "env"
    assert as_cache(True).directory == tmp_path / "env"
    assert as_cache(None) is None and as_cache(False) is None
    assert as_cache(str(tmp_path)).directory == tmp_path


def test_cli_cache_dir(tmp_path, demo_data, fake_metrics):
    o, s = tmp_path / "o.csv", tmp_path / "s.csv"
    demo_data["original"].head(150).to_csv(o, index=False)
    demo_data["leaky"].head(150).to_csv(s, index=False)
    args = ["evaluate", "-o", str(o), "-s", str(s), "--metrics", "uitest_attack", "--no-progress",
            "--cache-dir", str(tmp_path / "cc"), "--json", str(tmp_path / "r.json")]
    assert CliRunner().invoke(main, args).exit_code == 0
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "r.json").read_text())["metrics"]["uitest_attack"]["cached"] is True
    assert fake_metrics["uitest_attack"] == 1


def test_real_metric_round_trip(tmp_path, demo_data):
    cache = DiskCache(tmp_path)
    a = synthguard.evaluate(demo_data["original"].head(300), demo_data["leaky"].head(300),
                            metrics=["exact_matches"], cache=cache)
    b = synthguard.evaluate(demo_data["original"].head(300), demo_data["leaky"].head(300),
                            metrics=["exact_matches"], cache=cache)
    assert b["exact_matches"]["cached"] is True
    assert a["exact_matches"]["result"] == b["exact_matches"]["result"]
