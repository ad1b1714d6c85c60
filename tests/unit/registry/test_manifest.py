"""The generated metric manifest equals the live registry, and the cold paths stay lazy."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from synthguard import registry
from synthguard.errors import ConfigError


def test_manifest_matches_registry():
    from synthguard.registry._manifest import METRICS

    live = registry.live_manifest()
    stale = sorted(set(live) ^ set(METRICS)) + sorted(k for k in set(live) & set(METRICS)
                                                       if live[k] != METRICS[k])
    assert not stale, (f"src/synthguard/registry/_manifest.py is out of date for {stale}: regenerate it with "
                       f"'{registry.REGENERATE}' and commit the result")
    assert registry.render_manifest(live) == registry.MANIFEST_PATH.read_text(encoding="utf-8"), (
        f"src/synthguard/registry/_manifest.py differs in form: regenerate it with '{registry.REGENERATE}'")


def test_manifest_info_equals_spec():
    for spec in registry.all_metrics():
        if spec.func.__module__.startswith("synthguard.metrics."):
            assert registry._manifest_infos()[spec.name].to_dict() == spec.to_dict()


def test_lookup_without_import_and_errors():
    assert registry.canonical_name("DCRBaselineProtection") == "dcr_baseline_protection"
    assert registry.metric_info("membership-inference").name == "distinguishability"
    with pytest.raises(ConfigError, match="did you mean 'dcr'"):
        registry.canonical_name("dcrr")
    spec = registry.get_metric("dcr")
    with pytest.raises(ConfigError, match="percentile"):
        spec.resolve_params({"percentile": "five"})


def _imported_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True).stdout.split()
    return set(out)


@pytest.mark.parametrize("code", [
    "import synthguard",
    "from synthguard.cli import main\nimport contextlib, io\n"
    "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()): main(['metrics'])",
    "from synthguard.cli import main\nimport contextlib, io\n"
    "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()): main(['--help'])",
])
def test_cold_paths_import_nothing_heavy(code):
    mods = _imported_after(code)
    heavy = {"pandas", "scipy", "sklearn", "numba", "tqdm", "synthguard.metrics", "synthguard.run.runner"}
    assert not heavy & mods, f"{sorted(heavy & mods)} imported by: {code!r}"


def test_build_config_imports_only_named_metric_modules():
    mods = _imported_after("from synthguard.run.config import build_config\n"
                           "build_config(['exact_matches'], {'thresholds': {'exact_matches': {'high': 0.1}}})")
    assert "synthguard.metrics.privacy.matching" in mods
    assert "synthguard.metrics.privacy.distinguish" not in mods
    assert "sklearn" not in mods


def test_cli_short_help_matches_commands():
    from synthguard import cli

    for name, (_mod, short) in cli._COMMANDS.items():
        assert cli._load(name).get_short_help_str(limit=1000) == short, name
    res = CliRunner().invoke(cli.main, ["--help"])
    assert res.exit_code == 0 and all(name in res.output for name in cli._COMMANDS)
