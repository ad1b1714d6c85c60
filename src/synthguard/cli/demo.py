"""``synthguard demo``: evaluate a leaky and a safe release of made-up data, side by side."""

from __future__ import annotations

from pathlib import Path

import click

from .evaluate import cache_options, cli_options, jobs_option


@click.command("demo")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the demo data and metrics.")
@click.option("--rows", default=4000, show_default=True, type=int, help="Population size (split in two).")
@click.option("--metrics", default=None, help="Comma-separated metrics (default: every default metric).")
@click.option("--preset", default=None, help="quick, privacy or full.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also write the data and the JSON reports into this folder (original.csv, "
                   "control.csv, leaky.csv, safe.csv, report_leaky.json, report_safe.json; without "
                   "--html the pages leaky.html, leaky.dossier.html, leaky.compare.html too); "
                   "refused when one of them exists, unless --force.")
@click.option("--force", is_flag=True, help="Let --out overwrite the demo's files already in that folder.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the self-contained HTML report of the leaky release here, its dossier "
                   "('<name>.dossier.html') and a side-by-side comparison ('<name>.compare.html') next "
                   "to it. Default: into --out, else a new folder in the temporary directory.")
@cache_options
@jobs_option
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
def command(seed: int, rows: int, metrics: str | None, preset: str | None, out_dir: Path | None,
            html_path: Path | None, use_cache: bool, cache_dir: Path | None, jobs: int | None,
            no_progress: bool, force: bool = False) -> None:
    """Build demo data, evaluate a leaky and a safe release, print them side by side, and write
    the leaky release's HTML report and dossier (the paths are printed)."""
    from ..api import evaluate
    from ..core.io import write_csv
    from ..demo import DEMO_METADATA, make_demo
    from ..report.console import fmt_number

    check_demo_outputs(out_dir, html_path, force)
    options = cli_options(use_cache=use_cache, cache_dir=cache_dir, no_progress=no_progress,
                          metrics=metrics, preset=preset, seed=seed, jobs=jobs)
    data = make_demo(rows, seed)
    reports = {}
    for name in ("leaky", "safe"):
        reports[name] = evaluate(data["original"], data[name], data["control"], DEMO_METADATA,
                                 options=options)
    rows_out = []
    for metric in reports["leaky"].metrics:
        cells = [metric]
        for name in ("leaky", "safe"):
            entry = reports[name][metric]
            res = entry["result"]
            if res is None:
                cells.append(f"{entry['status']}")
            else:
                flag = "  <-- HIGH" if res["risk_level"] == "high" else ""
                cells.append(f"{fmt_number(res['value'])} ({res['risk_level']}){flag}")
        rows_out.append(cells)
    w0 = max(len("metric"), *(len(r[0]) for r in rows_out))
    w1 = max(len("leaky release"), *(len(r[1]) for r in rows_out))
    engine = reports["leaky"].header.get("engine", {}).get("backend", "?")
    click.echo(f"synthguard demo: {len(data['original'])} original rows, {len(data['control'])} control "
               f"rows, seed {seed}; neighbour engine: {engine}\n")
    click.echo(f"{'metric'.ljust(w0)}  {'leaky release'.ljust(w1)}  safe release")
    click.echo(f"{'-' * w0}  {'-' * w1}  {'-' * 24}")
    for r in rows_out:
        click.echo(f"{r[0].ljust(w0)}  {r[1].ljust(w1)}  {r[2]}")
    from ..report.console import render_decision, terminal_width

    for name in ("leaky", "safe"):
        click.echo(f"\n{name} release:\n" + render_decision(reports[name], terminal_width()))
    if out_dir is not None:
        for key in ("original", "control", "leaky", "safe"):
            write_csv(data[key], out_dir / f"{key}.csv", "--out")
        for key, rep in reports.items():
            rep.to_json(out_dir / f"report_{key}.json")
        click.echo(f"data and reports written to {out_dir}")
    click.echo(write_pages(reports, html_path, out_dir))
    click.echo(NEXT)


#: The files ``--out`` writes into its folder.
OUT_FILES = ("original.csv", "control.csv", "leaky.csv", "safe.csv", "report_leaky.json",
             "report_safe.json")
#: The pages the demo writes into ``--out`` when no ``--html`` is given.
PAGES = ("leaky.html", "leaky.dossier.html", "leaky.compare.html")


def check_demo_outputs(out_dir: Path | None, html_path: Path | None, force: bool) -> None:
    """Before any work: ``--out`` never overwrites a file already there unless ``--force`` (it may
    be the user's own ``original.csv``); the folder is created; every output is writable."""
    import os

    from ..core.io import check_writable, is_stdout
    from ..errors import ConfigError

    if html_path is not None:
        if is_stdout(html_path):
            raise ConfigError("--html -: the demo writes two pages (the report and a comparison "
                              "next to it): give a file path")
        check_writable(html_path, "--html")
        for suffix in (".dossier.html", ".compare.html"):
            check_writable(html_path.with_name(html_path.stem + suffix), "--html")
    if out_dir is None:
        return
    files = [out_dir / name for name in OUT_FILES + (PAGES if html_path is None else ())]
    there = [f.name for f in files if os.path.lexists(f)]
    if there and not force:
        raise ConfigError(f"--out {out_dir} already holds {', '.join(there)}, which the demo would "
                          "overwrite: give an empty or new folder, or add --force")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--out {out_dir}: cannot create the folder ({exc.strerror or exc}): "
                          "choose another path") from exc
    for f in files:
        check_writable(f, "--out")


def write_pages(reports, html_path: Path | None, out_dir: Path | None) -> str:
    """Write the leaky release's HTML report and dossier, and both releases side by side; say
    where. Into ``--html``'s folder (the page at that path), else ``--out``, else a new folder
    under the system's temporary directory (nothing of the user's is ever replaced)."""
    import tempfile

    from ..report.compare import Comparison

    if html_path is not None:
        page = html_path
    else:
        folder = out_dir if out_dir is not None else Path(tempfile.mkdtemp(prefix="synthguard-demo-"))
        page = folder / "leaky.html"
    stem = page.with_suffix("")
    dossier = stem.with_name(stem.name + ".dossier.html")
    side = stem.with_name(stem.name + ".compare.html")
    reports["leaky"].to_html(page, title="synthguard demo: the leaky release")
    reports["leaky"].to_dossier(dossier)
    Comparison(reports).to_html(side, title="synthguard demo: leaky vs safe release")
    return ("\nThe leaky release, for people:\n"
            f"  HTML report     {page}\n"
            f"  release dossier {dossier} (print-ready; fill in the blanks with --context, see "
            "docs/dossier.md)\n"
            f"  side by side    {side}")


#: What the demo says last: the command to run on one's own files.
NEXT = ("\nNext, on your own files (training rows, the release, real rows held out from training):\n"
        "  synthguard evaluate --original train.csv --synthetic release.csv --control holdout.csv "
        "--html report.html --dossier dossier.html --records-out records.csv\n"
        "Add --context context.yaml for the dossier's release model, recipients, purpose and "
        "signatory (docs/dossier-context.example.yaml). No hold-out yet? Keep back about 1,000 real "
        "rows before training (a detection limit near 1 %); see docs/user-guide.md.")
