"""Byte-identity of synthguard's JSON reports across a change (issue #24): a fixed set of runs.

The runs go through public entry points only, so the same set runs before and after a refactor
that moves modules: ``synthguard.evaluate``, ``synthguard.compare``, the CLI (``python -m synthguard
evaluate ... --json``), the release builders of ``synthguard.calibration`` and the drop-in facades
``synthguard.compat.anonymeter``, ``synthguard.compat.sdmetrics`` and ``synthguard.Evaluator``
(PETsARD). Every input is built here from ``../shared/data`` (env ``SYNTHGUARD_SHARED_DATA``) with
fixed seeds and deterministic subsamples; nothing is imported from ``tests/``.

Runs (one JSON file each, ``<name>.json``):

* ``calib_*``: calibration-suite releases of acs12 (1200 rows), anes96 (all 944) and nhefs (900)
  split 40/30/30 with seed 0: ``fresh``, ``exact@0.05``, ``near@0.1`` (of the release),
  ``rare@0.05``, ``smote``; default metrics and the ``privacy`` preset, with the control.
* ``entity_person``: a person panel of anes96 (2-4 visits), split by person, 5 % of the training
  persons copied; ``evaluate(entity_key=, sequence_key=)``.
* ``compare_acs12``: ``synthguard.compare`` of the fresh and exact-copy releases.
* ``cli_anes96_near``: the CLI on CSV files (``--seed 0 --json``; run in a temporary folder with
  relative file names, so the report's input paths do not vary) and its exit code.
* ``anonymeter_*``: singling out (univariate, multivariate), linkability, inference on the oracle
  inputs of ``tests/oracles/oracle_inputs.py`` (acs12, anes96; the construction is repeated here).
* ``sdmetrics_*``: the CAP trio, DisclosureProtection(+Estimate), DCRBaselineProtection,
  DCROverfittingProtection, NewRowSynthesis, QualityReport and DiagnosticReport on the same inputs.
* ``petsard_*``: ``Evaluator("anonymeter-singlingout")`` and the SDMetrics quality report.

Normalisation (the only change made to a JSON before it is written): at any depth, the value of a
key named ``seconds``, ``elapsed``, any key starting with ``elapsed`` or ending in ``_seconds``,
``timestamp``, ``created``, ``created_at``, ``started_at``, ``finished_at``, ``date``, ``version``,
``synthguard_version``, ``commit``, ``python``, ``platform`` or ``host`` is replaced by the string
``"<normalised>"`` (when the key is present; its presence is kept). Everything else, numbers,
order of lists, warnings and notes, is compared as written. Facade results (NamedTuples, frames)
are turned into plain JSON by :func:`plain` (frames: ``to_dict(orient="split")``); all files are
``json.dumps(..., sort_keys=True, indent=1, allow_nan=True)``.

Usage::

    python benchmarks/json_identity.py --out DIR                 # with the importable synthguard
    python benchmarks/json_identity.py --rev REV --out DIR       # REV's src/ (temporary worktree)
    python benchmarks/json_identity.py --compare DIR_A DIR_B     # exit 1 on any difference
    python benchmarks/json_identity.py --before REV [--after REV]   # after: the working tree
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("SYNTHGUARD_SHARED_DATA") or REPO.parent / "shared" / "data")
SEED = 0
SPLIT = (0.4, 0.3, 0.3)
ROWS = {"acs12": 1200, "anes96": None, "nhefs": 900}
META = {
    "acs12": {"quasi_identifiers": ["age", "gender", "race", "edu", "married"],
              "sensitive": ["employment", "disability"]},
    "anes96": {"quasi_identifiers": ["age", "educ", "income"], "sensitive": ["vote", "PID"]},
    "nhefs": {"quasi_identifiers": ["sex", "age", "race", "education", "marital"],
              "sensitive": ["hbp", "diabetes"]},
}
NORMALISED = "<normalised>"
_EXACT_KEYS = {"seconds", "elapsed", "timestamp", "created", "created_at", "started_at",
               "finished_at", "date", "version", "synthguard_version", "commit", "python",
               "platform", "host"}


# ------------------------------------------------------------------------------- JSON helpers
def _wall_clock(key: str) -> bool:
    return key in _EXACT_KEYS or key.startswith("elapsed") or key.endswith("_seconds")


def normalise(obj: Any) -> Any:
    """``obj`` with the wall-clock and version fields (module docstring) replaced."""
    if isinstance(obj, dict):
        return {k: (NORMALISED if _wall_clock(str(k)) else normalise(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [normalise(v) for v in obj]
    return obj


def plain(obj: Any) -> Any:
    """Facade answers (NamedTuples, dataclasses with ``to_dict``, frames, numpy) as plain JSON."""
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, pd.DataFrame):
        return plain(obj.to_dict(orient="split"))
    if isinstance(obj, pd.Series):
        return plain(obj.to_dict())
    if hasattr(obj, "to_dict") and not isinstance(obj, dict):
        return plain(obj.to_dict())
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return plain(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return float(obj)
    if obj is None or isinstance(obj, (int, str)):
        return obj
    if isinstance(obj, pd.Timestamp):
        return obj.isoformat()
    if obj is pd.NaT or obj is pd.NA:
        return None
    return repr(obj)


def dump(obj: Any) -> str:
    return json.dumps(normalise(plain(obj)), sort_keys=True, indent=1, allow_nan=True) + "\n"


# ------------------------------------------------------------------------------------- inputs
def load(name: str) -> pd.DataFrame:
    df = pd.read_csv(DATA / f"{name}.csv")
    n = ROWS.get(name)
    if n is not None and n < len(df):  # a seeded random subsample, in file order
        df = df.iloc[np.sort(np.random.default_rng(SEED).choice(len(df), n, replace=False))]
    return df.reset_index(drop=True)


def parts_of(name: str) -> dict[str, pd.DataFrame]:
    from synthguard.calibration import calibration_split

    return calibration_split(load(name), SEED, SPLIT)


def release(name: str, kind: str) -> pd.DataFrame:
    from synthguard.calibration import build_release

    parts = parts_of(name)
    kind_, _, size = kind.partition("@")
    share = float(size) if size else None
    extra = {"of": "release"} if kind_ == "near" else {}
    leak = build_release(kind_, parts, SEED, share=share,
                         quasi_identifiers=META[name]["quasi_identifiers"], **extra)
    return leak.release


def oracle_case(name: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(original, synthetic, control)`` as ``tests/compat/oracle_inputs.make_case`` builds them."""
    csv, n_ori, n_ctl, leak, seed = {"acs12": ("acs12.csv", 1000, 1000, 0.3, 0),
                                     "anes96": ("anes96.csv", 472, 472, 0.3, 1)}[name]
    df = pd.read_csv(DATA / csv)
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(df))
    ori = df.iloc[idx[:n_ori]].reset_index(drop=True)
    ctl = df.iloc[idx[n_ori:n_ori + n_ctl]].reset_index(drop=True)
    n_leak = int(round(leak * n_ori))
    shuffled = pd.DataFrame({c: rng.permutation(ori[c].to_numpy()) for c in ori.columns})
    copies = ori.iloc[rng.choice(n_ori, n_leak, replace=False)].reset_index(drop=True).copy()
    num = [c for c in copies.columns
           if pd.api.types.is_float_dtype(copies[c]) and copies[c].nunique() > 20]
    if num:
        m = rng.random(n_leak) < 0.5
        copies.loc[m, num[0]] = copies.loc[m, num[0]] * 1.01
    syn = pd.concat([shuffled.iloc[: n_ori - n_leak], copies], ignore_index=True)
    syn = syn.iloc[rng.permutation(len(syn))].reset_index(drop=True)
    return ori, syn, ctl


def sdtypes(frame: pd.DataFrame) -> dict[str, Any]:
    return {"columns": {c: {"sdtype": "numerical" if pd.api.types.is_numeric_dtype(frame[c])
                            and frame[c].nunique() > 10 else "categorical"}
                        for c in frame.columns}}


# --------------------------------------------------------------------------------------- runs
def run_evaluate(name: str, kind: str, preset: str | None) -> Any:
    import synthguard

    parts = parts_of(name)
    rep = synthguard.evaluate(parts["original"], release(name, kind), control=parts["control"],
                              metadata=META[name], seed=SEED, preset=preset)
    return rep.to_dict()


def run_entity() -> Any:
    import synthguard
    from synthguard.calibration import person_copies, person_panel

    panel = person_panel(load("anes96"), seed=SEED)
    ids = np.asarray(sorted(panel["person_id"].unique()), dtype=object)
    order = np.random.default_rng(SEED).permutation(len(ids))
    cut = (len(ids) * 4) // 10, (len(ids) * 7) // 10
    part = {k: panel[panel["person_id"].isin(ids[o])].reset_index(drop=True)
            for k, o in (("original", order[:cut[0]]), ("control", order[cut[0]:cut[1]]),
                         ("fresh", order[cut[1]:]))}
    leak = person_copies(part["fresh"], part["original"], 0.05, SEED)
    rep = synthguard.evaluate(part["original"], leak.release, control=part["control"],
                              metadata={"quasi_identifiers": META["anes96"]["quasi_identifiers"]},
                              seed=SEED, entity_key="person_id", sequence_key="visit")
    return rep.to_dict()


def run_compare() -> Any:
    import synthguard

    parts = parts_of("acs12")
    cmp = synthguard.compare(parts["original"], {"fresh": release("acs12", "fresh"),
                                                 "exact": release("acs12", "exact@0.05")},
                             control=parts["control"], metadata=META["acs12"], seed=SEED,
                             metrics=["exact_matches", "near_copies", "dcr", "nndr", "ims"])
    return cmp.to_dict()


def run_cli() -> Any:
    parts = parts_of("anes96")
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        parts["original"].to_csv(t / "original.csv", index=False)
        parts["control"].to_csv(t / "control.csv", index=False)
        release("anes96", "near@0.1").to_csv(t / "synthetic.csv", index=False)
        (t / "meta.json").write_text(json.dumps(META["anes96"]))
        # relative paths from the temporary folder: the report names its input files
        cmd = [sys.executable, "-m", "synthguard", "evaluate", "-o", "original.csv",
               "-s", "synthetic.csv", "-c", "control.csv", "-m", "meta.json",
               "--seed", str(SEED), "--json", "out.json"]
        import synthguard  # the CLI must run the same package as the library runs

        env = {**os.environ, "PYTHONPATH": str(Path(synthguard.__file__).resolve().parents[1])}
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=t, env=env)
        if proc.returncode not in (0, 3):
            raise RuntimeError(f"CLI failed ({proc.returncode}): {proc.stderr[-2000:]}")
        out = json.loads((t / "out.json").read_text())
    return {"exit_code": proc.returncode, "report": out}


def run_anonymeter(case: str) -> Any:
    from synthguard.compat.anonymeter import (
        InferenceEvaluator,
        LinkabilityEvaluator,
        SinglingOutEvaluator,
    )

    ori, syn, ctl = oracle_case(case)
    cols = list(ori.columns)
    out: dict[str, Any] = {}
    for mode in ("univariate", "multivariate"):
        ev = SinglingOutEvaluator(ori, syn, n_attacks=200, control=ctl, seed=SEED).evaluate(mode)
        res = ev.results()
        out[f"singling_out_{mode}"] = {"risk": ev.risk(), "results": _results(res),
                                       "queries": ev.queries()}
    half = len(cols) // 2
    ev = LinkabilityEvaluator(ori, syn, (cols[:half], cols[half:]), n_attacks=300, control=ctl,
                              n_neighbors=5, seed=SEED).evaluate()
    out["linkability"] = {f"k{k}": {"risk": ev.risk(n_neighbors=k),
                                    "results": _results(ev.results(n_neighbors=k))}
                          for k in (1, 5)}
    secret = META[case]["sensitive"][0]
    ev = InferenceEvaluator(ori, syn, [c for c in cols if c != secret][:5], secret,
                            n_attacks=300, control=ctl, seed=SEED).evaluate()
    out["inference"] = {"risk": ev.risk(), "results": _results(ev.results())}
    return out


def _results(res: Any) -> dict[str, Any]:
    return {k: getattr(res, k) for k in ("n_attacks_ori", "n_attacks_baseline", "n_attacks_control",
                                         "n_success", "n_baseline", "n_control", "attack_rate",
                                         "baseline_rate", "control_rate")}


def run_sdmetrics(case: str) -> Any:
    from synthguard.compat.sdmetrics import single_table as st

    ori, syn, ctl = oracle_case(case)
    meta = sdtypes(ori)
    qi, sens = META[case]["quasi_identifiers"], META[case]["sensitive"][:1]
    out: dict[str, Any] = {}
    for cls in (st.CategoricalCAP, st.CategoricalZeroCAP, st.CategoricalGeneralizedCAP):
        out[cls.__name__] = cls.compute_breakdown(ori, syn, key_fields=qi, sensitive_fields=sens)
    cont = [c for c in qi if meta["columns"][c]["sdtype"] == "numerical"]
    out["DisclosureProtection"] = st.DisclosureProtection.compute_breakdown(
        ori, syn, known_column_names=qi, sensitive_column_names=sens, continuous_column_names=cont)
    out["DisclosureProtectionEstimate"] = st.DisclosureProtectionEstimate.compute_breakdown(
        ori, syn, known_column_names=qi, sensitive_column_names=sens, continuous_column_names=cont,
        num_rows_subsample=200, num_iterations=3)
    out["DCRBaselineProtection"] = st.DCRBaselineProtection.compute_breakdown(
        ori, syn, meta, num_rows_subsample=300, num_iterations=2)
    out["DCROverfittingProtection"] = st.DCROverfittingProtection.compute_breakdown(
        ori, syn, ctl, meta, num_rows_subsample=300, num_iterations=2)
    out["NewRowSynthesis"] = st.NewRowSynthesis.compute_breakdown(ori, syn, meta)
    return out


def run_sdmetrics_reports(case: str) -> Any:
    from synthguard.compat.sdmetrics.reports.single_table import DiagnosticReport, QualityReport

    ori, syn, _ = oracle_case(case)
    meta = sdtypes(ori)
    out: dict[str, Any] = {}
    for cls in (QualityReport, DiagnosticReport):
        rep = cls()
        rep.generate(ori, syn, meta, verbose=False)
        props = rep.get_properties()
        out[cls.__name__] = {"score": rep.get_score(), "properties": props,
                             "details": {p: rep.get_details(p) for p in props["Property"]}}
    return out


def run_petsard(case: str) -> Any:
    import synthguard

    ori, syn, ctl = oracle_case(case)
    out: dict[str, Any] = {}
    for method, kw in (("anonymeter-singlingout", {"n_attacks": 200}),
                       ("sdmetrics-single_table-qualityreport", {})):
        ev = synthguard.Evaluator(method, **kw)
        ev.create()
        out[method] = ev.eval({"ori": ori, "syn": syn, "control": ctl})
    return out


def runs() -> dict[str, Callable[[], Any]]:
    """The fixed set: name -> a function returning the run's JSON-able answer."""
    out: dict[str, Callable[[], Any]] = {}
    calib = [("acs12", "fresh", None), ("acs12", "exact@0.05", None), ("acs12", "near@0.1", None),
             ("acs12", "fresh", "privacy"), ("anes96", "fresh", None),
             ("anes96", "rare@0.05", None), ("anes96", "exact@0.05", "privacy"),
             ("nhefs", "near@0.1", None), ("nhefs", "smote", None)]
    for name, kind, preset in calib:
        run = f"calib_{name}_{kind.replace('@', '_')}_{preset or 'default'}"
        out[run] = lambda n=name, k=kind, p=preset: run_evaluate(n, k, p)
    out["entity_person"] = run_entity
    out["compare_acs12"] = run_compare
    out["cli_anes96_near"] = run_cli
    for case in ("acs12", "anes96"):
        out[f"anonymeter_{case}"] = lambda c=case: run_anonymeter(c)
        out[f"sdmetrics_{case}"] = lambda c=case: run_sdmetrics(c)
    out["sdmetrics_reports_anes96"] = lambda: run_sdmetrics_reports("anes96")
    out["petsard_anes96"] = lambda: run_petsard("anes96")
    return out


def write_all(out_dir: Path, only: list[str] | None = None) -> None:
    import synthguard

    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"synthguard from {Path(synthguard.__file__).parent}", flush=True)
    t0 = time.perf_counter()
    for name, fn in runs().items():
        if only and name not in only:
            continue
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                text = dump(fn())
            except Exception as exc:  # an error is a result too: it must stay the same
                text = dump({"error": type(exc).__name__, "message": str(exc)})
        (out_dir / f"{name}.json").write_text(text)
        print(f"  {name}: {time.perf_counter() - t:.1f} s", flush=True)
    print(f"wrote {out_dir} in {time.perf_counter() - t0:.0f} s", flush=True)


# ------------------------------------------------------------------------------ revisions
def run_in(src: Path, out_dir: Path) -> None:
    """Write the set with the package of ``src`` (its ``src/`` on PYTHONPATH) in a subprocess."""
    env = {**os.environ, "PYTHONPATH": str(src / "src"), "SYNTHGUARD_SHARED_DATA": str(DATA)}
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--out", str(out_dir)],
                   env=env, check=True)


def run_rev(rev: str, out_dir: Path) -> None:
    """Write the set with revision ``rev`` of the package (a temporary git worktree)."""
    tmp = Path(tempfile.mkdtemp(prefix="json-identity-"))
    wt = tmp / "tree"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(wt), rev],
                   check=True)
    try:
        run_in(wt, out_dir)
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(wt)],
                       check=False)
        shutil.rmtree(tmp, ignore_errors=True)


def first_difference(a: Any, b: Any, path: str = "$") -> str | None:
    """JSON path of the first place where ``a`` and ``b`` differ (``None``: equal)."""
    if type(a) is not type(b):
        return f"{path} ({type(a).__name__} vs {type(b).__name__})"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k} (only in {'B' if k not in a else 'A'})"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return f"{path} (length {len(a)} vs {len(b)})" if len(a) != len(b) else None
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return None
    return None if a == b else f"{path} ({a!r} vs {b!r})"


def compare_dirs(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.glob("*.json")} | {p.name for p in b.glob("*.json")})
    same = 0
    for name in names:
        pa, pb = a / name, b / name
        if not pa.exists() or not pb.exists():
            print(f"{name[:-5]}: different (missing in {'A' if not pa.exists() else 'B'})")
            continue
        if pa.read_bytes() == pb.read_bytes():
            same += 1
            print(f"{name[:-5]}: identical")
            continue
        where = first_difference(json.loads(pa.read_text()), json.loads(pb.read_text()))
        print(f"{name[:-5]}: different at {where or '(same JSON, different bytes)'}")
    print(f"{len(names)} runs, {same} identical")
    return 0 if names and same == len(names) else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the set here")
    ap.add_argument("--rev", help="with --out: use this git revision's src/")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("DIR_A", "DIR_B"))
    ap.add_argument("--before", help="git revision of the 'before' run")
    ap.add_argument("--after", help="git revision of the 'after' run (default: the working tree)")
    ap.add_argument("--only", nargs="*", help="run only these names (debugging)")
    args = ap.parse_args(argv)
    if args.compare:
        return compare_dirs(*args.compare)
    if args.before:
        with tempfile.TemporaryDirectory(prefix="json-identity-") as tmp:
            a, b = Path(tmp) / "before", Path(tmp) / "after"
            run_rev(args.before, a)
            if args.after:
                run_rev(args.after, b)
            else:
                run_in(REPO, b)
            return compare_dirs(a, b)
    if args.out is None:
        ap.error("give --out DIR, --compare DIR_A DIR_B or --before REV")
    if args.rev:
        run_rev(args.rev, args.out)
    else:
        write_all(args.out, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
