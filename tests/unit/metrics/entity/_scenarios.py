"""Releases built from the NAFLD cohort sample (``data/nafld_*.csv``) for the entity-level tests:
entities split into original / control / fresh, then a release of fresh entities, one where 5 % of
the training entities are whole copies under new ids, and one where 5 % of training persons' first
events are copied and continued with another (fresh) person's events."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path(__file__).parent / "data"


def load_nafld() -> tuple[pd.DataFrame, pd.DataFrame]:
    """(persons, events) of the bundled sample: 4,500 persons, 12,237 events."""
    return pd.read_csv(DATA / "nafld_persons.csv"), pd.read_csv(DATA / "nafld_events.csv")


def split(seed: int = 0, shares: tuple[float, float] = (0.5, 0.25)) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """``{role: (persons, events)}`` for original / control / fresh, split by person."""
    persons, events = load_nafld()
    ids = np.random.default_rng(seed).permutation(persons["id"].to_numpy())
    a = int(shares[0] * len(ids))
    b = a + int(shares[1] * len(ids))
    out = {}
    for role, part in (("original", ids[:a]), ("control", ids[a:b]), ("fresh", ids[b:])):
        out[role] = (persons[persons["id"].isin(part)].reset_index(drop=True),
                     events[events["id"].isin(part)].reset_index(drop=True))
    return out


def whole_copies(parts: dict, share: float = 0.05, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """Fresh release in which ``share`` of the training entities appear whole under new ids
    (replacing as many fresh entities). Returns (persons, events, copied training ids)."""
    rng = np.random.default_rng(seed)
    op, oe = parts["original"]
    fp, fe = parts["fresh"]
    k = int(round(share * len(op)))
    src = rng.choice(op["id"].to_numpy(), k, replace=False)
    drop = rng.choice(fp["id"].to_numpy(), k, replace=False)
    new_ids = 10_000_000 + np.arange(k)
    mapping = dict(zip(src, new_ids, strict=True))
    cp = op[op["id"].isin(src)].assign(id=lambda d: d["id"].map(mapping))
    ce = oe[oe["id"].isin(src)].assign(id=lambda d: d["id"].map(mapping))
    persons = pd.concat([fp[~fp["id"].isin(drop)], cp], ignore_index=True)
    events = pd.concat([fe[~fe["id"].isin(drop)], ce], ignore_index=True)
    return persons, events, src


def prefix_copies(parts: dict, share: float = 0.05, n_first: int = 3, seed: int = 2, reanchor: bool = True
                  ) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """Fresh release in which, for ``share`` of the training persons (with more than ``n_first``
    events), a synthetic person starts with that person's first ``n_first`` events and continues
    with the later events of a fresh person (shifted to follow); the context is the fresh person's.
    With ``reanchor`` the copied events keep their types and the gaps between them but start on
    the fresh person's first day (the generator memorised the pattern, not the calendar); without
    it they keep their days. Returns (persons, events, training ids whose prefix was copied)."""
    rng = np.random.default_rng(seed)
    op, oe = parts["original"]
    fp, fe = parts["fresh"]
    oe = oe.sort_values(["id", "days", "event"], kind="mergesort")
    fe = fe.sort_values(["id", "days", "event"], kind="mergesort")
    olen = oe.groupby("id").size()
    flen = fe.groupby("id").size()
    k = int(round(share * len(op)))
    src = rng.choice(olen.index[olen > n_first].to_numpy(), k, replace=False)
    host = rng.choice(flen.index[flen > n_first].to_numpy(), k, replace=False)
    opos = oe.groupby("id").cumcount()
    fpos = fe.groupby("id").cumcount()
    head = oe[oe["id"].isin(src) & (opos < n_first)].copy()
    head["id"] = head["id"].map(dict(zip(src, host, strict=True)))
    if reanchor:
        start_src = head.groupby("id")["days"].min()
        start_host = fe[fe["id"].isin(host)].groupby("id")["days"].min()
        head["days"] = head["days"].to_numpy() + (start_host - start_src).reindex(head["id"]).to_numpy()
    tail = fe[fe["id"].isin(host) & (fpos >= n_first)].copy()
    last_head = head.groupby("id")["days"].max()
    first_tail = tail.groupby("id")["days"].min()
    shift = (last_head - first_tail + 30).reindex(tail["id"]).to_numpy()
    tail["days"] = tail["days"].to_numpy() + shift
    events = pd.concat([fe[~fe["id"].isin(host)], head, tail], ignore_index=True)
    return fp.copy(), events, src


def run_kwargs(parts: dict, persons: pd.DataFrame, events: pd.DataFrame) -> dict:
    """Keyword arguments of :func:`synthguard.evaluate` for a release (persons, events)."""
    return {"original": parts["original"][1], "synthetic": events, "control": parts["control"][1],
            "entity_key": "id", "sequence_key": "days", "original_context": parts["original"][0],
            "synthetic_context": persons, "control_context": parts["control"][0]}
