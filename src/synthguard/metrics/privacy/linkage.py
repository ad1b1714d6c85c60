"""``qi_linkage``: a known person's quasi-identifiers linked to their sensitive values by a release row.

An intruder knows a person's quasi-identifiers (age, sex, postcode...). When the person is the only
real record with those values and the release holds a row with the same quasi-identifiers *and* the
person's sensitive values, the release links the person to their secret, whatever its other cells
say: the leak an anonymiser makes when it keeps the quasi-identifiers and the sensitive columns of a
record and perturbs the rest, which copy tests cannot see.

The test flags a training or control record when it is unique on the quasi-identifiers among all
real records (training and control pooled, label-free) and the release holds a row equal to it on
the quasi-identifiers and the sensitive columns; training records against control records, the same
release. Cells compare by exact value (missing equal to missing). Everything is asked of the run's
backend (:class:`~synthguard.engine.backend.Backend`: key lookups for the flags, a broadcast join of
the leak rows' keys for the leak responses), so the test runs in one process or on a Dask cluster
with the same numbers.
"""

from __future__ import annotations

import numpy as np

from ...core.results import Baseline, Evidence, LeakResponse, MetricResult, RecordFlags, RowPairs
from ...engine.backend import Backend, unique_matches
from ...errors import MetricError
from ...registry import Context, Param, RecordsCard, register
from ...stats import difference_ci, wilson_interval
from .._leakrows import family_eligible, family_status, leak_sets, response, row_families

__all__ = ["qi_linkage"]


def _unique_hit(data: Backend, qis: list[str], cols: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per pooled real record (training, then control; canonical order): is it the only real record
    with its quasi-identifiers, and does a release row equal it on ``cols`` (quasi-identifiers and
    sensitive columns)? Two key lookups of the backend, in one process or on a cluster."""
    lookups = {"qi": (qis, ("original", "control")), "release": (cols, ("synthetic",))}
    got = [data.key_rows(role, lookups).flags(unique=lambda f: f["qi"] == 1,
                                              hit=lambda f: f["release"] > 0)
           for role in ("original", "control")]
    return (np.concatenate([g["unique"] for g in got]), np.concatenate([g["hit"] for g in got]))


def _leak_responses(ctx: Context, cols: list[str], unique: np.ndarray) -> dict[str, LeakResponse]:
    """Per leak family: the pooled real record each leak row equals on ``cols`` when that record is
    unique on its quasi-identifiers (then it is unique on ``cols`` too, so the backend's broadcast
    join of the leak rows' keys, :meth:`~synthguard.engine.backend.Backend.key_matches`, finds it),
    raised to score 1: the flags a re-run with those rows in the release would give."""
    families = row_families(ctx)
    sets = leak_sets(ctx)
    got = ctx.data.key_matches([sets[f].rows for f in families], cols, ("original", "control"))
    out = {}
    for family, (rows, target) in zip(families, got, strict=True):
        keep = unique[target]
        resp = response(ctx, family, (rows[keep], target[keep], np.ones(int(keep.sum()))))
        if resp is not None:
            out[family] = resp
    return out


def _linked_rows(ctx: Context, cols: list[str], unique: np.ndarray) -> RowPairs:
    """The release rows behind the flags: each release row equal on ``cols`` to a real record
    unique on its quasi-identifiers, with that record (from the exact-row ids the key lookups used;
    on a cluster the backend's ids, one number per row, grouping the rows as one process does)."""
    ids = ctx.data.row_ids(cols)
    pooled = np.concatenate([ids["original"], ids["control"]])
    ((rows, target),) = unique_matches(pooled, [ids["synthetic"]])
    keep = unique[target]
    return RowPairs(target[keep], rows[keep], ids["synthetic"].size,
                    tie="equal on its quasi-identifiers and sensitive values")


def _roles(ctx: Context) -> tuple[list[str], list[str]]:
    schema = ctx.tables.schema
    qis = [c for c in schema.quasi_identifiers if c in schema.columns]
    sens = [c for c in schema.sensitive if c in schema.columns and c not in qis]
    if not qis or not sens:
        raise MetricError("qi_linkage needs declared quasi-identifiers and sensitive columns: add "
                          "'quasi_identifiers' and 'sensitive' to the metadata")
    return qis, sens


@register(
    "qi_linkage", family="privacy", direction="lower is safer",
    needs=("original", "synthetic", "control"),
    params=[Param("top_n", 20, "how many linked training rows to list in records", "positive int"),
            Param("confidence_level", 0.95, "level of the intervals", "probability")],
    thresholds={"medium": 0.01, "high": 0.05},
    description="share of training records unique on their quasi-identifiers whose quasi-identifiers "
                "and sensitive values a release row carries together, against control records",
    # a quasi-identifier-unique person's identifiers with their secret in a release row also say
    # the person was a training record: the test counts under presence too
    also=("singling_out", "inference", "presence"),
    risk="linkability",
    knowledge="a person's quasi-identifiers; looks for a release row with the same values and reads "
              "the person's sensitive values from it",
    sees=("exact", "rare"),
    presets=("privacy", "full"),
    order=135,
    backend="any",
    records=RecordsCard(meaning="a training record whose quasi-identifiers and sensitive values a "
                                "release row carries"),
    explainer=("An intruder who knows a person's quasi-identifiers looks for a release row with the "
               "same values. When the person is the only real record with them and the row also "
               "carries the person's sensitive values, the release links the person to their secret. "
               "The test counts such training records against held-out people; it sees releases that "
               "keep the quasi-identifiers and the sensitive columns of records and change the rest."))
def qi_linkage(ctx: Context, *, top_n: int = 20, confidence_level: float = 0.95) -> MetricResult:
    """Records unique on their quasi-identifiers linked to their sensitive values by a release row.

    Parameters
    ----------
    ctx : Context
        The evaluation context (needs a control table and declared quasi-identifiers and sensitive
        columns).
    top_n : int
        Number of linked training rows listed in ``records``.
    confidence_level : float
        Level of the intervals.

    Returns
    -------
    MetricResult
        ``value`` = share of training records linked; ``baseline`` = the same share of control
        records. Details: ``quasi_identifiers``, ``sensitive``, ``qi_unique_share``.

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.registry import Context
    >>> o = pd.DataFrame({"age": [30, 40, 50, 60], "sex": list("fmfm"), "dx": list("abab"),
    ...                   "x": [1, 2, 3, 4]})
    >>> c = pd.DataFrame({"age": [31, 41], "sex": list("fm"), "dx": list("aa"), "x": [5, 6]})
    >>> s = pd.DataFrame({"age": [30, 99], "sex": ["f", "m"], "dx": ["a", "b"], "x": [9, 9]})
    >>> meta = {"quasi_identifiers": ["age", "sex"], "sensitive": ["dx"]}
    >>> r = qi_linkage(Context.from_frames(o, s, c, meta).for_metric(qi_linkage.spec))
    >>> r.value, r.baseline.value
    (0.25, 0.0)
    """
    data = ctx.data
    if not ctx.tables.has_control or data.n_rows("control") == 0:
        raise MetricError("qi_linkage needs control rows (real records the generator never saw)")
    qis, sens = _roles(ctx)
    cols = qis + sens
    n_o = data.n_rows("original")
    unique, hit = _unique_hit(data, qis, cols)
    flag = unique & hit
    flags = RecordFlags(flag[:n_o], flag[n_o:], scores=flag.astype(float),
                        leaks=_leak_responses(ctx, cols, unique), families=family_status(ctx),
                        eligible=family_eligible(ctx), pairs=_linked_rows(ctx, cols, unique))
    cl = float(confidence_level)
    evidence = Evidence.from_flags(
        "share of records unique on their quasi-identifiers among the real records whose "
        "quasi-identifiers and sensitive values a release row carries", flags, sees=("exact", "rare"),
        risk="linkability", baseline="control rows: real people the generator never saw, against the "
                                     "same release", confidence_level=cl,
        note=f"quasi-identifiers {qis}; sensitive {sens}; {100 * unique[:n_o].mean():.1f} % of the "
             "training records are unique on the quasi-identifiers (only they can be linked)")
    k_m, k_c = int(flag[:n_o].sum()), int(flag[n_o:].sum())
    n_c = int(flag.size - n_o)
    excess = difference_ci(k_m, n_o, k_c, n_c, cl)
    records = [{"original_row": int(i)} for i in np.flatnonzero(flag[:n_o])[:top_n]]
    details = {"quasi_identifiers": qis, "sensitive": sens,
               "qi_unique_share": float(unique[:n_o].mean()), "difference_to_baseline": excess}
    return MetricResult("qi_linkage", "privacy", k_m / n_o, "lower is safer",
                        Baseline(k_c / n_c, "share of control records linked by the same release"),
                        wilson_interval(k_m, n_o, cl), n_o, "not assessed", None, details, records,
                        evidence=evidence)
