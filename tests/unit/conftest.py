"""Fixtures of the user-facing layer: stand-in metrics that carry every kind of chart data.

They are registered for one test and removed afterwards, so the rest of the suite never sees them.
They let these tests exercise the facades, presets, HTML charts and cache whatever metric families
are installed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard import registry
from synthguard.core.results import Baseline, Chart, MetricResult, level_from_thresholds
from synthguard.errors import MetricError
from synthguard.registry import Param, register

CALLS: dict[str, int] = {}


def _count(name: str) -> None:
    CALLS[name] = CALLS.get(name, 0) + 1


def _install() -> list[str]:
    names = []

    @register("uitest_distance", family="privacy", direction="higher is safer", default=False,
              optional_needs=("control",), thresholds={"medium": 0.9, "high": 0.5},
              params=[Param("percentile", 5.0, "percentile", kind=float)],
              description="Stand-in: 5th percentile distance of synthetic rows to the original.")
    def uitest_distance(ctx, *, percentile=5.0):
        _count("uitest_distance")
        rng = ctx.rng("d")
        syn = rng.gamma(2.0, 0.05, 400)
        ctl = rng.gamma(2.5, 0.05, 400)
        edges = np.linspace(0, 0.5, 21)
        value = float(np.percentile(syn, percentile) / np.percentile(ctl, percentile))
        hist = {"edges": edges.tolist(), "synthetic": np.histogram(syn, edges)[0].tolist(),
                "control": np.histogram(ctl, edges)[0].tolist()}
        return MetricResult("uitest_distance", "privacy", value, "higher is safer",
                            baseline=Baseline(1.0, "control vs original"), ci=(value - 0.1, value + 0.1),
                            n=400, risk_level=level_from_thresholds(value, ctx.thresholds, "higher is safer"),
                            details={"histogram": hist, "percentile": percentile},
                            records=[{"row": int(i), "distance": float(syn[i]), "age": 40 + int(i)}
                                     for i in np.argsort(syn)[:5]],
                            charts=(Chart.histogram(hist, "distance to closest record"),))
    names.append("uitest_distance")

    @register("uitest_attack", family="attacks", direction="lower is safer", default=False,
              thresholds={"medium": 0.6, "high": 0.75}, aliases=("uitest_mia",),
              description="Stand-in: AUC of an attack telling members from non-members.")
    def uitest_attack(ctx):
        _count("uitest_attack")
        fpr = np.linspace(0, 1, 11)
        tpr = np.sqrt(fpr)
        return MetricResult("uitest_attack", "attacks", 0.8, "lower is safer",
                            baseline=Baseline(0.5, "random guess"), ci=(0.75, 0.85), n=200,
                            risk_level=level_from_thresholds(0.8, ctx.thresholds, "lower is safer"),
                            details={"roc_curve": np.column_stack([fpr, tpr]).tolist(), "auc": 0.8},
                            charts=(Chart.roc(np.column_stack([fpr, tpr]), 0.8),))
    names.append("uitest_attack")

    @register("uitest_quality", family="fidelity", direction="higher is better", default=False,
              description="Stand-in: mean column-shape similarity.")
    def uitest_quality(ctx):
        _count("uitest_quality")
        cols = list(ctx.tables.original.columns)
        table = [{"column": c, "metric": "KSComplement", "score": 0.5 + 0.05 * i} for i, c in enumerate(cols)]
        return MetricResult("uitest_quality", "fidelity", 0.7, "higher is better",
                            baseline=Baseline(None, "no baseline"), risk_level="unknown",
                            details={"column_shapes_table": table, "column_shapes": 0.7,
                                     "column_pair_trends": 0.6,
                                     "column_pair_trends_table": [{"column_1": cols[0], "column_2": cols[1],
                                                                   "metric": "CorrelationSimilarity",
                                                                   "score": 0.9}]},
                            charts=(Chart("bars", "per-column fidelity (column shapes)",
                                          "score (1 = same distribution)",
                                          [(r["column"], r["score"]) for r in table], max=1.0,
                                          colour="#009E73"),))
    names.append("uitest_quality")

    @register("uitest_distortion", family="distortion", direction="higher is better", default=False,
              description="Stand-in: distortion score 1-100.")
    def uitest_distortion(ctx):
        _count("uitest_distortion")
        cols = [{"column": c, "sdtype": "numerical", "distance": 0.1 * (i + 1), "weight": 1.0}
                for i, c in enumerate(ctx.tables.original.columns)]
        return MetricResult("uitest_distortion", "distortion", 42.0, "higher is better",
                            details={"columns": cols},
                            charts=(Chart("bars", "distortion by column", "distance",
                                          [(r["column"], r["distance"]) for r in cols], max=1.0,
                                          colour="#CC79A7"),))
    names.append("uitest_distortion")

    @register("uitest_needs_control", family="privacy", direction="lower is safer", default=False,
              needs=("original", "synthetic", "control"), description="Stand-in needing control.")
    def uitest_needs_control(ctx):
        _count("uitest_needs_control")
        return MetricResult("uitest_needs_control", "privacy", 0.1, "lower is safer", risk_level="low")
    names.append("uitest_needs_control")

    @register("uitest_cannot", family="text", direction="lower is safer", default=False,
              description="Stand-in that cannot run.")
    def uitest_cannot(ctx):
        _count("uitest_cannot")
        raise MetricError("no text column: declare one with sdtype 'text' in the metadata")
    names.append("uitest_cannot")
    return names


@pytest.fixture
def fake_metrics():
    """Register the stand-in metrics for one test; remove them afterwards."""
    CALLS.clear()
    names = _install()
    try:
        yield CALLS
    finally:
        for n in names:
            spec = registry._REGISTRY.pop(n, None)
            if spec is not None:
                for a in spec.aliases:
                    registry._ALIASES.pop(a, None)


FAKE_ALL = ["uitest_distance", "uitest_attack", "uitest_quality", "uitest_distortion",
            "uitest_needs_control", "uitest_cannot"]


def _wide_frames(n: int, p: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """original, synthetic (noisier; every 7th column shuffled), control: p mixed columns."""
    def table(seed: int, noise: float) -> pd.DataFrame:
        rng = np.random.default_rng(seed)
        z = rng.normal(size=(n, 2))
        cols: dict[str, object] = {}
        for j in range(p):
            lat = np.cos(j) * z[:, 0] + np.sin(j) * z[:, 1] + rng.normal(0, 0.6 + noise, n)
            if j % 3 == 0:
                cols[f"num_{j:03d}"] = np.round(50 + 10 * lat, 1)
            elif j % 3 == 1:
                cols[f"cat_{j:03d}"] = np.array(["a", "b", "c", "d"], dtype=object)[
                    np.digitize(lat, [-0.8, 0.0, 0.8])]
            else:
                cols[f"date_{j:03d}"] = pd.Timestamp("2020-01-01") + pd.to_timedelta(
                    np.round(100 * lat).astype(int), unit="D")
        return pd.DataFrame(cols)

    syn = table(1, 0.3)
    rng = np.random.default_rng(3)
    for c in list(syn.columns)[::7]:
        syn[c] = syn[c].to_numpy()[rng.permutation(n)]
    return table(0, 0.0), syn, table(2, 0.0)


@pytest.fixture
def wide_frames():
    """``wide_frames(n, p)``: original, synthetic (noisier; every 7th column shuffled), control."""
    return _wide_frames


#: The metrics of the calibration reports: the verdict's tests of every risk, and fidelity.
CALIBRATION_METRICS = ["exact_matches", "near_copies", "dcr", "singling_out_univariate",
                       "linkability", "inference", "cap", "accuracy"]


@pytest.fixture(scope="session")
def calibration_reports(shared_data):
    """A safe and a leaky release of nhefs (real people, ../shared/data) split 733 / 733 / 163 with
    ``synthguard.calibration``: the fresh rows as a release (nobody from training: no alarm) and
    the same with 5 % of the training records copied in (reads high).
    ``{"safe": (report, parts, release), "leaky": ...}``; about 1.5 min on a loaded machine."""
    from synthguard import evaluate
    from synthguard.calibration import PUBLIC_TABLE_METADATA, calibration_split, exact_copies

    real = pd.read_csv(shared_data / "nhefs.csv")
    parts = calibration_split(real, 0, (0.45, 0.45, 0.10))
    meta = PUBLIC_TABLE_METADATA["nhefs"]
    releases = {"safe": parts["fresh"],
                "leaky": exact_copies(parts["fresh"], parts["original"], 0.05, seed=0).release}
    return {name: (evaluate(parts["original"], rel, control=parts["control"], metadata=meta,
                            metrics=CALIBRATION_METRICS, seed=0), parts, rel)
            for name, rel in releases.items()}
