"""Benchmark of the text metrics on 10k original + 10k synthetic food reviews.

Data (seeded): original = 10,000 reviews sampled with replacement from
``fine_foods_reviews_train.csv``, 20 % of them with one word replaced by a random vocabulary word;
synthetic = 10,000 texts: 10 % verbatim copies of original rows, 10 % near copies (two words
replaced), 80 % recombinations (the first half of one original review's sentences + the second half
of another's). The NLP cache is off (cold run) unless ``--warm``.

Side by side: SynEval's stylistic-outlier step builds the full n x n cosine-distance matrix
(sklearn ``cosine_distances``); we time that reference computation next to our O(n d) formula on the
same embeddings. SynEval itself cannot run offline (Flair hub model, NLTK downloads), so the NLP
metrics have no reference run.

By default all metrics run in ONE ``evaluate`` call (as a user runs them), so ``text_entities`` and
``text_nominals`` share one spaCy pass; ``--separate`` runs one evaluation per metric instead.

Run: ``python benchmarks/bench_text.py [--n 10000] [--max-docs N|all] [--metrics a,b] [--n-process 2]
[--separate] [--warm]``
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
METRICS = ("text_exact_matches", "text_style_outliers", "text_entities", "text_nominals")


def make_data(n: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    train = pd.read_csv(DATA / "fine_foods_reviews_train.csv")
    base = train["review"].astype(str).to_numpy()
    vocab = np.array(sorted({w for t in base[:500] for w in re.findall(r"[a-z]+", t.lower())}))

    def replace_words(text: str, k: int) -> str:
        words = text.split(" ")
        for _ in range(k):
            words[int(rng.integers(len(words)))] = str(vocab[rng.integers(vocab.size)])
        return " ".join(words)

    pick = rng.integers(0, base.size, n)
    orig = base[pick].copy()
    noisy = rng.random(n) < 0.2
    orig[noisy] = [replace_words(t, 1) for t in orig[noisy]]
    original = pd.DataFrame({"review": orig, "score": train["score"].to_numpy()[pick]})

    kind = rng.choice(3, size=n, p=[0.1, 0.1, 0.8])
    src = rng.integers(0, n, n)
    other = rng.integers(0, n, n)
    sentences = [re.split(r"(?<=[.!?])\s+", t) for t in orig]
    syn = []
    for k, a, b in zip(kind, src, other, strict=True):  # benchmark data generation only
        if k == 0:
            syn.append(orig[a])
        elif k == 1:
            syn.append(replace_words(orig[a], 2))
        else:
            sa, sb = sentences[a], sentences[b]
            syn.append(" ".join(sa[: max(1, len(sa) // 2)] + sb[len(sb) // 2:]))
    synthetic = pd.DataFrame({"review": syn, "score": original["score"].to_numpy()[src]})
    return original, synthetic


def _cpu() -> float:
    """CPU seconds of this process and its finished children (spaCy worker processes)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def reference_style(emb: np.ndarray) -> float:
    from sklearn.metrics.pairwise import cosine_distances

    t = time.perf_counter()
    d = cosine_distances(emb)
    d.mean(axis=1)
    return time.perf_counter() - t


def _report_line(name: str, rep, extra: str = "") -> None:
    entry = rep[name]
    res = rep.result(name) if entry["status"] == "ok" else None
    val = None if res is None else res.value
    print(f"{name:31s} {entry['status']:7s} metric {entry['seconds']:7.1f} s{extra} "
          f"value={val if val is None else round(val, 4)} risk={res.risk_level if res else '-'} "
          f"{'' if entry['status'] == 'ok' else entry['reason']}", flush=True)
    if res is not None and name in ("text_entities", "text_nominals"):
        d = res.to_dict()
        print(f"    backend={d['backend']} model={d['model']} device={d['device']} "
              f"orig density={d['original']['density']:.4f} syn density={d['synthetic']['density']:.4f} "
              f"leaked={d['leaked']}/{d['distinct_original']} sampled={d['sampled']}", flush=True)
    if res is not None and name == "text_exact_matches":
        d = res.to_dict()
        print(f"    exact={d['exact_match_rate']:.4f} near={d['near_duplicate_rate']:.4f} "
              f"original duplication={d['original_duplication_rate']:.4f}", flush=True)


def _together(args, names, params, original, synthetic) -> None:
    """All metrics in ONE evaluation (what a user runs): entities and nominals share one NLP pass."""
    from synthguard import evaluate

    passes = [""] + ([" (cached)"] if args.warm else [])
    for tag in passes:
        c0, t0, l0 = _cpu(), time.perf_counter(), os.getloadavg()[0]
        rep = evaluate(original, synthetic, metadata={"text_columns": ["review"]},
                       metrics={n: params[n] for n in names})
        dt, cpu = time.perf_counter() - t0, _cpu() - c0
        for name in names:
            _report_line(name, rep)
        print(f"TOTAL one evaluation{tag}: {dt:.1f} s wall, {cpu:.1f} CPU-s (process + spaCy workers); "
              f"load average at start {l0:.2f}, at end {os.getloadavg()[0]:.2f}", flush=True)


def _separate(args, names, params, original, synthetic) -> None:
    """One evaluation per metric (per-metric CPU seconds; no sharing between the NLP metrics)."""
    from synthguard import evaluate

    total = total_cpu = 0.0
    runs = [(name, "") for name in names]
    if args.warm:  # a second pass over the same data reads the NLP outputs from the cache
        runs += [(name, " (cached)") for name in names if name != "text_exact_matches"]
    for name, tag in runs:
        c0 = _cpu()
        t0 = time.perf_counter()
        rep = evaluate(original, synthetic, metadata={"text_columns": ["review"]}, metrics={name: params[name]})
        dt = time.perf_counter() - t0
        cpu = _cpu() - c0
        if not tag:  # totals of the cold pass only
            total += rep[name]["seconds"]
            total_cpu += cpu
        _report_line(name, rep, f" (call {dt:6.1f} s, CPU {cpu:6.1f} s){tag}")
    print(f"TOTAL text metrics: {total:.1f} s wall, {total_cpu:.1f} CPU-s (process + spaCy workers); "
          f"load now {os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--max-docs", default="default",
                    help="documents per table for the NLP metrics: an integer, 'all', or 'default' (the "
                         "metrics' default)")
    ap.add_argument("--metrics", default=",".join(METRICS))
    ap.add_argument("--n-process", type=int, default=None)
    ap.add_argument("--warm", action="store_true",
                    help="use the NLP cache and run the NLP metrics a second time (cached)")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--separate", action="store_true",
                    help="one evaluation per metric (per-metric CPU; the NLP metrics then share nothing "
                         "but the cache) instead of all metrics in one evaluation")
    args = ap.parse_args()

    original, synthetic = make_data(args.n)
    ntok = sum(len(t.split()) for t in original["review"]) + sum(len(t.split()) for t in synthetic["review"])
    print(f"data: {len(original)} original + {len(synthetic)} synthetic reviews, ~{ntok} words; "
          f"{os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}", flush=True)
    names = [m for m in args.metrics.split(",") if m]
    nlp: dict = {"n_process": args.n_process, "backend": args.backend}
    if args.max_docs != "default":
        nlp["max_docs"] = None if args.max_docs == "all" else int(args.max_docs)
    params = {
        "text_exact_matches": {},
        "text_style_outliers": {},
        "text_entities": dict(nlp),
        "text_nominals": dict(nlp),
    }
    cache_dir = tempfile.mkdtemp(prefix="synthguard-bench-")
    for name in ("text_style_outliers", "text_entities", "text_nominals"):
        params[name] = {k: v for k, v in params[name].items() if v is not None or k == "max_docs"}
        params[name].update({"cache": bool(args.warm), "cache_dir": cache_dir})
    if args.separate:
        _separate(args, names, params, original, synthetic)
    else:
        _together(args, names, params, original, synthetic)

    if "text_style_outliers" in names:
        # side by side: n x n reference vs our O(n d) mean cosine distance, same embeddings
        from synthguard.metrics.text.style import mean_cosine_distance

        rng = np.random.default_rng(0)
        emb = rng.normal(size=(len(synthetic), 100))
        tracemalloc.start()
        t = time.perf_counter()
        mean_cosine_distance(emb)
        ours = time.perf_counter() - t
        ours_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        ref = reference_style(emb)
        ref_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"mean cosine distance, n={len(emb)}: ours {ours:.3f} s / {ours_peak / 2**20:.0f} MiB peak; "
              f"n x n reference {ref:.3f} s / {ref_peak / 2**20:.0f} MiB peak; ratio {ref / ours:.0f}x",
              flush=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss:.0f} MiB", flush=True)


if __name__ == "__main__":
    sys.exit(main())
