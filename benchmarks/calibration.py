"""Calibration of the risk levels on real data: false alarms on the nulls, no false low on any leak
family, power at 1.5x each run's own stated detection limit, and lows where the data can show them.

Every public person-level table in ``../shared/data`` is split with a seed into original (training),
control and fresh (see :mod:`synthguard.calibration`). Release kinds (``kind[@size]``):

- ``fresh``: the fresh part itself, a perfect generator (the null: every alarm is a false alarm);
- ``mode_seeking``: fresh rows resampled towards common quasi-identifier combinations (a null too);
- ``<family>@s`` for every tabular leak family (``exact``, ``rare``, ``near1``, ``near2``,
  ``noise2``, ``noise5``, ``noise10``, ``linkage``, ``interpolation``): ``s`` of the training
  records leaked into fresh as that family, built by ``synthguard.calibration.family_release`` with
  the row builders the run injects to measure its limits (the ground truth is the leaked records);
- ``<family>@1.5x``: the same at 1.5 times the detection limit of that family the run states on the
  fresh release of the same split, seed and materiality (``verdict.detection_limits[family]``);
- ``person``, ``person@s``, ``person@1.5x``: whole persons of a panel built from anes96 (2-4 rows
  each) copied; ``text``, ``text@s``, ``text@1.5x``: fine-food test reviews plus ``s`` of the
  training reviews with one word changed (``person`` and ``text`` alone are their nulls; they run
  on their own data, once per seed, whatever ``--datasets``);
- generator-like releases (no single family, not in the default set): ``smote``, ``mixture``,
  ``mixture20``, ``kde@h``, ``marginals``, ``copula``.

Splits: ``standard`` 0.4 / 0.3 / 0.3 (every table); ``n800`` 800 training and 800 control records,
the rest fresh (acs12: 800 / 800 / 400, nhefs: 800 / 800 / 29; the tables with that many rows).

It prints (1) per family and size the runs reading low, high, and the share high at 1.5x the stated
limit, (2) the null alarm rate per null kind, (3) per table, split and materiality the share of
fresh runs reading low and the median bound reached (the largest ``verdict.risks[*].bound``), and
(4) per-table detail. Run::

    python benchmarks/calibration.py --json runs.jsonl          # the full table, 6 seeds
    python benchmarks/calibration.py --quick --json quick.jsonl # 2 seeds, 1.5x and 1 % only
    python benchmarks/calibration.py --quick --family-tests     # only the tests that state limits
    python benchmarks/calibration.py --seeds 3 --datasets nhefs --kinds fresh noise5@0.01
    python benchmarks/calibration.py --quick --family-tests --max-records 300  # sampled queries

``--json`` appends every run as one line as it ends and reuses the lines already there (same table,
split, seed, kind, materiality and metrics), so an interrupted run resumes and ``--table-only``
prints the table of a file without running anything.

``--workers N`` runs every release twice, in one process and on a local Dask cluster of ``N``
workers (``evaluate(client=...)``), and prints them side by side: the verdict, the risk levels and
bounds, the detection limits and every test's level and status, ``same`` or ``differs`` with the
fields that differ; it exits 1 on any difference. A test that runs in one process only (skipped on
a cluster by design) is listed as such, not counted as a difference: the release is then run once
more in one process without it, the cluster must equal that run in every field, and what the test
changes in one process (Holm's correction and the joint test count it) is listed by design; so is
a run a cluster refuses (``person``: entity runs run in one process)::

    python benchmarks/calibration.py --workers 2 --datasets nhefs --seeds 1 --family-tests
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import statistics
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path(os.environ.get("SYNTHGUARD_SHARED_DATA")
            or Path(__file__).resolve().parents[2] / "shared" / "data")
DROP = {"hhs_breaches": ["Summary", "Number", "Name_of_Covered_Entity"]}
from synthguard.calibration import FAMILY_KINDS, claim_problems  # noqa: E402
from synthguard.calibration import PUBLIC_TABLE_METADATA as META  # noqa: E402
from synthguard.data.loading import CSV_FLOAT_KW  # noqa: E402

SPLITS: dict[str, tuple[float, float, float] | int] = {
    "standard": (0.4, 0.3, 0.3), "equal": (0.4, 0.4, 0.2), "n800": 800}
#: the tables that hold 800 training and 800 control records with fresh rows to spare
N800 = ("acs12", "nhefs")
FULL_SIZES = ("0.01", "0.05", "1.5x")
QUICK_SIZES = ("0.01", "1.5x")
PANEL_FROM = "anes96"
#: the tests that state their responses to the leak families (the runs' limits are measured with
#: them; the other privacy tests still alarm, their limits are not measured)
FAMILY_TESTS = ("exact_matches", "near_copies", "near_copies_2", "close_neighbours", "qi_linkage",
                "text_exact_matches")
TEXT_SIZES = (800, 800, 400)
ALARMS = ("high", "medium")


def load(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}.csv", **CSV_FLOAT_KW).drop(columns=DROP.get(name, []))


def split_parts(dataset: str, split: str, seed: int) -> dict[str, pd.DataFrame]:
    from synthguard.calibration import calibration_split, sized_split

    how = SPLITS[split]
    if isinstance(how, int):
        return sized_split(load(dataset), seed, how)
    return calibration_split(load(dataset), seed, how)


def _no_leak(release: pd.DataFrame, n: int, kind: str = "null"):
    from synthguard.calibration import LeakedRelease

    return LeakedRelease(release, np.zeros(n, bool), None, kind)


def _share(size: str, stated: float | None, k: int | None = None) -> float | None:
    """The leak size of ``@size``: a share, or 1.5x the stated limit (``None`` when none is stated).
    The limit is ``k`` of ``n`` training records; the leak is ``ceil(1.5 k)`` of them (a share
    rounded back to a count could round 4.5 records down to 4)."""
    if size.endswith("x"):
        if stated is None:
            return None
        factor = float(size[:-1])
        if not k:
            return min(1.0, factor * stated)
        n = int(round(k / stated))
        return min(math.ceil(factor * k - 1e-9), n) / n
    return float(size)


def tabular(dataset: str, kind: str, seed: int, split: str, stated: float | None,
            k: int | None = None):
    """(parts, LeakedRelease or None, evaluate keywords) of a tabular kind (``None``: no release,
    the 1.5x kind of a family whose limit the fresh run did not state)."""
    from synthguard.calibration import build_release, family_release, smote_release

    parts = split_parts(dataset, split, seed)
    name, _, size = kind.partition("@")
    meta = META[dataset]
    if name in FAMILY_KINDS:
        share = _share(size, stated, k)
        if share is None:
            return parts, None, {"metadata": meta}
        leak = family_release(name, parts, share, seed, metadata=meta, clip=True)
        return parts, leak, {"metadata": meta}
    share = float(size) if size else None
    qi = meta["quasi_identifiers"]
    if name == "smote" and share is not None:
        leak = smote_release(parts["original"], seed=seed, base=parts["fresh"], share=share)
    elif name == "mixture20":
        leak = build_release("mixture", parts, seed, per_component=20)
    elif name == "kde":
        leak = build_release("kde", parts, seed, bandwidth=share)
    else:
        leak = build_release(name, parts, seed, quasi_identifiers=qi)
    return parts, leak, {"metadata": meta}


def person(kind: str, seed: int, stated: float | None, k: int | None = None):
    from synthguard.calibration import person_copies, person_panel
    from synthguard.data.entities.calibration import entity_calibration_split

    panel = person_panel(load(PANEL_FROM), seed=0)
    p = entity_calibration_split(panel, "person_id", seed=seed, fractions=SPLITS["standard"])
    parts = {k: v.events for k, v in p.items()}
    _, _, size = kind.partition("@")
    n_persons = parts["original"]["person_id"].nunique()
    kw = {"metadata": {"quasi_identifiers": META[PANEL_FROM]["quasi_identifiers"]},
          "entity_key": "person_id", "sequence_key": "visit"}
    if not size:
        return parts, _no_leak(parts["fresh"], n_persons, "person"), kw
    share = _share(size, stated, k)
    leak = None if share is None else person_copies(parts["fresh"], parts["original"], share, seed)
    return parts, leak, kw


def text(kind: str, seed: int, stated: float | None, k: int | None = None):
    from synthguard.calibration import calibration_split, text_near_copies

    train = pd.read_csv(DATA / "fine_foods_reviews_train.csv")[["review"]]
    test = pd.read_csv(DATA / "fine_foods_reviews_test.csv")[["review"]]
    a, b, c = TEXT_SIZES
    p = calibration_split(train, seed, (a, b, len(train) - a - b))
    parts = {"original": p["original"], "control": p["control"],
             "fresh": test.sample(c, random_state=seed).reset_index(drop=True)}
    _, _, size = kind.partition("@")
    kw = {"metadata": {"text_columns": ["review"]}}
    if not size:
        return parts, _no_leak(parts["fresh"], len(parts["original"]), "text"), kw
    share = _share(size, stated, k)
    leak = (None if share is None else
            text_near_copies(parts["fresh"], parts["original"], share, seed, column="review"))
    return parts, leak, kw


def family_of(kind: str) -> str | None:
    base = kind.partition("@")[0]
    if base in FAMILY_KINDS or base in ("person", "text"):
        return base
    return None


def is_null(kind: str) -> bool:
    return kind in ("fresh", "mode_seeking", "person", "text")


def null_of(kind: str) -> str:
    """The null run whose stated limits a ``@1.5x`` kind builds on."""
    base = kind.partition("@")[0]
    return base if base in ("person", "text") else "fresh"


#: the reason a run on a cluster gives a test that runs in one process only
LOCAL_ONLY = "not available in a distributed run"


def one_run(task: dict, client=None) -> dict:
    """One release evaluated (on the Dask cluster of ``client`` when given): the row of the table."""
    import synthguard

    dataset, seed, kind, split = task["dataset"], task["seed"], task["kind"], task["split"]
    base = kind.partition("@")[0]
    stated, k = task.get("stated"), task.get("stated_k")
    if base == "person":
        parts, leak, kw = person(kind, seed, stated, k)
    elif base == "text":
        parts, leak, kw = text(kind, seed, stated, k)
    else:
        parts, leak, kw = tabular(dataset, kind, seed, split, stated, k)
    row = {k: task.get(k) for k in ("dataset", "split", "seed", "kind", "materiality", "key",
                                    "max_records")}
    row.update(family=family_of(kind), stated=stated, n_original=len(parts["original"]))
    if leak is None:  # a 1.5x kind without a stated limit: nothing to build
        return row | {"verdict": None, "skipped": "the fresh run states no limit for this family"}
    t0, c0 = time.perf_counter(), time.process_time()
    rep = synthguard.evaluate(parts["original"], leak.release, control=parts["control"],
                              metrics=task["metrics"], seed=seed, retest_columns=0, retest_rows=0,
                              materiality=task["materiality"],
                              # entity runs (person) test every person: max_records is refused there
                              max_records=None if base == "person" else task.get("max_records"),
                              client=client, **kw)
    v = rep.verdict.to_dict()
    risks = {r["risk"]: {"level": r["level"], "bound": r.get("bound"), "bound_by": r.get("bound_by"),
                         "unassessed": list(r.get("unassessed") or ()), "tests": list(r.get("tests") or ())}
             for r in v.get("risks", [])}
    entries = rep.to_dict()["metrics"]
    return row | {
        "statuses": {m: e.get("status") for m, e in entries.items()},
        "local_only": sorted(m for m, e in entries.items()
                             if e.get("status") == "skipped" and LOCAL_ONLY in str(e.get("reason") or "")),
        "verdict": v["level"], "risks": risks, "leak_share": leak.share, "n_leaked": leak.n_leaked,
        "limits": {t: d.get("value") for t, d in (v.get("detection_limits") or {}).items()},
        "limit_k": {t: d.get("k") for t, d in (v.get("detection_limits") or {}).items()},
        "levels": {m: rep.result(m).risk_level for m in rep.metrics if rep.result(m) is not None},
        "sample": rep.model.header.get("sample"),
        # words against numbers (synthguard.calibration.claim_problems): empty when they agree
        "violations": claim_problems(rep),
        "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}


def _key(dataset: str, split: str, seed: int, kind: str, materiality: float, metrics: list,
         max_records: int | None = None) -> str:
    mh = hashlib.sha256(",".join(metrics).encode()).hexdigest()[:8]
    tail = "" if max_records is None else f"|max{max_records}"
    return f"{dataset}|{split}|{seed}|{kind}|{materiality:g}|{mh}{tail}"


def plan(datasets: list[str], seeds: int, sizes: tuple[str, ...], kinds: list[str] | None,
         metrics: list[str], safety: bool, max_records: int | None = None) -> list[dict]:
    """Every run, nulls first (the 1.5x kinds read their stated limits)."""
    out: list[dict] = []

    def add(dataset: str, split: str, seed: int, kind: str, m: float = 0.01) -> None:
        out.append({"dataset": dataset, "split": split, "seed": seed, "kind": kind,
                    "materiality": m, "metrics": metrics, "max_records": max_records,
                    "key": _key(dataset, split, seed, kind, m, metrics, max_records)})

    if kinds is None:
        kinds = (["fresh", "mode_seeking"] + [f"{f}@{s}" for f in FAMILY_KINDS for s in sizes]
                 + ["person"] + [f"person@{s}" for s in sizes if s != "0.01"]
                 + ["text"] + [f"text@{s}" for s in sizes if s != "0.01"])
    for seed in range(seeds):
        for k in kinds:
            base = k.partition("@")[0]
            if base == "person":
                add(f"{PANEL_FROM}-panel", "standard", seed, k)
            elif base == "text":
                add("fine_foods_reviews", "standard", seed, k)
            else:
                for d in datasets:
                    add(d, "standard", seed, k)
        if safety:  # fresh at 1 % and 5 %, and the 800 / 800 splits
            for d in datasets:
                add(d, "standard", seed, "fresh", 0.05)
                if d in N800:
                    add(d, "n800", seed, "fresh", 0.01)
                    add(d, "n800", seed, "fresh", 0.05)
    # the nulls first, so every 1.5x kind finds its fresh run
    return sorted(out, key=lambda t: (not is_null(t["kind"]), t["seed"]))


def _stated(task: dict, done: dict[str, dict]) -> tuple[float | None, int | None]:
    """The limit of the task's family its null run states: (share, records)."""
    null = dict(task, kind=null_of(task["kind"]))
    key = _key(null["dataset"], null["split"], null["seed"], null["kind"], null["materiality"],
               null["metrics"], null.get("max_records"))
    run = done.get(key)
    if run is None or run.get("verdict") is None:
        return None, None
    family = family_of(task["kind"])
    return (run.get("limits") or {}).get(family), (run.get("limit_k") or {}).get(family)


def _done_runs(out: Path | None) -> dict[str, dict]:
    """The runs already written to the JSON-lines file ``out`` (by their key): a run resumes."""
    done: dict[str, dict] = {}
    if out is not None and out.exists():
        for line in out.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                done[r["key"]] = r
    return done


def execute(todo: list[dict], jobs: int, out: Path | None) -> list[dict]:
    done = _done_runs(out)
    pending = [t for t in todo if t["key"] not in done]
    print(f"{len(todo) - len(pending)} runs reused, {len(pending)} to run", file=sys.stderr)

    def record(r: dict) -> None:
        done[r["key"]] = r
        if out is not None:
            with out.open("a") as fh:
                fh.write(json.dumps(r, default=float) + "\n")
        print(f"  {r['dataset']} {r['split']} s{r['seed']} {r['kind']} m={r['materiality']:g}: "
              f"{r.get('verdict')} ({r.get('seconds', 0):.0f} s)", file=sys.stderr, flush=True)

    for phase in (True, False):  # nulls, then leaks (which read their stated limits)
        batch = [t for t in pending if is_null(t["kind"]) == phase]
        for t in batch:
            if t["kind"].endswith("x"):
                t["stated"], t["stated_k"] = _stated(t, done)
        if jobs == 1:
            for t in batch:
                record(one_run(t))
        else:
            with ProcessPoolExecutor(jobs) as pool:
                for r in pool.map(one_run, batch):
                    record(r)
    return [done[t["key"]] for t in todo]


# ------------------------------------------------------------------ one process vs a cluster
def _same_value(a, b) -> bool:
    """Equal, NaN equal to NaN (numbers compared exactly: a cluster must give the same bits)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _differences(a: dict, b: dict, skipped: set[str] = frozenset()) -> list[str]:
    """The fields of run ``b`` that differ from run ``a``: verdict, each risk's level, bound (and
    what sets it) and unassessed families, the detection limits, every test's level and status
    (the tests in ``skipped`` left out)."""
    if a.get("verdict") is None or b.get("verdict") is None:  # nothing built
        return [] if a.get("verdict") == b.get("verdict") else [f"verdict {a.get('verdict')} vs {b.get('verdict')}"]
    out = [] if a["verdict"] == b["verdict"] else [f"verdict {a['verdict']} vs {b['verdict']}"]
    for risk in sorted(set(a["risks"]) | set(b["risks"])):
        x, y = a["risks"].get(risk, {}), b["risks"].get(risk, {})
        out += [f"risk {risk}: {f} {x.get(f)!r} vs {y.get(f)!r}" for f in ("level", "bound", "bound_by", "unassessed")
                if not _same_value(x.get(f), y.get(f))]
    for what in ("limits", "limit_k"):
        x, y = a.get(what) or {}, b.get(what) or {}
        out += [f"{what} {f}: {x.get(f)!r} vs {y.get(f)!r}" for f in sorted(set(x) | set(y))
                if not _same_value(x.get(f), y.get(f))]
    for what in ("levels", "statuses"):
        x, y = a.get(what) or {}, b.get(what) or {}
        out += [f"{what[:-1]} {m}: {x.get(m)!r} vs {y.get(m)!r}" for m in sorted(set(x) | set(y))
                if m not in skipped and not _same_value(x.get(m), y.get(m))]
    return out


def compare_runs(local: dict, cluster: dict, local_as_cluster: dict | None = None
                 ) -> tuple[list[str], list[str]]:
    """How a cluster's run of a release differs from one process's: ``(differs, by_design)``.

    The tests a cluster skips as one-process-only (``cluster["local_only"]``) differ by design, and
    so does whatever they change in one process (the verdict, risk bounds and detection limits
    count every test: Holm's correction, the joint test). ``local_as_cluster`` is then one
    process's run of the same release WITHOUT those tests: the cluster must equal it in every field
    (``differs``), and the fields where it differs from ``local`` are listed ``by_design``.
    """
    if cluster.get("refused"):
        return [], [f"the run is refused on a cluster: {cluster['refused']}"]
    skipped = set(cluster.get("local_only") or ())
    if not skipped or local_as_cluster is None:
        return _differences(local, cluster, skipped), [f"{m} (one process only)" for m in sorted(skipped)]
    by_design = [f"{m} (one process only)" for m in sorted(skipped)]
    by_design += [f"{d} (without the one-process tests)" for d in _differences(local, local_as_cluster, skipped)]
    return _differences(local_as_cluster, cluster, skipped), by_design


def _risk_cell(r: dict) -> str:
    if r.get("verdict") is None:
        return "-"
    risks = " ".join(f"{k[:4]}={x['level'][:4]}" + (f"<{x['bound']:.3g}" if x.get("bound") is not None else "")
                     for k, x in sorted(r["risks"].items()))
    limits = " ".join(f"{f}={v:.3g}" for f, v in sorted((r.get("limits") or {}).items()) if v is not None)
    return f"{r['verdict']}; {risks}; limits {limits or '-'}"


def comparison_table(pairs: list[tuple[dict, dict, dict | None]]) -> tuple[str, int]:
    """The side-by-side table of ``(one process, cluster, one process without the tests a cluster
    skips)`` runs (see :func:`compare_runs`) and the number of releases that differ (differences by
    design not counted)."""
    out = ["| release | one process: verdict; risks (level<bound); limits | cluster | "
           "same? | fields that differ |", "| --- | --- | --- | --- | --- |"]
    n_diff = n_design = 0
    for local, cluster, local_as_cluster in pairs:
        differs, by_design = compare_runs(local, cluster, local_as_cluster)
        name = (f"{local['dataset']} {local['split']} s{local['seed']} {local['kind']} "
                f"m={local['materiality']:g}")
        same_cluster = "(same)" if _risk_cell(local) == _risk_cell(cluster) else _risk_cell(cluster)
        if differs:
            n_diff += 1
            state, shown = "**differs**", "; ".join(differs + [f"by design: {d}" for d in by_design])
        elif by_design:
            n_design += 1
            state, shown = "same but by design", "; ".join(by_design)
        else:
            state, shown = "same", ""
        out.append(f"| {name} | {_risk_cell(local)} | {same_cluster} | {state} | {shown} |")
    n = len(pairs)
    out += ["", f"{n - n_diff} of {n} releases agree ({n_design} of them only after the differences by "
                f"design: tests that run in one process only); {n_diff} differ"]
    return "\n".join(out), n_diff


def _cluster_run(task: dict, client) -> dict:
    """:func:`one_run` on the cluster of ``client``; a run a cluster refuses by design (an entity
    run, one row per person, runs in one process) gives a row without a verdict saying why."""
    from synthguard.errors import ConfigError

    try:
        return one_run(task, client)
    except ConfigError as exc:
        if "evaluate(client=...) cannot take" not in str(exc):
            raise
        return {k: task.get(k) for k in ("dataset", "split", "seed", "kind", "materiality", "key")} | {
            "verdict": None, "refused": str(exc)}


def execute_compare(todo: list[dict], workers: int, out: Path | None, *, processes: bool = True
                    ) -> list[tuple[dict, dict, dict | None]]:
    """Every release of ``todo`` run in one process and on a local Dask cluster of ``workers``
    workers (one thread each), and, when the cluster skips tests that run in one process only,
    once more in one process without them (see :func:`compare_runs`). The ``@1.5x`` releases are
    built from the one-process null runs' stated limits, so every side evaluates the same rows.
    With ``out``, rows are appended and reused as :func:`execute` does (the cluster's under the
    key suffixed ``|dask<workers>``, the third run's ``|as-dask``)."""
    import logging

    from distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)
    done = _done_runs(out)

    def keep(r: dict, key: str) -> dict:
        r = dict(r, key=key)
        done[key] = r
        if out is not None:
            with out.open("a") as fh:
                fh.write(json.dumps(r, default=float) + "\n")
        return r

    pairs: list[tuple[dict, dict, dict | None]] = []
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        for phase in (True, False):  # nulls, then leaks (which read their stated limits)
            for t in [t for t in todo if is_null(t["kind"]) == phase]:
                if t["kind"].endswith("x"):
                    t["stated"], t["stated_k"] = _stated(t, done)
                key, ckey = t["key"], f"{t['key']}|dask{workers}"
                local = done.get(key) or keep(one_run(t), key)
                dist = done.get(ckey) or keep(_cluster_run(t, client), ckey)
                same = None
                if dist.get("local_only"):
                    skip = set(dist["local_only"])
                    same = done.get(f"{key}|as-dask") or keep(
                        one_run(dict(t, metrics=[m for m in t["metrics"] if m not in skip])), f"{key}|as-dask")
                differs, _ = compare_runs(local, dist, same)
                print(f"  {t['dataset']} {t['split']} s{t['seed']} {t['kind']}: {local.get('verdict')} / "
                      f"{dist.get('verdict')} ({'differs' if differs else 'same'}; "
                      f"{local.get('seconds', 0):.0f} s / {dist.get('seconds', 0):.0f} s)",
                      file=sys.stderr, flush=True)
                pairs.append((local, dist, same))
    return pairs


# ------------------------------------------------------------------------------------- tables
def _pct(values: list, q: float = 0.5) -> str:
    v = [x for x in values if x is not None and np.isfinite(x)]
    return f"{100 * float(np.quantile(v, q)):.2g} %" if v else "-"


def _frac(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f} %)" if n else "-"


def _bound(r: dict) -> float | None:
    b = [x["bound"] for x in r["risks"].values() if x["level"] != "not assessed"]
    if not b or any(x is None for x in b):
        return None
    return max(b)


def family_table(rows: list[dict]) -> list[str]:
    ran = [r for r in rows if r.get("family") and not is_null(r["kind"])]
    sizes = sorted({r["kind"].partition("@")[2] for r in ran}, key=lambda s: (s.endswith("x"), s))
    head = ["| family | " + " | ".join(
        (f"{s}: runs / high / low" if not s.endswith("x") else
         f"{s} stated limit: high / runs (median limit; none stated)") for s in sizes) + " |",
        "| --- |" + " --- |" * len(sizes)]
    out = head
    fams = [f for f in (*FAMILY_KINDS, "person", "text") if any(r["family"] == f for r in ran)]
    for f in fams:
        cells = []
        for s in sizes:
            rs = [r for r in ran if r["family"] == f and r["kind"].partition("@")[2] == s]
            got = [r for r in rs if r.get("verdict")]
            hi = sum(r["verdict"] == "high" for r in got)
            lo = sum(r["verdict"] == "low" for r in got)
            if s.endswith("x"):
                cells.append(f"{_frac(hi, len(got))} ({_pct([r['stated'] for r in got])}; "
                             f"{len(rs) - len(got)})")
            else:
                cells.append(f"{len(got)} / {hi} / **{lo}**" if lo else f"{len(got)} / {hi} / 0")
        out.append(f"| {f} | " + " | ".join(cells) + " |")
    return out


def null_table(rows: list[dict]) -> list[str]:
    out = ["| null | runs | alarms (high or medium) | rate | low | inconclusive |",
           "| --- | --- | --- | --- | --- | --- |"]
    for kind in ("fresh", "mode_seeking", "person", "text"):
        rs = [r for r in rows if r["kind"] == kind and r["split"] == "standard"
              and r["materiality"] == 0.01 and r.get("verdict")]
        if not rs:
            continue
        a = sum(r["verdict"] in ALARMS for r in rs)
        out.append(f"| {kind} | {len(rs)} | {a} | {a / len(rs):.3f} (1 in {len(rs) / a:.0f}) |"
                   if a else f"| {kind} | {len(rs)} | 0 | 0 |")
        out[-1] += (f" {sum(r['verdict'] == 'low' for r in rs)} | "
                    f"{sum(r['verdict'] == 'inconclusive' for r in rs)} |")
    return out


def _groups(rows: list[dict], keep, key) -> dict[tuple, list[dict]]:
    """The runs with a verdict that ``keep`` accepts, grouped by ``key`` (in the runs' order)."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if r.get("verdict") and keep(r):
            groups[key(r)].append(r)
    return groups


def safety_table(rows: list[dict]) -> list[str]:
    out = ["| table | split | training records | materiality | runs | low | median bound reached | "
           "presence / singling out / linkability / inference (median bound) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    groups = _groups(rows, lambda r: r["kind"] == "fresh",
                     lambda r: (r["dataset"], r["split"], r["materiality"]))
    for (d, split, m), rs in sorted(groups.items()):
        lows = sum(r["verdict"] == "low" for r in rs)
        per = " / ".join(_pct([r["risks"].get(k, {}).get("bound") for r in rs])
                         for k in ("presence", "singling_out", "linkability", "inference"))
        out.append(f"| {d} | {split} | {rs[0]['n_original']} | {100 * m:g} % | {len(rs)} | "
                   f"{_frac(lows, len(rs))} | {_pct([_bound(r) for r in rs])} | {per} |")
    return out


def detail_table(rows: list[dict]) -> list[str]:
    out = ["| table | release | runs | high | medium | inconclusive | low | leaked (median) | "
           "stated limit of its family (median) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    groups = _groups(rows, lambda r: r["split"] == "standard" and r["materiality"] == 0.01,
                     lambda r: (r["dataset"], r["kind"]))
    for (d, kind), rs in groups.items():
        c = defaultdict(int)
        for r in rs:
            c[r["verdict"]] += 1
        own = [r["limits"].get(r["family"]) if r.get("family") else None for r in rs]
        out.append(f"| {d} | {kind} | {len(rs)} | {c['high']} | {c['medium']} | "
                   f"{c['inconclusive']} | {c['low']} | {_pct([r['leak_share'] for r in rs])} | "
                   f"{_pct(own)} |")
    return out


def table(rows: list[dict]) -> str:
    parts = ["Leak families (standard split, materiality 1 %):", "", *family_table(rows), "",
             "Nulls (standard split, materiality 1 %):", "", *null_table(rows), "",
             "Fresh releases: low where the data can show it:", "", *safety_table(rows), "",
             "Per table:", "", *detail_table(rows)]
    secs = [r["seconds"] for r in rows if r.get("seconds")]
    cpu = [r["cpu_seconds"] for r in rows if r.get("cpu_seconds")]
    if secs:
        parts += ["", f"{len(secs)} runs: median {statistics.median(secs):.0f} s wall, "
                      f"{statistics.median(cpu):.0f} s CPU per run; {sum(cpu) / 3600:.1f} CPU hours"]
    return "\n".join(parts)


def claims_line(rows: list[dict]) -> list[str]:
    """How many reports were checked for words that say more than their numbers, how many failed,
    then one line per failure (runs recorded before the check existed are not counted)."""
    checked = [r for r in rows if r.get("verdict") is not None and "violations" in r]
    bad = [r for r in checked if r["violations"]]
    out = [f"claims that hold: {len(checked)} reports checked (synthguard.calibration.claim_problems), "
           f"{len(bad)} with words the numbers do not bear"]
    out += [f"{r['dataset']} {r['split']} s{r['seed']} {r['kind']} m={r['materiality']:g}: "
            + "; ".join(r["violations"]) for r in bad]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(META))
    ap.add_argument("--seeds", type=int, default=None, help="default 6 (2 with --quick)")
    ap.add_argument("--kinds", nargs="+", default=None,
                    help="default: the nulls and every family at each size (see above)")
    ap.add_argument("--sizes", nargs="+", default=None,
                    help=f"leak sizes of the families (default {' '.join(FULL_SIZES)}; "
                         f"--quick {' '.join(QUICK_SIZES)})")
    ap.add_argument("--quick", action="store_true", help="2 seeds, sizes 1 %% and 1.5x")
    ap.add_argument("--no-safety", action="store_true",
                    help="skip the fresh runs at materiality 5 %% and on the 800 / 800 splits")
    ap.add_argument("--family-tests", action="store_true",
                    help="run only the tests that state their responses to the leak families "
                         f"({', '.join(FAMILY_TESTS)}): the same limits, a fifth of the cost")
    ap.add_argument("--metrics", nargs="+", default=None,
                    help="default: the privacy preset without distinguishability (inform only)")
    ap.add_argument("--max-records", type=int, default=None, metavar="N",
                    help="passed to every run: above N training or control records the tests run "
                         "on a seeded sample of N of each (default: synthguard's)")
    ap.add_argument("--jobs", type=int, default=1, help="processes (only on a quiet machine)")
    ap.add_argument("--workers", type=int, default=None, metavar="N",
                    help="run every release in one process AND on a local Dask cluster of N workers, "
                         "print them side by side and exit 1 on any difference")
    ap.add_argument("--json", type=Path, default=None,
                    help="append every run here (one JSON line each) and reuse the runs already there")
    ap.add_argument("--table-only", action="store_true", help="print the table of --json's runs")
    a = ap.parse_args(argv)
    from synthguard.run.config import PRESETS

    metrics = a.metrics or (list(FAMILY_TESTS) if a.family_tests else
                            [m for m in PRESETS["privacy"] if m != "distinguishability"])
    if a.table_only:
        if a.json is None:
            ap.error("--table-only reads --json")
        rows = [json.loads(x) for x in a.json.read_text().splitlines() if x.strip()]
        print(table(rows))
        print("\n".join(claims_line(rows)))
        return 0
    seeds = a.seeds or (2 if a.quick else 6)
    sizes = tuple(a.sizes or (QUICK_SIZES if a.quick else FULL_SIZES))
    todo = plan(a.datasets, seeds, sizes, a.kinds, metrics, not a.no_safety, a.max_records)
    t0 = time.perf_counter()
    load_at_start = os.getloadavg()
    if a.workers:
        if a.max_records is not None:
            ap.error("--max-records with --workers: a cluster run tests every record; leave it out")
        text, n_diff = comparison_table(execute_compare(todo, a.workers, a.json))
        print(text)
        print(f"\n{len(todo)} releases, each in one process and on {a.workers} workers, in "
              f"{time.perf_counter() - t0:.0f} s wall; load average at start {load_at_start[0]:.1f}, at end "
              f"{os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
        return 1 if n_diff else 0
    rows = execute(todo, a.jobs, a.json)
    print(table(rows))
    claims = claims_line(rows)
    print("\n".join([claims[0], *("  " + x for x in claims[1:])]))
    print(f"\n{len(todo)} runs in {time.perf_counter() - t0:.0f} s wall, --jobs {a.jobs}; load average "
          f"at start {load_at_start[0]:.1f}, at end {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    return 1 if len(claims) > 1 else 0  # a report whose words its numbers do not bear


if __name__ == "__main__":
    sys.exit(main())
