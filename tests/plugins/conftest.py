"""The example plugin (``examples/synthguard-example-plugin``) as an installed package.

``scripts/test.sh`` installs it in both test venvs (``pip install -e``) and sets
``SYNTHGUARD_REQUIRE_PLUGIN=1``: there a missing plugin fails the tests. Elsewhere (a venv made
before the plugin existed) they are skipped with the command that installs it.
"""

from __future__ import annotations

import os
from importlib.metadata import entry_points

import pytest

PLUGIN = "rare_qi_echo"
PACKAGE = "synthguard_example_plugin"
INSTALL = "pip install -e examples/synthguard-example-plugin"


@pytest.fixture(scope="session")
def plugin_installed() -> str:
    """The plugin's entry point (``name = module``), or a skip / failure saying how to install it."""
    found = [ep for ep in entry_points(group="synthguard.metrics") if ep.name == PLUGIN]
    if not found:
        why = f"the example plugin is not installed in this venv: {INSTALL} (scripts/test.sh does)"
        if os.environ.get("SYNTHGUARD_REQUIRE_PLUGIN") == "1":
            pytest.fail(why)
        pytest.skip(why)
    return f"{found[0].name} = {found[0].value}"
