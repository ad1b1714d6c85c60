"""``synthguard evaluate``."""

from __future__ import annotations

from pathlib import Path

import click

from ..runner import evaluate


@click.command("evaluate")
@click.option("--original", "-o", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Real rows the generator was trained on (.csv or .parquet).")
@click.option("--synthetic", "-s", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The release to evaluate.")
@click.option("--control", "-c", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Real rows held out from training (enables baselines and residual risks).")
@click.option("--metadata", "-m", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="SynEval-style metadata JSON/YAML (sdtypes, quasi_identifiers, sensitive...).")
@click.option("--metrics", default=None, help="Comma-separated metric names (see 'synthguard metrics').")
@click.option("--config", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="YAML/JSON config: metrics, parameters, thresholds.")
@click.option("--preset", default=None, help="quick, privacy or full.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed for every random choice.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON report here.")
@click.option("--backend", default="auto", show_default=True,
              type=click.Choice(["auto", "numba", "numpy"]), help="Neighbour-engine backend.")
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
def command(original: Path, synthetic: Path, control: Path | None, metadata: Path | None,
            metrics: str | None, config: Path | None, preset: str | None, seed: int,
            json_path: Path | None, backend: str, no_progress: bool) -> None:
    """Evaluate a synthetic release against its original (and control) data."""
    report = evaluate(original, synthetic, control=control, metadata=metadata, metrics=metrics,
                      config=config, seed=seed, preset=preset, backend=backend,
                      progress=not no_progress)
    click.echo(report.to_console())
    if json_path is not None:
        report.to_json(json_path)
        click.echo(f"\nJSON report written to {json_path}")
