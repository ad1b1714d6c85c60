"""Entity-level figures of docs/entity-level.md on the NAFLD sample (tests/unit/metrics/entity/data).

Run from the repository root:  PYTHONPATH=src python benchmarks/entity_level.py [--scale]
Prints, for a fresh release, a release with 5 % whole copies and one with 5 % prefix copies, the
member / control copy rates with the one-sided Fisher p-value, the DCR risk on the entity table, and
the row-level exact-match rate against the control's; then the sequential fidelity scores with their
control ceilings, and the wall time of one entity-level run.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.entity._scenarios import prefix_copies, run_kwargs, split, whole_copies  # noqa: E402

import synthguard as sg  # noqa: E402


def main() -> None:
    parts = split(seed=0)
    releases = {"fresh": (*parts["fresh"], None), "whole copies 5 %": whole_copies(parts),
                "prefix copies 5 % (re-anchored)": prefix_copies(parts),
                "prefix copies 5 % (days kept)": prefix_copies(parts, reanchor=False)}
    print("release | entity_copies member / control (p, level) | subsequence_copies member / control (p, level) | "
          "dcr reference level | verdict | row exact matches synthetic / control")
    for name, (p, e, _) in releases.items():
        t0 = time.perf_counter()
        rep = sg.evaluate(**run_kwargs(parts, p, e), metrics=["entity_copies", "subsequence_copies", "dcr"])
        dt = time.perf_counter() - t0
        row = sg.evaluate(parts["original"][1], e, parts["control"][1],
                          metadata={"columns": {"id": {"sdtype": "id"}}}, metrics=["exact_matches"])
        cells = []
        for m in ("entity_copies", "subsequence_copies"):
            r = rep[m]["result"]
            cells.append(f"{r['member']['k']}/{r['member']['n']} vs {r['non_member']['k']}/{r['non_member']['n']} "
                         f"(p={r['p_value']:.2g}, {r['risk_level']})")
        x = row["exact_matches"]["result"]
        print(f"{name} | {cells[0]} | {cells[1]} | {rep['dcr']['result']['reference_level']} | "
              f"{rep.to_dict()['verdict']['level']} | {x['value']:.3f} / {x['baseline']['value']:.3f}   [{dt:.1f} s]")
    p, e = parts["fresh"]
    r = sg.evaluate(**run_kwargs(parts, p, e), metrics={"entity_copies": {"min_events": 1}})["entity_copies"]["result"]
    print(f"\nfresh, entity_copies with min_events=1: {r['member']['k']}/{r['member']['n']} vs "
          f"{r['non_member']['k']}/{r['non_member']['n']}, detection limit {r['evidence']['detection_limit']:.3f}, "
          f"{r['risk_level']}")
    p, e = parts["fresh"]
    seq = ["sequence_length", "inter_event_time", "category_shares", "transitions",
           "context_sequence_dependence", "cardinality_shape"]
    rep = sg.evaluate(**run_kwargs(parts, p, e), metrics=seq)
    print("\nfresh release: metric | synthetic | control ceiling")
    for m in seq:
        r = rep[m]["result"]
        print(f"{m} | {r['value']:.4f} | {r['baseline']['value']:.4f}")


def calibration(seeds: int = 20) -> None:
    """False alarms on fresh releases and power on 5 % whole copies, over seeded entity splits."""
    from tests.entity._scenarios import load_nafld

    from synthguard.data.entities.calibration import entity_calibration_split, entity_leaky_release

    persons, events = load_nafld()
    names = ["entity_copies", "subsequence_copies"]
    alarms = dict.fromkeys(names, 0)
    verdict_alarms = power = 0
    for seed in range(seeds):
        parts = entity_calibration_split(events, "id", context=persons, seed=seed)
        o, c, f = parts["original"], parts["control"], parts["fresh"]
        kw = {"original": o.events, "control": c.events, "entity_key": "id", "sequence_key": "days",
              "original_context": o.context, "control_context": c.context}
        rep = sg.evaluate(synthetic=f.events, synthetic_context=f.context, metrics=names, **kw)
        for n in names:
            alarms[n] += rep[n]["result"]["risk_level"] in ("high", "medium")
        verdict_alarms += rep.to_dict()["verdict"]["level"] in ("high", "medium")
        ev, ctx = entity_leaky_release(f, o, "id", share=0.05, seed=seed)
        leak = sg.evaluate(synthetic=ev, synthetic_context=ctx, metrics=names, **kw)
        power += leak.to_dict()["verdict"]["level"] == "high"
    print(f"\ncalibration over {seeds} entity splits: false alarms {alarms}, verdict false alarms "
          f"{verdict_alarms}/{seeds}; 5 % whole copies read high {power}/{seeds}")


def scale(n_original: int = 50_000) -> None:
    """Seconds of each entity-level step on generated sequences: ``n_original`` people with 1-19
    events each (about 10 per person) in the original, half as many in the release and the control."""
    import numpy as np
    import pandas as pd

    from synthguard.data.entities import build_entity_run, prepare_entities
    from synthguard.metrics.entity import fidelity as F
    from synthguard.metrics.entity.copies import subsequence_copies_of, whole_sequence_copies

    def make(n: int, seed: int, start: int) -> pd.DataFrame:
        rng = np.random.default_rng(seed)
        lengths = rng.integers(1, 20, n)
        ids = np.repeat(np.arange(start, start + n), lengths)
        return pd.DataFrame({"id": ids, "t": rng.integers(0, 3650, len(ids)),
                             "kind": rng.choice([f"k{i}" for i in range(30)], len(ids)),
                             "amount": rng.gamma(2, 50, len(ids)).round(2)})

    o, s, c = make(n_original, 1, 0), make(n_original // 2, 2, 10**7), make(n_original // 2, 3, 2 * 10**7)
    print(f"\nscale: {len(o)} / {len(s)} / {len(c)} events (original / synthetic / control)")
    t = time.perf_counter()
    data = prepare_entities(o, s, c, entity_key="id", sequence_key="t")
    print(f"prepare_entities {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    run = build_entity_run(data)
    print(f"build_entity_run {time.perf_counter() - t:.1f} s (entity table {run.entities.original.shape})")
    steps = {"entity_copies": lambda: whole_sequence_copies(run),
             "subsequence_copies": lambda: subsequence_copies_of(run),
             "sequence_length": lambda: F.length_score(run, "synthetic"),
             "inter_event_time": lambda: F.gap_score(run, "synthetic"),
             "category_shares": lambda: F.share_score(run, "synthetic"),
             "transitions": lambda: F.transition_score(run, "synthetic")}
    for name, step in steps.items():
        t = time.perf_counter()
        step()
        print(f"{name} {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    if "--scale" in sys.argv:
        scale()
    else:
        main()
        calibration()
