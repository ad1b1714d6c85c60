"""Entity-level figures of docs/entity-level.md on the NAFLD sample (tests/entity/data).

Run from the repository root:  PYTHONPATH=src python benchmarks/entity_level.py
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


if __name__ == "__main__":
    main()
