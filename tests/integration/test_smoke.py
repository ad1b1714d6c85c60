"""The spine holds: package imports, registry lists, CLI answers."""

from click.testing import CliRunner

import synthguard
from synthguard.cli import main


def test_version_and_public_surface():
    assert synthguard.__version__
    assert callable(synthguard.evaluate)


def test_cli_metrics_lists():
    res = CliRunner().invoke(main, ["metrics"])
    assert res.exit_code == 0, res.output


def test_cli_unknown_metric_exit_2(tmp_path, demo_data):
    o = tmp_path / "o.csv"
    s = tmp_path / "s.csv"
    demo_data["original"].to_csv(o, index=False)
    demo_data["safe"].to_csv(s, index=False)
    res = CliRunner().invoke(main, ["evaluate", "-o", str(o), "-s", str(s), "--metrics", "nope"])
    assert res.exit_code == 2
    assert "unknown metric 'nope'" in res.output
