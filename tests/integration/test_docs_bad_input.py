"""docs/bad-input.md stays true: every row of its matrix names an existing test that checks the
row's exit code (2, 0 or 130; '-' for API cases)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _rows() -> list[list[str]]:
    text = (REPO / "docs" / "bad-input.md").read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith("| input") or line.startswith("| ---"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        rows.append(cells)
    return rows


def _test_source(ref: str) -> str:
    path, name = ref.split("::")
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment((REPO / path).read_text(encoding="utf-8"), node) or ""
    raise AssertionError(f"docs/bad-input.md names {ref}, which does not exist")


def test_every_row_is_exercised_with_its_exit_code():
    rows = _rows()
    assert len(rows) >= 40
    for cells in rows:
        assert len(cells) == 4, cells
        _, _, code, ref = cells
        src = _test_source(ref)
        if code == "2":
            assert "assert_cli_error" in src or "exit_code == 2" in src, ref
        elif code == "0":
            assert ("exit_code == 0" in src or "returncode == 0" in src or "synthguard.evaluate" in src
                    or "_rate(" in src), ref
        elif code == "130":  # Ctrl-C, checked on a real process
            assert "returncode == 130" in src, ref
        else:
            assert code == "-", cells
