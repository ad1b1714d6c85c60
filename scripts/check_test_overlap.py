"""Does any test file of this repository reproduce a reference project's test code? (issue #33)

Compares token shingles of our ``tests/**/*.py`` with the reference projects' own test files,
fetched into a folder for the check only (never committed): SDMetrics' privacy tests
(sdv-dev/SDMetrics ``tests/integration/single_table/privacy/*.py``,
``tests/unit/single_table/test_new_row_synthesis.py``) and anonymeter's ``tests/*.py`` (the
``anonymeter-1.1.0`` sdist ships them; ``pip download --no-deps --no-binary :all: anonymeter==1.1.0``).

Each file is read with :mod:`tokenize`; comments, docstrings and layout tokens (newlines, indents)
are dropped, every other token (names, operators, numbers, string literals, so inputs count) is
kept as written. A shingle is ``k`` consecutive tokens (default 12). For each pair (our file,
reference file) it reports:

* ``ours_in_ref``: the share of our file's shingles that occur in the reference file;
* ``ref_in_ours``: the share of the reference file's shingles that occur in our file;
* ``run``: the longest stretch of our file whose consecutive shingles all occur in the reference
  (in tokens).

It prints the top pairs and exits 1 when a pair reaches ``--max-share`` (default 0.10) in either
direction or ``--max-run`` tokens (default 60): a copied test body or input table is far above
both, boilerplate (imports, ``pd.DataFrame({...})``) far below. ``--ours`` can point at other files,
e.g. an old revision's test files, to see what the check reports for copied code.

Usage::

    python scripts/check_test_overlap.py --ref /tmp/ref            # every .py under /tmp/ref
    python scripts/check_test_overlap.py --ref /tmp/ref --ours old_port_a.py old_port_b.py
"""

from __future__ import annotations

import argparse
import io
import sys
import tokenize
from collections.abc import Iterable
from pathlib import Path

SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
        tokenize.ENCODING, tokenize.ENDMARKER}


def tokens(source: str) -> list[str]:
    """The file's tokens without comments, docstrings and layout (a string statement on its own
    line is a docstring)."""
    out: list[str] = []
    prev = tokenize.NEWLINE
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in SKIP:
            if tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                prev = tokenize.NEWLINE
            continue
        if tok.type == tokenize.STRING and prev == tokenize.NEWLINE:
            continue  # a docstring (or a bare string statement)
        out.append(tok.string)
        prev = tok.type
    return out


def shingles(toks: list[str], k: int) -> list[tuple[str, ...]]:
    return [tuple(toks[i:i + k]) for i in range(len(toks) - k + 1)]


def compare(ours: list[str], ref: list[str], k: int) -> dict[str, float]:
    """Shares of shingles found in the other file, and the longest run of ours found in ref."""
    a, b = shingles(ours, k), shingles(ref, k)
    if not a or not b:
        return {"ours_in_ref": 0.0, "ref_in_ours": 0.0, "run": 0}
    sa, sb = set(a), set(b)
    hit = [s in sb for s in a]
    run = best = 0
    for h in hit:
        run = run + 1 if h else 0
        best = max(best, run)
    return {"ours_in_ref": sum(hit) / len(a), "ref_in_ours": len(sb & sa) / len(sb),
            "run": best + k - 1 if best else 0}


def python_files(paths: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", type=Path, nargs="+", required=True, help="reference test files or folders")
    ap.add_argument("--ours", type=Path, nargs="+", default=[here / "tests"], help="default: tests/")
    ap.add_argument("-k", type=int, default=12, help="tokens per shingle")
    ap.add_argument("--max-share", type=float, default=0.10)
    ap.add_argument("--max-run", type=int, default=60)
    ap.add_argument("--top", type=int, default=8)
    args = ap.parse_args(argv)
    refs = {p: tokens(p.read_text(encoding="utf-8")) for p in python_files(args.ref)}
    ours = {p: tokens(p.read_text(encoding="utf-8")) for p in python_files(args.ours)}
    rows = []
    for po, to in ours.items():
        for pr, tr in refs.items():
            rows.append((po, pr, compare(to, tr, args.k)))
    rows.sort(key=lambda r: (max(r[2]["ours_in_ref"], r[2]["ref_in_ours"]), r[2]["run"]), reverse=True)
    print(f"{len(ours)} of our files x {len(refs)} reference files, {args.k}-token shingles")
    print(f"{'ours_in_ref':>11} {'ref_in_ours':>11} {'run':>5}  ours -> reference")
    for po, pr, m in rows[:args.top]:
        print(f"{m['ours_in_ref']:11.3f} {m['ref_in_ours']:11.3f} {m['run']:5d}  {po} -> {pr}")
    worst_share = max((max(m["ours_in_ref"], m["ref_in_ours"]) for _, _, m in rows), default=0.0)
    worst_run = max((m["run"] for _, _, m in rows), default=0)
    print(f"highest share {worst_share:.3f} (limit {args.max_share}), longest run {worst_run} tokens "
          f"(limit {args.max_run})")
    return int(worst_share >= args.max_share or worst_run >= args.max_run)


if __name__ == "__main__":
    sys.exit(main())
