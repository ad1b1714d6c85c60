"""Every fenced ``python`` block of docs/user-guide.md runs, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "user-guide.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_guide_has_petsard_and_syneval_examples():
    blocks = python_blocks(GUIDE.read_text(encoding="utf-8"))
    joined = "\n".join(blocks)
    assert len(blocks) >= 8
    assert "ev.create()" in joined and 'ev.eval({"ori"' in joined     # PETsARD 1.10's contract
    assert 'create(data={"ori"' in joined and ".get_global()" in joined  # the legacy calls
    assert "PrivacyEvaluator(" in joined and "evaluator.evaluate()" in joined


def test_guide_preset_table_names_what_each_preset_adds():
    """The preset table names, row by row, exactly the metrics each preset adds to the one above
    (the registry's cards decide; a card that joins or leaves a preset fails this until the guide
    says so)."""
    from synthguard.registry import preset_metrics

    text = GUIDE.read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(quick|privacy|full)` \| (.*?) \|$", text, flags=re.M))
    before: list[str] = []
    for preset in ("quick", "privacy", "full"):
        names = [n for n in re.findall(r"`([a-z0-9_]+)`", rows[preset]) if n not in ("quick", "privacy")]
        added = [m for m in preset_metrics(preset) if m not in before]
        assert names == added, (preset, names, added)
        before = preset_metrics(preset)


def test_guide_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "user_guide"}
    for i, block in enumerate(python_blocks(GUIDE.read_text(encoding="utf-8"))):
        try:
            exec(compile(block, f"{GUIDE.name}[block {i}]", "exec"), ns)  # noqa: S102
        except Exception as exc:  # pragma: no cover - the message is the point
            pytest.fail(f"docs/user-guide.md python block {i} failed: {type(exc).__name__}: {exc}\n{block}")
    assert (tmp_path / "report.html").exists() and (tmp_path / "comparison.html").exists()
