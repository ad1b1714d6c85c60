"""Side-by-side benchmark: anonymeter 1.1.0 against synthguard's GDPR trio.

Runs, for each data size, the four attacks (singling out univariate, singling out multivariate,
linkability, inference with every column as the secret) with anonymeter and with synthguard on the
same generated mixed-type tables (original, synthetic, control; 15 columns: 7 numeric, 6 categorical,
2 boolean). Each (library, attack, size) runs in a fresh subprocess, so the peak memory (ru_maxrss)
is that run's own; JIT compilation is warmed up on a tiny table first and not counted.
anonymeter is stopped after ``--cap`` seconds per attack (default 600) and reported as ``>cap``; for
inference the number of secrets it finished by then is reported.

Usage::

    python benchmarks/bench_anonymeter.py                     # 40k and 400k rows, both libraries
    python benchmarks/bench_anonymeter.py --sizes 40000 --cap 600 --out /tmp/bench.json
    python benchmarks/bench_anonymeter.py --only synthguard --reuse /tmp/bench.json

``--roles`` declares roles (quasi-identifiers ``age, sex, race, edu, marital``; sensitive ``income,
smoker``), as a data owner would: linkability links the quasi-identifiers to the other columns and
inference attacks the two sensitive columns from the quasi-identifiers, on both sides (synthguard
through the metadata, anonymeter through the same ``aux_cols`` and secrets). Without it every column
is a secret in turn and linkability splits the columns in halves. The verdict's evidence (every
training and every control record, issue 29) is part of synthguard's time.

``--reuse`` reads earlier results from a JSON file written by ``--out`` and only runs what is missing
(so a long anonymeter run can be made once). Not run by CI.

Whole process (issue 15), at PETsARD's defaults: ``--whole-process`` times, side by side in one run,
a fresh ``python`` process per library that reads the three CSV files and runs the trio PETsARD runs
by default (2,000 attacks each: univariate singling out, linkability with ``n_neighbors=10`` on the
two halves of the columns, inference on one secret, ``edu``, from all other columns): interpreter
start, imports, loading, every attack, exit. synthguard runs twice, as its users would: the same
script with one import changed (``synthguard.compat.anonymeter``, the drop-in API: the same work as
anonymeter, the three headlines), and ``python -m synthguard evaluate --config trio.json`` (the
headlines and the verdict: its evidence over every training and control record, the joint test,
the re-tested advice). Nothing is warmed up (the numba kernels come from their on-disk cache, as
after any first run). Prints each run and the ratios::

    python benchmarks/bench_anonymeter.py --whole-process --sizes 40000 --repeat 2

``--src before/src --src after/src`` runs each synthguard source tree in turn beside the same
anonymeter run; ``--synthguard-python`` runs synthguard under another interpreter (anonymeter
1.1.0 needs numpy < 1.27: run the script with the venv that holds it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ATTACKS = ("singling_out_univariate", "singling_out_multivariate", "linkability", "inference")
N_ATTACKS = 2000
N_COLS = 3
N_NEIGHBORS = 10
SEED = 0
ROLES = {"quasi_identifiers": ["age", "sex", "race", "edu", "marital"], "sensitive": ["income", "smoker"]}


# --------------------------------------------------------------------------------------------- data
def _population(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Correlated mixed-type rows: 7 numeric, 6 categorical, 2 boolean columns."""
    z = rng.normal(size=(n, 3))
    age = np.clip(18 + 45 * (0.5 + 0.2 * z[:, 0]) + rng.normal(0, 6, n), 17, 90).round()
    income = np.exp(10 + 0.4 * z[:, 1] + 0.1 * z[:, 0] + rng.normal(0, 0.3, n)).round(-1)
    hours = np.clip(40 + 8 * z[:, 2] + rng.normal(0, 5, n), 1, 99).round()
    weight = rng.normal(190_000, 100_000, n).round()  # near-unique, like fnlwgt
    score = (0.3 * z[:, 0] + rng.normal(0, 1, n)).round(3)
    children = rng.poisson(np.exp(0.2 + 0.3 * z[:, 0]).clip(0, 5))
    gain = np.where(rng.random(n) < 0.08, rng.exponential(5000, n).round(), 0.0)
    edu_levels = np.array(["hs", "college", "bachelor", "master", "doctor", "none", "assoc"])
    edu = edu_levels[np.clip((z[:, 1] * 1.5 + 3 + rng.normal(0, 1, n)).astype(int), 0, 6)]
    occ = rng.choice([f"occ{i:02d}" for i in range(14)], n)
    region = rng.choice([f"r{i}" for i in range(40)], n, p=np.r_[np.full(10, 0.06), np.full(30, 0.4 / 30)])
    marital = rng.choice(["married", "single", "divorced", "widowed"], n, p=[0.5, 0.3, 0.15, 0.05])
    race = rng.choice(["a", "b", "c", "d", "e"], n, p=[0.7, 0.12, 0.1, 0.05, 0.03])
    sex = np.where(z[:, 2] + rng.normal(0, 1, n) > 0, "F", "M")
    owner = z[:, 1] + rng.normal(0, 1, n) > 0.2
    smoker = rng.random(n) < 0.2
    return pd.DataFrame({"age": age, "income": income, "hours": hours, "weight": weight, "score": score,
                         "children": children.astype(float), "gain": gain, "edu": edu, "occ": occ,
                         "region": region, "marital": marital, "race": race, "sex": sex, "owner": owner,
                         "smoker": smoker})


def make_data(n: int, seed: int = SEED) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``original`` (n rows), ``synthetic`` (n rows; 20 % are lightly perturbed copies of original
    rows, the rest fresh draws) and ``control`` (n // 4 fresh rows)."""
    rng = np.random.default_rng(seed)
    ori = _population(n, rng)
    ctl = _population(n // 4, rng)
    fresh = _population(n, rng)
    leak = rng.random(n) < 0.2
    src = rng.integers(0, n, n)
    syn = fresh.copy()
    copied = ori.iloc[src[leak]].reset_index(drop=True)
    copied["hours"] = (copied["hours"] + rng.integers(-1, 2, len(copied))).clip(1, 99)
    syn.loc[leak, :] = copied.to_numpy()
    syn = syn.astype(ori.dtypes.to_dict())
    return ori, syn, ctl


# --------------------------------------------------------------------------------------------- workers
def _halves(columns: list[str]) -> tuple[list[str], list[str]]:
    h = (len(columns) + 1) // 2
    return columns[:h], columns[h:]


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _role_split(cols: list[str]) -> tuple[list[str], list[str]]:
    """Linkability's halves with declared roles: the quasi-identifiers against the other columns."""
    qis = [c for c in cols if c in ROLES["quasi_identifiers"]]
    return qis, [c for c in cols if c not in qis]


def worker_anonymeter(attack: str, n: int, progress: Path, roles: bool = False) -> dict:
    import anonymeter.evaluators as ev  # noqa: F401  (import first: avoids anonymeter's circular import)
    from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator

    ori, syn, ctl = make_data(n)
    cols = list(ori.columns)
    # warm-up (numba JIT of the kNN kernel), not timed
    small = make_data(500, 1)
    LinkabilityEvaluator(small[0], small[1], aux_cols=_halves(cols), n_attacks=20, control=small[2],
                         n_neighbors=1).evaluate()
    t0, c0 = time.perf_counter(), time.process_time()
    out: dict = {"risk": None}
    if attack.startswith("singling_out"):
        mode = attack.rsplit("_", 1)[1]
        e = SinglingOutEvaluator(ori, syn, n_attacks=N_ATTACKS, n_cols=N_COLS, control=ctl, seed=SEED)
        e.evaluate(mode=mode)
        out["risk"] = e.risk().value
    elif attack == "linkability":
        e = LinkabilityEvaluator(ori, syn, aux_cols=_role_split(cols) if roles else _halves(cols),
                                 n_attacks=N_ATTACKS, control=ctl, n_neighbors=N_NEIGHBORS)
        e.evaluate()
        out["risk"] = e.risk().value
    else:
        risks = {}
        for secret in ROLES["sensitive"] if roles else cols:
            aux = list(_role_split(cols)[0]) if roles else [c for c in cols if c != secret]
            e = InferenceEvaluator(ori, syn, aux_cols=aux, secret=secret, n_attacks=N_ATTACKS,
                                   control=ctl, regression=False)
            e.evaluate()
            risks[secret] = e.risk().value
            progress.write_text(json.dumps({"done": len(risks), "seconds": time.perf_counter() - t0}))
        out["risk"] = max(risks.values())
        out["secrets_done"] = len(risks)
    out.update(seconds=time.perf_counter() - t0, cpu=time.process_time() - c0, peak_mb=_peak_mb())
    return out


def worker_synthguard(attack: str, n: int, progress: Path, roles: bool = False) -> dict:
    from synthguard.registry import Context, get_metric
    from synthguard.run.executor import run_metric

    setup: dict = {}

    def run(ori, syn, ctl, name, params):
        t, c = time.perf_counter(), time.process_time()
        ctx = Context.from_frames(ori, syn, ctl, ROLES if roles else None, seed=SEED)  # once per run
        setup.update(seconds=time.perf_counter() - t, cpu=time.process_time() - c)
        spec = get_metric(name)
        return run_metric(spec, ctx.for_metric(spec), spec.resolve_params(params))

    ori, syn, ctl = make_data(n)
    cols = list(ori.columns)
    params = {"singling_out_univariate": {"n_attacks": N_ATTACKS},
              "singling_out_multivariate": {"n_attacks": N_ATTACKS, "n_cols": N_COLS},
              "linkability": {"n_attacks": N_ATTACKS, "n_neighbors": N_NEIGHBORS,
                              **({} if roles else {"aux_cols": [list(h) for h in _halves(cols)]})},
              "inference": {"n_attacks": N_ATTACKS, "regression": "false"}}[attack]
    small = make_data(500, 1)
    warm = dict(params, n_attacks=20)
    run(*small, attack, warm)  # numba JIT warm-up, not timed
    t0, c0 = time.perf_counter(), time.process_time()
    res = run(ori, syn, ctl, attack, params)
    out = {"risk": res.value, "seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
           "peak_mb": _peak_mb(), "setup_seconds": setup["seconds"], "setup_cpu": setup["cpu"]}
    if attack == "inference":
        out["secrets_done"] = len(res.details["per_secret"])
    return out


# ------------------------------------------------------------------------------------ whole process
SECRET = "edu"

ANONYMETER_TRIO = """
import sys, json
import pandas as pd
import anonymeter.evaluators  # noqa: F401
from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator
d = sys.argv[1]
ori, syn, ctl = (pd.read_csv(f"{d}/{r}.csv") for r in ("original", "synthetic", "control"))
cols = list(ori.columns)
h = (len(cols) + 1) // 2
out = {}
e = SinglingOutEvaluator(ori, syn, n_attacks=2000, control=ctl)
e.evaluate(mode="univariate")
out["singling_out_univariate"] = e.risk().value
e = LinkabilityEvaluator(ori, syn, aux_cols=(cols[:h], cols[h:]), n_attacks=2000, control=ctl, n_neighbors=10)
e.evaluate()
out["linkability"] = e.risk().value
secret = sys.argv[2]
e = InferenceEvaluator(ori, syn, aux_cols=[c for c in cols if c != secret], secret=secret, n_attacks=2000,
                       control=ctl, regression=False)
e.evaluate()
out["inference"] = e.risk().value
print(json.dumps(out))
"""

#: the same script through synthguard's drop-in anonymeter API (one import changed): the same work
#: as anonymeter's (the three headlines), where ``synthguard evaluate`` also states the verdict,
#: its evidence over every record and the re-tested advice
FACADE_TRIO = ANONYMETER_TRIO.replace("import anonymeter.evaluators  # noqa: F401\n", "").replace(
    "from anonymeter.evaluators import", "from synthguard.compat.anonymeter import")


def _trio_files(n: int) -> Path:
    d = Path(f"/tmp/bench_anonymeter_trio_{n}")
    if not (d / "trio.json").exists():
        d.mkdir(parents=True, exist_ok=True)
        ori, syn, ctl = make_data(n)
        for name, df in (("original", ori), ("synthetic", syn), ("control", ctl)):
            df.to_csv(d / f"{name}.csv", index=False)
        cols = list(ori.columns)
        h = (len(cols) + 1) // 2
        cfg = {"seed": SEED, "metrics": {
            "singling_out_univariate": {"n_attacks": N_ATTACKS},
            "linkability": {"n_attacks": N_ATTACKS, "n_neighbors": 10, "aux_cols": [cols[:h], cols[h:]]},
            "inference": {"n_attacks": N_ATTACKS, "secret": SECRET, "regression": "false"}}}
        (d / "trio.json").write_text(json.dumps(cfg))
    return d


def _timed(cmd: list[str], env: dict | None = None) -> dict:
    """Wall, CPU and peak RSS of this one child (``os.wait4``: its own rusage, not the maximum over
    every child so far)."""
    t0 = time.perf_counter()
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as proc:
        out, err = proc.stdout.read(), proc.stderr.read()
        _pid, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])}... failed:\n{err[-2000:]}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "peak_mb": ru.ru_maxrss / 1024, "stdout": out}


def whole_process(n: int, repeat: int, srcs: list[str] | None = None, python: str | None = None) -> None:
    """anonymeter and synthguard (one run per source tree in ``srcs``, default the imported one),
    side by side, ``repeat`` times; synthguard runs under ``python`` (default this interpreter)."""
    d = _trio_files(n)
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else "?"
    py = python or sys.executable
    print(f"whole process, PETsARD defaults, {n} rows (control {n // 4}); load average {load}; "
          f"anonymeter under {sys.executable}, synthguard under {py}", flush=True)
    trees = srcs or [None]
    runs: dict[str, list[dict]] = {"anonymeter": [], **{f"synthguard {t or ''}".strip(): [] for t in trees}}
    for _ in range(repeat):
        a = _timed([sys.executable, "-c", ANONYMETER_TRIO, str(d), SECRET])
        a["risks"] = json.loads(a["stdout"].strip().splitlines()[-1])
        runs["anonymeter"].append(a)
        print(f"  anonymeter: wall {a['wall']:.2f} s, CPU {a['cpu']:.2f} s, peak {a['peak_mb']:.0f} MB; "
              f"risks {a['risks']}", flush=True)
        for tree in trees:
            env = None if tree is None else dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
            f = _timed([py, "-c", FACADE_TRIO, str(d), SECRET], env=env)
            f["risks"] = json.loads(f["stdout"].strip().splitlines()[-1])
            name = f"synthguard drop-in {tree or ''}".strip()
            runs.setdefault(name, []).append(f)
            print(f"  {name}: wall {f['wall']:.2f} s, CPU {f['cpu']:.2f} s, peak {f['peak_mb']:.0f} MB; "
                  f"ratio {a['wall'] / f['wall']:.1f}x wall, {a['cpu'] / f['cpu']:.1f}x CPU; "
                  f"risks {f['risks']}", flush=True)
            s = _timed([py, "-m", "synthguard", "evaluate", "-o", str(d / "original.csv"),
                        "-s", str(d / "synthetic.csv"), "-c", str(d / "control.csv"),
                        "--config", str(d / "trio.json"), "--json", str(d / "report.json"), "--no-progress"],
                       env=env)
            rep = json.loads((d / "report.json").read_text())["metrics"]
            s["risks"] = {k: (v.get("result") or {}).get("value") for k, v in rep.items()}
            s["metric_seconds"] = sum(v.get("seconds", 0) for v in rep.values())
            name = f"synthguard {tree or ''}".strip()
            runs[name].append(s)
            print(f"  {name}: wall {s['wall']:.2f} s (metrics {s['metric_seconds']:.2f} s), CPU {s['cpu']:.2f} s, "
                  f"peak {s['peak_mb']:.0f} MB; ratio {a['wall'] / s['wall']:.1f}x wall, "
                  f"{a['cpu'] / s['cpu']:.1f}x CPU; risks {s['risks']}", flush=True)
    best_a = min(r["wall"] for r in runs["anonymeter"])
    cpu_a = min(r["cpu"] for r in runs["anonymeter"])
    for name, rs in runs.items():
        if name == "anonymeter":
            continue
        best_s, cpu_s = min(r["wall"] for r in rs), min(r["cpu"] for r in rs)
        print(f"best of {repeat}: anonymeter {best_a:.2f} s (CPU {cpu_a:.2f}), {name} {best_s:.2f} s "
              f"(CPU {cpu_s:.2f}): {best_a / best_s:.1f}x wall, {cpu_a / cpu_s:.1f}x CPU", flush=True)


# --------------------------------------------------------------------------------------------- driver
def run_one(lib: str, attack: str, n: int, cap: float | None, roles: bool = False) -> dict:
    progress = Path(f"/tmp/bench_anonymeter_{os.getpid()}_{lib}_{attack}_{n}.json")
    progress.unlink(missing_ok=True)
    cmd = [sys.executable, __file__, "--worker", lib, "--attack", attack, "--rows", str(n),
           "--progress", str(progress)] + (["--roles"] if roles else [])
    t0 = time.perf_counter()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=cap)
    except subprocess.TimeoutExpired:
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the killed child is reaped: its CPU counts
        res = {"seconds": None, "capped": cap, "wall_incl_setup": time.perf_counter() - t0,
               "cpu_before_cap": (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)}
        if progress.exists():
            res["secrets_done"] = json.loads(progress.read_text())["done"]
        return res
    if proc.returncode != 0:
        return {"seconds": None, "error": proc.stderr.strip().splitlines()[-1:] or ["?"]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fmt_s(r: dict) -> str:
    if r.get("seconds") is not None:
        return f"{r['seconds']:.2f}"
    if r.get("capped"):
        return f">{r['capped']:.0f}"
    return "error"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="40000,400000")
    ap.add_argument("--cap", type=float, default=600.0, help="seconds per anonymeter attack")
    ap.add_argument("--only", choices=("anonymeter", "synthguard"), default=None)
    ap.add_argument("--attacks", default=",".join(ATTACKS))
    ap.add_argument("--out", default=None, help="write all results as JSON here")
    ap.add_argument("--reuse", default=None, help="JSON from an earlier --out: skip what it holds")
    ap.add_argument("--roles", action="store_true", help="declare roles (see the docstring)")
    ap.add_argument("--worker", default=None)
    ap.add_argument("--attack", default=None)
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--progress", default="/tmp/bench_anonymeter_progress.json")
    ap.add_argument("--whole-process", action="store_true",
                    help="time the PETsARD-default trio as two whole processes (see the docstring)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of --whole-process")
    ap.add_argument("--src", action="append", default=None,
                    help="--whole-process: a synthguard source tree to run (repeatable: before/after side by side)")
    ap.add_argument("--synthguard-python", default=None,
                    help="--whole-process: the interpreter synthguard runs under (anonymeter runs under this one)")
    args = ap.parse_args()

    if args.whole_process:
        for n in (int(s) for s in args.sizes.split(",")):
            whole_process(n, args.repeat, args.src, args.synthguard_python)
        return

    if args.worker:
        fn = worker_anonymeter if args.worker == "anonymeter" else worker_synthguard
        print(json.dumps(fn(args.attack, args.rows, Path(args.progress), args.roles)))
        return

    results: dict = json.loads(Path(args.reuse).read_text()) if args.reuse else {}
    libs = [args.only] if args.only else ["anonymeter", "synthguard"]
    sizes = [int(s) for s in args.sizes.split(",")]
    attacks = args.attacks.split(",")
    tag = "|roles" if args.roles else ""
    print(f"{'rows':>8} {'attack':<26} {'anonymeter s':>13} {'cpu s':>8} {'MB':>6} {'synthguard s':>13} "
          f"{'cpu s':>7} {'MB':>6} {'ratio':>8} {'cpu ratio':>9}  risks (anonymeter / synthguard)", flush=True)
    for n in sizes:
        for attack in attacks:
            for lib in libs:
                key = f"{lib}|{attack}|{n}{tag}"
                if key not in results:
                    results[key] = run_one(lib, attack, n, args.cap if lib == "anonymeter" else None,
                                           args.roles)
                    if args.out:
                        Path(args.out).write_text(json.dumps(results, indent=1))
            a = results.get(f"anonymeter|{attack}|{n}{tag}", {})
            s = results.get(f"synthguard|{attack}|{n}{tag}", {})
            ratio = ""
            if s.get("seconds"):
                if a.get("seconds") is not None:
                    ratio = f"{a['seconds'] / s['seconds']:.1f}x"
                elif a.get("capped"):
                    ratio = f">{a['capped'] / s['seconds']:.0f}x"
            extra = f" (anonymeter {a['secrets_done']}/{len(ROLES['sensitive']) if args.roles else 15} secrets)" if a.get("capped") and "secrets_done" in a else ""
            ra, rs = a.get("risk"), s.get("risk")
            risks = f"{ra if ra is None else round(ra, 4)} / {rs if rs is None else round(rs, 4)}"
            a_cpu = a.get("cpu", a.get("cpu_before_cap"))
            a_cpu_txt = "-" if a_cpu is None else (f">{a_cpu:.0f}" if a.get("capped") else f"{a_cpu:.1f}")
            s_cpu = s.get("cpu")
            cpu_ratio = ""
            if a_cpu and s_cpu:
                cpu_ratio = (">" if a.get("capped") else "") + f"{a_cpu / s_cpu:.0f}x"
            print(f"{n:>8} {attack:<26} {_fmt_s(a) if a else '-':>13} {a_cpu_txt:>8} "
                  f"{a.get('peak_mb', 0):>6.0f} {_fmt_s(s) if s else '-':>13} "
                  f"{'-' if s_cpu is None else f'{s_cpu:.2f}':>7} {s.get('peak_mb', 0):>6.0f} {ratio:>8} "
                  f"{cpu_ratio:>9}  {risks}{extra}", flush=True)
    if not args.only or args.only == "synthguard":
        for n in sizes:
            tot = [results.get(f"synthguard|{a}|{n}{tag}", {}).get("seconds") for a in ATTACKS]
            if all(t is not None for t in tot):
                print(f"synthguard whole trio at {n} rows: {sum(tot):.1f} s", flush=True)


if __name__ == "__main__":
    main()
