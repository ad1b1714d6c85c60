"""The ``synthguard`` command line: ``evaluate``, ``metrics``, ``demo``, ``compare``, ``attack``,
``profile``, ``run`` (a PETsARD YAML), ``warmup``.

Every :class:`~synthguard.errors.SynthguardError` becomes one line on stderr and exit code 2.
``python -m synthguard`` and the installed ``synthguard`` script start at :func:`program` (the command,
then a quick exit); :func:`main` is the click group itself (what tests invoke in-process).
Subcommands are imported only when they run (``synthguard --help`` and ``synthguard metrics`` import
neither pandas nor numpy); their one-line help is listed in ``_COMMANDS`` (a test checks it matches).
"""

from __future__ import annotations

import sys
from importlib import import_module

import click

from ..errors import SynthguardError

# name -> (module under synthguard.cli holding ``command``, one-line help shown by --help)
_COMMANDS: dict[str, tuple[str, str]] = {
    "attack": ("attack", "Audit a generator with targeted attacks (TAPAS-style shadow modelling)."),
    "compare": ("compare", "Rank SYNTHETIC releases (files) of the same original side by side."),
    "demo": ("demo", "Build demo data, evaluate a leaky and a safe release, print them side by side, "
                     "and write the leaky release's HTML report and dossier (the paths are printed)."),
    "evaluate": ("evaluate", "Evaluate a synthetic release against its original (and control) data."),
    "metrics": ("metrics", "List every metric: family, needs, direction, parameters and default thresholds."),
    "profile": ("profile", "Profile ORIGINAL (binned marginals and pairs, vocabularies, ranges; never a row) "
                           "for 'synthguard evaluate --original-stats'."),
    "run": ("run", "Run a PETsARD YAML (Loader, Splitter, Synthesizer, Evaluator, Reporter blocks)."),
    "warmup": ("warmup", "Compile the numba kernels once (cached on disk), so later runs start fast."),
}


def _load(name: str) -> click.Command:
    return import_module(f"{__name__}.{_COMMANDS[name][0]}").command


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(_COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is None and cmd_name in _COMMANDS:
            cmd = _load(cmd_name)
            self.add_command(cmd, cmd_name)
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in self.commands:
                cmd = self.commands[name]
                if cmd.hidden:
                    continue
                rows.append((name, cmd.get_short_help_str(formatter.width - 6 - len(name))))
            else:
                rows.append((name, _COMMANDS[name][1]))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context):  # noqa: D401 - click API
        try:
            return super().invoke(ctx)
        except SynthguardError as exc:
            from ..core.escape import terminal_safe

            click.echo(f"error: {terminal_safe(exc)}", err=True)  # one line, whatever a name holds
            sys.exit(2)
        except KeyboardInterrupt:
            interrupted()


def interrupted() -> None:
    """Ctrl-C: one line, exit code 130 (128 + SIGINT, what shells report), at once.

    Outputs are written only after every metric finished, through a temporary file and a rename,
    so nothing partial exists. ``os._exit`` does not wait for metric threads still running (the
    thread pool's exit hook would join them: 20 s and more) nor for compiled kernels.
    """
    import os

    try:
        click.echo("interrupted (Ctrl-C): stopped; no partial file written", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(130)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from .._version import __version__

    click.echo(f"synthguard, version {__version__}")
    ctx.exit()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
def main() -> None:
    """synthguard: how much a synthetic or anonymised dataset leaks, and how useful it still is."""


def program() -> None:
    """The ``synthguard`` program: :func:`main`, then an exit that skips the garbage collector.

    Once the command is done (its outputs written and closed), every object left is frozen
    (:func:`gc.freeze`): the interpreter's shutdown then frees them by reference counting but no
    longer runs cyclic collections over the ~200,000 objects that pandas, scikit-learn and numba's
    compiled kernels leave behind (0.4-0.5 s of a 4 s default run's wall). The program owns its
    process, so nothing else depends on that collector; a library call (``synthguard.evaluate``,
    the compat facades, :func:`main` invoked in-process) leaves its caller's collector alone.

    Examples
    --------
    >>> import subprocess, sys
    >>> code = "import sys; sys.argv = ['synthguard', '--version']; from synthguard.cli import program; program()"
    >>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.startswith("synthguard")
    True
    """
    import gc

    try:
        main()
    finally:
        gc.freeze()
