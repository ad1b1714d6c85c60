"""The package's layout is the one docs/architecture.md describes, and imports only point down.

The import graph and the contracts are import-linter's (a test dependency, the usual tool for this):
its contracts live in ``pyproject.toml`` (``[tool.importlinter]``, so ``lint-imports`` checks the same
thing from a shell), and these tests check that they are the map of docs/architecture.md and that the
package keeps them. Every import counts, at module level or inside a function: an import inside a
function still ties the two modules together (that is how the two import circles of the old layout
hid).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import importlinter.api  # noqa: F401  (configures import-linter's settings)
from importlinter.application import output
from importlinter.application.use_cases import lint_imports

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"
PYPROJECT = REPO / "pyproject.toml"


def _map() -> dict[str, int]:
    """docs/architecture.md's map: folder or module -> its layer."""
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- architecture-map: begin -->")[1].split("<!-- architecture-map: end -->")[0]
    rows = re.findall(r"^\| `([^`]+)` \| (\d+) \|", block, flags=re.M)
    return {name.rstrip("/").removesuffix(".py"): int(layer) for name, layer in rows}


def _contracts() -> dict[str, dict]:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]
    return {c["id"]: c for c in config["contracts"]}


def _lint(config: Path, capsys, monkeypatch) -> tuple[bool, str]:
    """import-linter's verdict on ``config`` (no cache: the suite depends on none) and its output,
    unwrapped whatever the terminal's width (its console reads ``COLUMNS`` once, at import)."""
    monkeypatch.setattr(output.console, "width", 10_000)
    kept = lint_imports(config_filename=str(config), cache_dir=None, no_logo=True)
    return kept, capsys.readouterr().out


def test_the_layers_contract_is_the_architecture_map_top_to_bottom():
    by_layer: dict[int, set[str]] = {}
    for name, layer in _map().items():
        by_layer.setdefault(layer, set()).add(name)
    doc = [by_layer[k] for k in sorted(by_layer, reverse=True)]
    contract = [{m.strip() for m in layer.split(":")} for layer in _contracts()["layers"]["layers"]]
    # __main__ (python -m synthguard) sits above everything; the rest is the map, highest first
    assert contract == [{"__main__"}, *doc]
    # exhaustive: a folder or public module missing from the contract (and so from the map) breaks it
    assert _contracts()["layers"]["exhaustive"] is True


def test_the_package_keeps_its_import_contracts(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "src"))
    kept, out = _lint(PYPROJECT, capsys, monkeypatch)
    assert kept, out
    assert "2 kept, 0 broken" in out


def test_the_one_upward_import_is_plugin_discovery():
    """registry/lookup collects the ``@register`` cards of metrics/: the only import that points up,
    and the contracts ignore it there and nowhere else (import-linter refuses an ignore that matches
    no import, so this list cannot go stale)."""
    for contract in _contracts().values():
        assert contract.get("ignore_imports", []) == ["synthguard.registry.lookup -> synthguard.metrics"]


def _package(root: Path, name: str, modules: dict[str, str]) -> None:
    (root / name).mkdir()
    for mod, source in modules.items():
        (root / name / f"{mod}.py").write_text(source, encoding="utf-8")


def test_the_contracts_see_an_upward_import_and_a_circle(tmp_path, capsys, monkeypatch):
    """Not vacuous: the same two contracts on a made-up package break on the faults they forbid,
    including an import inside a function."""
    name = "sg_layers_probe"
    _package(tmp_path, name, {
        "__init__": "",
        "low": "def f():\n    from . import high\n",  # upward, inside a function
        "high": "from . import low\n",
        "left": "from . import right\n",
        "right": "from . import left\n",  # a circle between siblings of one layer
    })
    config = tmp_path / "probe.toml"
    config.write_text(
        "[tool.importlinter]\n"
        f'root_package = "{name}"\n'
        "[[tool.importlinter.contracts]]\n"
        'id = "layers"\nname = "layers"\ntype = "layers"\n'
        f'containers = ["{name}"]\nlayers = ["high", "left : right", "low"]\n'
        "[[tool.importlinter.contracts]]\n"
        f'id = "acyclic"\nname = "acyclic"\ntype = "acyclic_siblings"\nancestors = ["{name}"]\n',
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        kept, out = _lint(config, capsys, monkeypatch)
    finally:
        sys.modules.pop(name, None)
    assert not kept
    assert "0 kept, 2 broken" in out
    assert f"{name}.low -> {name}.high" in out
    assert ".left -> .right" in out or ".right -> .left" in out
