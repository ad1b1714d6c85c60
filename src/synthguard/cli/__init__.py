"""The ``synthguard`` command line: ``evaluate``, ``metrics``, ``demo``, ``run`` (a PETsARD YAML), and more.

Every :class:`~synthguard.errors.SynthguardError` becomes one line on stderr and exit code 2.
"""

from __future__ import annotations

import sys

import click

from .. import __version__
from ..errors import SynthguardError


class _Group(click.Group):
    def invoke(self, ctx: click.Context):  # noqa: D401 - click API
        try:
            return super().invoke(ctx)
        except SynthguardError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="synthguard")
def main() -> None:
    """synthguard: how much a synthetic or anonymised dataset leaks, and how useful it still is."""


from . import demo as _demo  # noqa: E402
from . import evaluate as _evaluate  # noqa: E402
from . import metrics as _metrics  # noqa: E402
from . import profile as _profile  # noqa: E402
from . import run as _run  # noqa: E402

for _mod in (_evaluate, _metrics, _demo, _profile, _run):
    main.add_command(_mod.command)

# optional command modules contributed by later families
for _name in ("attack", "compare"):
    try:
        _m = __import__(f"{__name__}.{_name}", fromlist=["command"])
    except ModuleNotFoundError as _exc:  # pragma: no cover - module not written yet
        if _exc.name != f"{__name__}.{_name}":
            raise
        continue
    main.add_command(_m.command)
