"""``synthguard profile``: store the original's statistics once, evaluate releases without its rows."""

from __future__ import annotations

from pathlib import Path

import click

from ..run.profile import profile


@click.command("profile")
@click.argument("original", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--output", "-o", "output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the statistics (JSON).")
@click.option("--metadata", "-m", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="SynEval-style metadata JSON/YAML (sdtypes...).")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seed (fixes the sampled column triples; evaluate with the same seed).")
@click.option("--max-bins", default=10, show_default=True, type=int, help="accuracy: bins per numeric column.")
@click.option("--max-categories", default=10, show_default=True, type=int,
              help="accuracy: categories kept per column.")
@click.option("--n-triples", default=10_000, show_default=True, type=int,
              help="accuracy: sampled column triples.")
@click.option("--coarse", is_flag=True,
              help="Store quantiles instead of every distinct numeric value and leave out categories "
                   "seen fewer than --min-count times (quality_report's KS/TV become approximate).")
@click.option("--ecdf-points", default=1001, show_default=True, type=int,
              help="With --coarse: quantile points kept per numeric column.")
@click.option("--min-count", default=5, show_default=True, type=int,
              help="With --coarse: categories seen fewer times are left out of the labels.")
def command(original: Path, output: Path, metadata: Path | None, seed: int, max_bins: int,
            max_categories: int, n_triples: int, coarse: bool, ecdf_points: int, min_count: int) -> None:
    """Profile ORIGINAL (binned marginals and pairs, vocabularies, ranges; never a row) for
    'synthguard evaluate --original-stats'."""
    from ..core.io import check_distinct_outputs, check_writable, output_target
    from .output import claim_stdout, say

    check_distinct_outputs({"--output": output}, {"ORIGINAL": original, "--metadata": metadata})
    check_writable(output, "--output")
    claim_stdout(output)
    stats = profile(original, metadata, seed=seed, max_bins=max_bins, max_categories=max_categories,
                    n_triples=n_triples, exact_shapes=not coarse, ecdf_points=ecdf_points,
                    min_count=min_count if coarse else 1)
    stats.save(output)
    target = output_target(output, "--output")
    size = f" ({target.path.stat().st_size / 1024:.0f} KiB)" if target.kind == "file" else ""
    say(f"profile of {stats.source} ({stats.n_rows} rows, {len(stats.schema.columns)} columns) "
        f"written to {output}{size}")
