"""Run a threat model against a generator with named attacks and collect a :class:`Report`
(the same JSON shape as ``synthguard evaluate``): one entry per attack and target."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._version import __version__
from ..core.results import Baseline, Chart, MetricResult, level_from_thresholds
from ..data.loading import load_metadata
from ..data.schema import Schema, infer_schema
from ..data.tables import fingerprint_frame
from ..errors import ConfigError, MetricError
from ..report import Report
from ..run.executor import Entry, build_report
from .distance import ClosestDistanceAIA, ClosestDistanceMIA, LocalNeighbourhoodAttack
from .inference import DensityEstimateMIA, SyntheticPredictorAIA
from .knowledge import AuxiliaryDataKnowledge, BlackBoxKnowledge, ExactDataKnowledge
from .scoring import AttackSummary
from .shadow import GroundhogAttack
from .threat_models import TargetedAIA, TargetedMIA

__all__ = ["ATTACKS", "make_attack", "summary_to_result", "run_audit", "AUC_THRESHOLDS"]

AUC_THRESHOLDS = {"medium": 0.6, "high": 0.8}


def _cd(kind: str, distance: str, criterion: Any):
    return (ClosestDistanceMIA if kind == "MIA" else ClosestDistanceAIA)(distance, criterion)


ATTACKS: dict[str, tuple[Callable[[str, str, Any], Any], tuple[str, ...], str]] = {
    "closest_distance": (_cd, ("MIA", "AIA"), "minus the distance from the target to the closest "
                         "synthetic row (AIA: relative distance of the two candidate values)"),
    "local_neighbourhood": (lambda k, d, c: LocalNeighbourhoodAttack(d, criterion=c), ("MIA", "AIA"),
                            "share of synthetic rows near the target"),
    "density": (lambda k, d, c: DensityEstimateMIA(criterion=c), ("MIA",),
                "log-density of the target under a KDE fitted on the synthetic data"),
    "groundhog": (lambda k, d, c: GroundhogAttack(), ("MIA", "AIA"),
                  "random forest over naive, histogram and correlation features of whole datasets"),
    "synthetic_predictor": (lambda k, d, c: SyntheticPredictorAIA(criterion=c), ("AIA",),
                            "classifier trained on the synthetic data predicts the target's value"),
}


def make_attack(name: str, kind: str = "MIA", distance: str = "gower", criterion: Any = "accuracy"):
    """Build a named attack (see :data:`ATTACKS`) for a threat-model kind (``"MIA"``/``"AIA"``)."""
    key = str(name).strip().lower().replace("-", "_")
    if key not in ATTACKS:
        raise ConfigError(f"unknown attack {name!r}: use one of {', '.join(ATTACKS)}")
    factory, kinds, _ = ATTACKS[key]
    if kind.upper() not in kinds:
        raise ConfigError(f"attack {name!r} does not apply to {kind.upper()}: it supports {kinds}")
    attack = factory(kind.upper(), distance, criterion)
    attack.label = key
    return attack


def summary_to_result(summary: AttackSummary, name: str, *, thresholds: Mapping[str, float] | None = None,
                      n_boot: int = 200, seed: int = 0, warnings: Sequence[str] = ()) -> MetricResult:
    """A :class:`MetricResult` for one attack on one target: value = AUC, baseline 0.5."""
    m = summary.metrics(n_boot=n_boot, seed=seed)
    auc = m.pop("auc")
    ci = tuple(m.pop("auc_ci"))
    th = dict(AUC_THRESHOLDS if thresholds is None else thresholds)
    notes = list(warnings)
    if not (m["n_positive"] and m["n_negative"]):
        level = "not meaningful"
        notes.append(f"the test set holds one class only ({m['n_positive']} member(s), "
                     f"{m['n_negative']} non-member(s)): the AUC is undefined and 0.5 is a placeholder; "
                     "draw more targets and test samples")
    elif not np.isfinite(ci[0]) or ci[0] <= 0.5:
        level = "not meaningful"
        notes.append("the attack is no better than random guessing here (the AUC interval includes "
                     "0.5); this does not prove the release is safe")
    else:
        level = level_from_thresholds(auc, th, "lower is safer")
    details = dict(m)
    details["auc"] = auc
    details["thresholds"] = th
    return MetricResult(name=name, family="attacks", value=auc, direction="lower is safer",
                        baseline=Baseline(0.5, "AUC of an attacker that learns nothing (random guess)"),
                        ci=ci, n=int(m["n_test"]), risk_level=level,
                        warning="; ".join(notes) if notes else None, details=details,
                        charts=(Chart.roc(details["roc_curve"], auc),))


def run_audit(data: pd.DataFrame, generator: Any, *, metadata: Any = None, targets: Any = "auto:3",
              attacks: Sequence[str] = ("closest_distance",), kind: str = "mia",
              sensitive: str | None = None, values: Sequence[Any] | None = None,
              knowledge: str = "auxiliary", num_shadow: int = 100, num_test: int = 100,
              num_training_records: int = 500, num_synthetic_records: int | None = None,
              auxiliary_split: float = 0.5, distance: str = "gower", criterion: Any = "accuracy",
              seed: int = 0, n_boot: int = 200, progress: bool = False, n_jobs: int = 1) -> Report:
    """Run a targeted threat model and every named attack on every target.

    Parameters
    ----------
    data : DataFrame
        The population sample (auxiliary knowledge) or the exact training set (exact knowledge).
    generator : object
        Generator, builtin name, callable or command (see :class:`BlackBoxKnowledge`).
    metadata : mapping, optional
        Column sdtypes.
    targets : str or sequence of int
        ``"auto:K"`` or row positions.
    attacks : sequence of str
        Names in :data:`ATTACKS`.
    kind : {"mia", "aia"}
        Threat model.
    sensitive, values : optional
        AIA: the sensitive column and its two candidate values (default: its two most frequent).
    knowledge : {"auxiliary", "exact"}
        Data knowledge.
    num_shadow, num_test : int
        Shadow (training) and test datasets.
    num_training_records, num_synthetic_records : int
        Real dataset size (auxiliary knowledge) and generated rows (default: the real size).
    auxiliary_split : float
        Attacker's share of ``data`` (auxiliary knowledge).
    distance : str
        Distance of the distance attacks.
    criterion : str or tuple
        Threshold criterion of threshold attacks.
    seed : int
        Seed of everything.
    n_boot : int
        Bootstrap resamples of the AUC interval.
    progress : bool
        Progress bar on stderr.
    n_jobs : int
        Parallel generator runs (threads; same results as serial).
    """
    kind = kind.upper()
    if kind not in ("MIA", "AIA"):
        raise ConfigError(f"threat model must be 'mia' or 'aia', got {kind!r}")
    if knowledge == "exact":
        dk = ExactDataKnowledge(data)
    elif knowledge == "auxiliary":
        dk = AuxiliaryDataKnowledge(data, auxiliary_split, num_training_records, seed=seed)
    else:
        raise ConfigError(f"knowledge must be 'auxiliary' or 'exact', got {knowledge!r}")
    n_syn = num_synthetic_records or dk.num_training_records
    gk = BlackBoxKnowledge(generator, n_syn)
    schema = metadata if isinstance(metadata, Schema) else infer_schema(data.reset_index(drop=True),
                                                                         load_metadata(metadata))
    if kind == "MIA":
        tm: Any = TargetedMIA(dk, gk, targets, metadata=schema, seed=seed, n_jobs=n_jobs)
    else:
        if sensitive is None:
            sensitive = (schema.sensitive[0] if schema.sensitive else schema.target)
        if sensitive is None:
            raise ConfigError("AIA needs a sensitive column: pass --sensitive or declare 'sensitive' "
                              "in the metadata")
        if values is None:
            top = data[sensitive].value_counts().index.tolist()[:2]
            if len(top) < 2:
                raise ConfigError(f"sensitive column {sensitive!r} has fewer than two values")
            values = top
        tm = TargetedAIA(dk, gk, targets, sensitive, values, metadata=schema, seed=seed, n_jobs=n_jobs)
    names = [str(a).strip().lower().replace("-", "_") for a in attacks]
    for a in names:
        make_attack(a, kind, distance, criterion)  # validates names before any generator runs
    entries: dict[str, Entry] = {}
    t0 = time.perf_counter()
    tm.generate_training_samples(num_shadow)
    tm.generate_test_samples(num_test)
    gen_seconds = time.perf_counter() - t0
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(tm) * len(names), desc="attacks", leave=False, disable=None)  # none off a TTY
    for view in tm:
        for a in names:
            key = f"{a}@target={view.target_id}"
            params = {"attack": a, "target": view.target_id, "distance": distance,
                      "criterion": list(np.atleast_1d(criterion)) if not isinstance(criterion, str)
                      else criterion}
            t1 = time.perf_counter()
            result, status, reason = None, "ok", None
            try:
                attack = make_attack(a, kind, distance, criterion)
                attack.train(view, num_samples=num_shadow)
                summary = view.test(attack, num_samples=num_test)
                result = summary_to_result(summary, key, n_boot=n_boot, seed=seed,
                                           warnings=tm.warnings)
            except (MetricError, ConfigError) as exc:
                status, reason = "skipped", str(exc)
            entries[key] = Entry(key, key, params, status, reason,
                                 round(time.perf_counter() - t1, 4), result=result)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    header = {
        "synthguard_version": __version__,
        "seed": seed,
        "inputs": {"data": {"rows": int(len(data)), "columns": int(data.shape[1]),
                            "sha256": fingerprint_frame(data.reset_index(drop=True))}},
        "inferred_metadata": tm.schema.inferred(),
        "schema": tm.schema.to_dict(),
        "config": {"command": "attack", "threat_model": f"Targeted{kind}", "knowledge": knowledge,
                   "generator": tm.generator_name, "generator_knowledge": gk.label,
                   "targets": tm.targets.tolist(), "attacks": names, "num_shadow": num_shadow,
                   "num_test": num_test, "num_training_records": dk.num_training_records,
                   "num_synthetic_records": n_syn, "auxiliary_split": auxiliary_split,
                   "distance": distance, "sensitive": sensitive if kind == "AIA" else None,
                   "values": list(values) if kind == "AIA" and values is not None else None,
                   "generator_seconds": round(gen_seconds, 3)},
        "warnings": list(tm.warnings),
    }
    out = build_report(header, entries)  # the verdict with the default rule
    return Report(out.header, out.entries, out.results, out.verdict)
