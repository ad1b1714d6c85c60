"""``synthguard attack``: run a targeted threat model (shadow modelling) against a generator."""

from __future__ import annotations

from pathlib import Path

import click

from ..attacks.audit import ATTACKS
from ..attacks.audit import run_audit as _run_audit
from ..core.io import check_writable
from ..data.loading import load_table
from ..errors import ConfigError
from ..generators import BUILTIN
from ..run.config import validate_seed
from .evaluate import write_outputs
from .output import claim_stdout, say

# Python parameter names of run_audit -> the flags that set them, for error messages
_FLAGS = {"num_training_records": "--train-size", "num_synthetic_records": "--synthetic-size",
          "auxiliary_split": "--aux-split", "num_shadow": "--shadow", "num_test": "--test",
          "n_jobs": "--jobs"}


def _criterion(text: str) -> object:
    parts = [p.strip() for p in text.split(":")]
    if len(parts) == 1:
        return parts[0]
    try:
        return (parts[0], float(parts[1]))
    except ValueError as exc:
        raise ConfigError(f"--criterion {text!r}: write 'accuracy', 'fpr:0.01', 'tpr:0.5' or "
                          "'threshold:-0.1'") from exc


@click.command("attack")
@click.option("--dataset", "-d", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Population sample (auxiliary knowledge) or exact training set (.csv/.parquet).")
@click.option("--metadata", "-m", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="SynEval-style metadata JSON/YAML (sdtypes, sensitive...).")
@click.option("--generator", "-g", default="copula", show_default=True,
              type=click.Choice(sorted(BUILTIN)), help="Built-in generator to attack.")
@click.option("--generator-cmd", default=None,
              help='External generator: training CSV on stdin, CSV on stdout, called as CMD --n N '
                   '--seed S (e.g. "python gen.py"). Overrides --generator.')
@click.option("--threat-model", "kind", default="mia", show_default=True,
              type=click.Choice(["mia", "aia"]), help="Membership or attribute inference.")
@click.option("--knowledge", default="auxiliary", show_default=True,
              type=click.Choice(["auxiliary", "exact"]),
              help="Attacker's data knowledge: a sample of the population, or the exact training set.")
@click.option("--targets", default="auto:3", show_default=True,
              help="'auto:K' (the K most isolated records) or comma-separated row ids (0-based).")
@click.option("--attacks", default="closest_distance,groundhog", show_default=True,
              help=f"Comma-separated attacks: {', '.join(ATTACKS)}.")
@click.option("--sensitive", default=None, help="AIA: the sensitive column.")
@click.option("--values", default=None, help="AIA: the two candidate values, comma-separated.")
@click.option("--shadow", "num_shadow", default=100, show_default=True, type=int,
              help="Shadow (training) datasets.")
@click.option("--test", "num_test", default=100, show_default=True, type=int,
              help="Test datasets (stand-ins for the real release).")
@click.option("--train-size", default=500, show_default=True, type=int,
              help="Rows of each real training dataset (auxiliary knowledge).")
@click.option("--synthetic-size", default=None, type=int,
              help="Rows generated per dataset (default: the training size).")
@click.option("--aux-split", default=0.5, show_default=True, type=float,
              help="Share of the dataset given to the attacker.")
@click.option("--distance", default="gower", show_default=True,
              type=click.Choice(["gower", "hamming", "lp"]), help="Distance of the distance attacks.")
@click.option("--criterion", default="accuracy", show_default=True,
              help="Threshold criterion: accuracy, tpr:V, fpr:V or threshold:V.")
@click.option("--jobs", default=1, show_default=True, type=int,
              help="Generator runs in parallel (threads; results identical to a serial run).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed for every random choice.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON report here (same format as 'synthguard evaluate').")
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
def command(dataset: Path, metadata: Path | None, generator: str, generator_cmd: str | None, kind: str,
            knowledge: str, targets: str, attacks: str, sensitive: str | None, values: str | None,
            num_shadow: int, num_test: int, train_size: int, synthetic_size: int | None,
            aux_split: float, distance: str, criterion: str, jobs: int, seed: int, json_path: Path | None,
            no_progress: bool) -> None:
    """Audit a generator with targeted attacks (TAPAS-style shadow modelling)."""
    validate_seed(seed, "--seed")
    if json_path is not None:
        from ..core.io import check_distinct_outputs

        check_distinct_outputs({"--json": json_path}, {"--dataset": dataset, "--metadata": metadata})
        check_writable(json_path, "--json")
        claim_stdout(json_path)
    frame, _ = load_table(dataset, "dataset")
    gen = generator_cmd if generator_cmd else generator
    if generator_cmd is None and generator not in BUILTIN:
        raise ConfigError(f"unknown generator {generator!r}: use one of {sorted(BUILTIN)}")
    vals = [v.strip() for v in values.split(",")] if values else None
    if vals is not None and sensitive is not None and sensitive in frame.columns:
        col = frame[sensitive]
        if col.dtype.kind in "ifb":
            vals = [col.dtype.type(float(v)) if col.dtype.kind == "f" else col.dtype.type(int(float(v)))
                    for v in vals]
    try:
        report = _run_audit(frame, gen, metadata=metadata, targets=targets,
                            attacks=[a for a in attacks.split(",") if a.strip()], kind=kind,
                            sensitive=sensitive, values=vals, knowledge=knowledge, num_shadow=num_shadow,
                            num_test=num_test, num_training_records=train_size,
                            num_synthetic_records=synthetic_size, auxiliary_split=aux_split,
                            distance=distance, criterion=_criterion(criterion), seed=seed,
                            progress=not no_progress, n_jobs=jobs)
    except ConfigError as exc:  # name the command-line flags, not the Python parameters
        msg = str(exc)
        for param, flag in _FLAGS.items():
            msg = msg.replace(param, flag)
        raise ConfigError(msg) from exc
    say(report.to_console())
    write_outputs(report, json_path, None)
