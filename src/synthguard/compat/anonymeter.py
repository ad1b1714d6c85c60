"""anonymeter 1.x's evaluator API over synthguard's singling-out, linkability and inference metrics.

Change one import and keep the code::

    # from anonymeter.evaluators import SinglingOutEvaluator, LinkabilityEvaluator, InferenceEvaluator
    from synthguard.compat.anonymeter import SinglingOutEvaluator, LinkabilityEvaluator, InferenceEvaluator

    evaluator = SinglingOutEvaluator(ori=ori, syn=syn, control=control, n_attacks=500)
    evaluator.evaluate(mode="univariate")
    risk = evaluator.risk(confidence_level=0.95)      # PrivacyRisk(value, ci)
    res = evaluator.results()                         # EvaluationResults: attack_rate, baseline_rate, ...

This is an adapter: every number comes from :mod:`synthguard.metrics.anonymeter` (one implementation);
this module only maps arguments and shapes the answers as anonymeter does (``PrivacyRisk``,
``SuccessRate``, ``EvaluationResults``, ``RuntimeError`` before ``evaluate()``, ``UserWarning`` when the
attack is no better than the baseline).

Where the numbers differ from anonymeter 1.1.0, on purpose (``docs/compat.md`` rows A1-A13 give the
reason and when each shows):

* **A1 Singling-out control correction.** 1.1.0 counts every query as a success when it fits the
  control-size curve, so its correction is always ``(|ctl|+1)/(|ori|+1)`` and the control rate is
  under-estimated (risk biased upwards). synthguard fits the curve to correctly counted successes
  (anonymeter 1.0.0 semantics), with subsample sizes from n/10 to n; a curve that cannot be fitted falls
  back, with a warning, to an equal-size comparison.
* **A2 Singling-out denominator.** When fewer than ``n_attacks`` queries can be generated, the rates
  use the number generated (1.1.0 divides by ``n_attacks``, counting missing queries as failed attacks).
* **A3 Inference baseline.** 1.1.0 aligns the naive guesses with the targets by index label
  (``reindex_like``), so most of them become missing and the baseline rate collapses; synthguard pairs
  them positionally (1.0.0).
* **A4 Inference ``regression``.** The default ``None`` detects numeric secrets (1.0.0); 1.1.0 defaults
  to ``False`` (exact match).
* **A5 Regression tolerance.** A guess is right when ``|guess - secret| <= 0.05 |guess|``; 1.1.0 divides
  by the signed guess, so any negative guess counts as right.
* **A6/A7 Reproducibility.** ``seed=None`` means seed 0: the same inputs give the same numbers, and
  neighbour ties are broken deterministically (anonymeter draws fresh randomness, its ``seed`` does not
  fix everything, and numba's unstable sort breaks ties). Individual numbers agree with anonymeter's
  within its own run-to-run spread, not bit for bit.
* **A8 Queries.** :meth:`SinglingOutEvaluator.queries` returns pandas query strings (anonymeter 1.0.0's
  form, ``ori.query(q)`` selects the one row), not polars expressions (1.1.0).
* **A9** ``n_attacks`` larger than the data is clipped to the rows available, with a note (anonymeter's
  linkability and inference raise a pandas ``ValueError``). **A11** Multivariate singling out runs on
  datetime columns (1.1.0 crashes).
* **A12** :meth:`InferenceEvaluator.risk_for_groups` reruns the attack on each group's rows.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ..core.results import MetricResult
from ..errors import MetricError
from ..stats import Rate, risk_from_rates, wilson_rate

__all__ = [
    "EvaluationResults",
    "InferenceEvaluator",
    "LinkabilityEvaluator",
    "PrivacyRisk",
    "SinglingOutEvaluator",
    "SuccessRate",
]

_ROW = "__synthguard_row__"


class PrivacyRisk(NamedTuple):
    """A privacy risk and its confidence interval (anonymeter's ``PrivacyRisk``)."""

    value: float
    ci: tuple[float, float]


class SuccessRate(NamedTuple):
    """An attack's success rate: Wilson-score centre and half-width (anonymeter's ``SuccessRate``)."""

    value: float
    error: float

    def to_risk(self) -> PrivacyRisk:
        """The rate as a risk: value and ``value +- error``, clipped to [0, 1]."""
        clip = lambda x: float(min(1.0, max(0.0, x)))  # noqa: E731
        return PrivacyRisk(clip(self.value), (clip(self.value - self.error), clip(self.value + self.error)))


def _rate(r: Rate) -> SuccessRate:
    return SuccessRate(r.value, r.error)


class EvaluationResults:
    """Success rates of the main, naive-baseline and control attacks, and the risk they give.

    Parameters
    ----------
    n_attacks : int or (int, int, int)
        Attacks made; one number for all three attacks, or ``(main, baseline, control)``.
    n_success, n_baseline : int or float
        Successful main and baseline attacks.
    n_control : int or float, optional
        Successful control attacks (may be fractional after the singling-out size correction).
    confidence_level : float
        Confidence level of the Wilson errors (0 gives the bare proportions).

    Warns
    -----
    UserWarning
        When the baseline is as good as the attack (the analysis cannot be trusted).
    """

    def __init__(self, n_attacks: int | tuple[int, int, int], n_success: float, n_baseline: float,
                 n_control: float | None = None, confidence_level: float = 0.95) -> None:
        if isinstance(n_attacks, (int, np.integer)) and not isinstance(n_attacks, bool):
            n_ori = n_base = n_ctl = int(n_attacks)
        elif isinstance(n_attacks, tuple) and len(n_attacks) == 3:
            n_ori, n_base, n_ctl = (int(x) for x in n_attacks)
        else:
            raise ValueError(f"n_attacks must be an integer or a tuple of three integers, got {n_attacks}")
        if not 0.0 <= confidence_level < 1.0:
            raise ValueError(f"Parameter `confidence_level` must be between 0 and 1. Got {confidence_level} "
                             "instead.")
        self.n_attacks_ori, self.n_attacks_baseline, self.n_attacks_control = n_ori, n_base, n_ctl
        self.n_success, self.n_baseline, self.n_control = n_success, n_baseline, n_control
        self.confidence_level = confidence_level
        self._attack = wilson_rate(n_success, n_ori, confidence_level)
        self._baseline = wilson_rate(n_baseline, n_base, confidence_level)
        self._control = (None if n_control is None
                         else wilson_rate(min(n_control, n_ctl), n_ctl, confidence_level))
        self.attack_rate = _rate(self._attack)
        self.baseline_rate = _rate(self._baseline)
        self.control_rate = None if self._control is None else _rate(self._control)
        if self.baseline_rate.value >= self.attack_rate.value:
            warnings.warn("Attack is as good or worse as baseline model. Estimated rates: attack = "
                          f"{self.attack_rate.value}, baseline = {self.baseline_rate.value}. Analysis "
                          "results cannot be trusted.", UserWarning, stacklevel=3)
        if self.control_rate is not None and self.control_rate.value == 1:
            warnings.warn("Success of control attack is 100%. Cannot measure residual privacy risk.",
                          UserWarning, stacklevel=3)

    def risk(self, baseline: bool = False) -> PrivacyRisk:
        """The risk: ``(attack - control) / (1 - control)`` with its propagated error, clipped to [0, 1]
        (the attack rate itself without control; the baseline rate with ``baseline=True``)."""
        if baseline:
            return self.baseline_rate.to_risk()
        if self._control is None:
            return self.attack_rate.to_risk()
        r = risk_from_rates(self._attack, self._control)
        return PrivacyRisk(r.value, (r.ci[0], r.ci[1]))

    def __repr__(self) -> str:
        return (f"EvaluationResults(attack_rate={self.attack_rate}, baseline_rate={self.baseline_rate}, "
                f"control_rate={self.control_rate})")


# ------------------------------------------------------------------------------------------ helpers
def _seed(seed: Any) -> int | None:
    """The facade's seed, checked as every path checks it (a non-negative integer, or None: 0)."""
    from ..registry import validate_seed

    return validate_seed(seed, "seed")


#: the typed tables of the last frames a facade evaluator was given, as one entry ``(key, plain,
#: warnings, last)``, kept while those frames live, so that the evaluators of one script (singling
#: out, linkability, inference on the same three frames) decide the types once. ``plain`` is the
#: typing decision's tables; ``last`` is ``(keep_rows, (tables, encoded))`` of the variant last asked
#: for (the row-numbered tables derived from ``plain``), so one encoded view is held, as when each
#: variant was typed on its own. Read as a slice and replaced whole (both atomic), so evaluators in
#: threads never see half an entry.
_PREPARED: list[tuple[Any, Any, list[Any], tuple[bool, Any]]] = []


def _frames_key(frames: Sequence[pd.DataFrame | None]) -> tuple:
    """The same frame objects with the same content (a frame changed in place between two evaluators
    is typed again)."""
    from ..data.tables import fingerprint_frame

    return tuple(None if f is None else (id(f), len(f), fingerprint_frame(f)) for f in frames)


def _prepared(frames: Sequence[pd.DataFrame | None], keep_rows: bool) -> tuple[Any, Any]:
    """``(tables, encoded)`` of the three frames, typed once per frames; the typing decision's
    warnings are given again on every call, as a fresh decision would give them.

    ``keep_rows`` adds the row number of each row as a numerical column (:data:`_ROW`), to the typed
    tables (:meth:`~synthguard.data.tables.Tables.with_row_numbers`): the same tables as typing the
    frames with that column declared numerical, from the one typing decision of the caller's
    columns.
    """
    import weakref

    from ..data.encoding import EncodedView
    from ..data.tables import prepare_tables

    key = _frames_key(frames)
    held = _PREPARED[:1]
    if held and held[0][0] == key:
        _, plain, caught, last = held[0]
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if last[0] == keep_rows:
            return last[1]
    else:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # anonymeter accepts a control identical to the original (its own tests use one): a warning
            plain = prepare_tables(frames[0], frames[1], frames[2], None, strict_control=False,
                                   canonical_columns=True).in_canonical_order()
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        for f in frames:
            if f is not None:  # the entry goes with the frames it was typed from
                weakref.finalize(f, _forget, key)
    tables = plain.with_row_numbers(_ROW).in_canonical_order() if keep_rows else plain
    value = (tables, EncodedView(tables))
    _PREPARED[:] = [(key, plain, list(caught), (keep_rows, value))]
    return value


def _forget(key: tuple) -> None:
    held = _PREPARED[:1]
    if held and held[0][0] == key:
        _PREPARED.clear()


def _context(ori: pd.DataFrame, syn: pd.DataFrame, control: pd.DataFrame | None, seed: int | None,
             keep_rows: bool = False) -> Any:
    """A synthguard context from the three frames (the caller's frames are not touched).

    ``keep_rows`` adds a row number to every frame so that duplicate rows stay separate records, as in
    anonymeter's linkability and inference (synthguard's own metrics count distinct rows). The typed
    tables are shared by evaluators given the same frames (:func:`_prepared`); each gets its own
    context (seed, memo). anonymeter's API returns the headline only: no verdict, so no evidence
    over every record.
    """
    from ..registry import Context

    tables, encoded = _prepared([ori, syn, control], keep_rows)
    return Context(tables=tables, encoded=encoded, seed=seed or 0, evidence=False)


def _run(ctx: Any, name: str, **params: Any) -> MetricResult:
    from ..registry import get_metric
    from ..run.executor import run_metric

    spec = get_metric(name)
    return run_metric(spec, ctx.for_metric(spec), spec.resolve_params(params))


def _notes(res: MetricResult) -> None:
    """Re-emit synthguard's notes (clipped n_attacks, control-size fallback...) as ``UserWarning``;
    the baseline warning is left to :class:`EvaluationResults` (anonymeter's wording, when results are
    read)."""
    notes = res.details.get("notes") if isinstance(res.details, dict) else None
    for part in [*(res.warning or "").split("; "), *(notes or [])]:
        if part and not any(t in part for t in ("no better than the naive baseline", "cannot be trusted",
                                                 "does not mean there is no risk")):
            warnings.warn(part, UserWarning, stacklevel=4)


def _counts(res: MetricResult, confidence_level: float) -> EvaluationResults:
    d = res.details
    n_ctl_att = d.get("n_control_attacks") or d["n_attacks"]
    return EvaluationResults((int(d["n_attacks"]), int(d["n_baseline_attacks"]), int(n_ctl_att)),
                             d["n_success"], d["n_baseline"], d.get("n_control"), confidence_level)


def _n_attacks(n_attacks: int | None) -> dict[str, Any]:
    if n_attacks is None:
        return {"max_n_attacks": True}
    if int(n_attacks) < 1:
        raise ValueError(f"n_attacks must be a positive integer or None (every record), got {n_attacks}")
    return {"n_attacks": int(n_attacks)}


def _quote(col: str) -> str:
    return "`" + str(col).replace("`", "``") + "`"


def _literal(v: Any) -> str:
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else f"float('{v}')"
    return repr(v)


def _spellings(ctx: Any, frames: dict[str, pd.DataFrame | None]) -> dict[str, pd.DataFrame]:
    """For each column whose values the typing decision rewrote (``yes`` read as ``True``, padded
    text trimmed...): the distinct ``(typed, raw)`` pairs of the three frames, so that a query can
    name the caller's own spellings and select rows of the caller's frames."""
    out: dict[str, pd.DataFrame] = {}
    numbers = ctx.tables.row_numbers or {}

    def raw_of(role: str, frame: pd.DataFrame, col: str) -> np.ndarray:
        """The caller's values in the run's (canonical) row order: typed row i is input row
        ``row_numbers[role][i]``."""
        raw = frame[col].to_numpy(dtype=object)
        nums = numbers.get(role)
        return raw if nums is None else raw[np.asarray(nums, dtype=np.int64)]

    for col in ctx.tables.notes:  # columns the typing decision normalised
        parts = [pd.DataFrame({"typed": ctx.tables.get(role)[col].to_numpy(dtype=object),
                               "raw": raw_of(role, frame, col)})
                 for role, frame in frames.items()
                 if frame is not None and role in ctx.tables.roles and col in frame.columns]
        if parts:
            out[col] = pd.concat(parts, ignore_index=True).dropna().drop_duplicates()
    return out


def _pandas_query(predicates: Sequence[Sequence[Any]], spellings: dict[str, pd.DataFrame] | None = None) -> str:
    """``[[column, op, value], ...]`` as a pandas ``DataFrame.query`` string (backtick-quoted names);
    an equality on a column in ``spellings`` names the caller's spellings of the value."""
    parts = []
    for col, op, val in predicates:
        c = _quote(col)
        pairs = (spellings or {}).get(col)
        alts = [] if pairs is None or op != "==" else list(pairs["raw"][pairs["typed"] == val])
        if op == "is null":
            parts.append(f"{c} != {c}")       # only a missing value differs from itself
        elif op == "is not null":
            parts.append(f"{c} == {c}")
        elif len(alts) > 1:
            parts.append(f"{c} in [{', '.join(_literal(v) for v in alts)}]")
        else:
            parts.append(f"{c} {op} {_literal(alts[0] if alts else val)}")
    return " & ".join(parts)


# ------------------------------------------------------------------------------------------ evaluators
class SinglingOutEvaluator:
    """Singling-out risk (anonymeter's ``SinglingOutEvaluator``): queries built from the synthetic
    rows that isolate one synthetic row, scored on the original and (optionally) the control rows.

    Parameters
    ----------
    ori, syn : DataFrame
        Original (training) rows and the synthetic release.
    n_attacks : int or None
        Queries to generate (``None``: as many as the original has distinct rows).
    n_cols : int
        Columns per multivariate query.
    control : DataFrame, optional
        Real rows not used for training; the risk is then residual.
    max_attempts : int or None
        Cap on multivariate query-generation attempts (``None``: no cap).
    seed : int, optional
        Seed of every random draw (``None`` = 0).
    """

    def __init__(self, ori: pd.DataFrame, syn: pd.DataFrame, n_attacks: int | None = 500, n_cols: int = 3,
                 control: pd.DataFrame | None = None, max_attempts: int | None = 10000000,
                 seed: int | None = None) -> None:
        self._ori, self._syn, self._control = ori, syn, control
        self._n_attacks = n_attacks
        self._n_cols = n_cols
        self._max_attempts = max_attempts
        self._seed = _seed(seed)
        self._result: MetricResult | None = None
        self._queries: list[str] = []
        self._evaluated = False

    def evaluate(self, mode: str = "multivariate") -> SinglingOutEvaluator:
        """Run the attack (``mode`` ``"multivariate"`` or ``"univariate"``); returns ``self``."""
        if mode not in ("multivariate", "univariate"):
            raise ValueError(f"mode must be either 'multivariate' or 'univariate', got {mode} instead.")
        ctx = _context(self._ori, self._syn, self._control, self._seed)
        params = _n_attacks(self._n_attacks)
        cap = max(int(self._n_attacks or 0), len(self._ori), 1)
        params.update(n_records=cap)
        if mode == "multivariate":
            params.update(n_cols=min(int(self._n_cols), len(self._syn.columns)),
                          max_attempts=int(self._max_attempts) if self._max_attempts is not None else 2**62)
        try:
            self._result = _run(ctx, f"singling_out_{mode}", **params)
        except MetricError as exc:
            if "no query singles out" not in str(exc):
                raise
            # no synthetic row can be singled out: every attack fails (anonymeter's risk is 0 too)
            warnings.warn(f"Attack `{mode}` could generate only 0 singling out queries: {exc}", UserWarning,
                          stacklevel=2)
            self._result = None
            self._empty = int(params.get("n_attacks", max(len(self._ori), 1)))
        if self._result is not None:
            _notes(self._result)
        recs = (self._result.records or []) if self._result is not None else []
        spellings = _spellings(ctx, {"original": self._ori, "synthetic": self._syn, "control": self._control})
        self._queries = [_pandas_query(r["predicates"], spellings) for r in recs if "predicates" in r]
        self._evaluated = True
        return self

    def queries(self, baseline: bool = False) -> list[str]:
        """The queries that single out one original row, as pandas ``DataFrame.query`` strings
        (``baseline=True``: the naive queries are not kept, an empty list)."""
        return [] if baseline else list(self._queries)

    def results(self, confidence_level: float = 0.95) -> EvaluationResults:
        """Success rates of the main, baseline and control attacks (``RuntimeError`` before
        :meth:`evaluate`)."""
        if not self._evaluated:
            raise RuntimeError("The singling out evaluator wasn't evaluated yet. Please, run `evaluate()` first.")
        if self._result is None:
            n = self._empty
            return EvaluationResults(n, 0, 0, 0 if self._control is not None else None, confidence_level)
        return _counts(self._result, confidence_level)

    def risk(self, confidence_level: float = 0.95, baseline: bool = False) -> PrivacyRisk:
        """The singling-out risk and its confidence interval."""
        return self.results(confidence_level=confidence_level).risk(baseline=baseline)

    @property
    def metric_result(self) -> MetricResult | None:
        """synthguard's full result (n, CI, notes, records), after :meth:`evaluate`. Without the
        verdict's evidence over every training and control record (``evidence`` is ``None``): the
        drop-in API computes anonymeter's headline only; ``synthguard.evaluate`` states both."""
        return self._result


def _columns(half: Any) -> list[str]:
    if isinstance(half, str):
        return [half]
    if isinstance(half, Iterable):
        return [str(c) for c in half]
    return [str(half)]


class LinkabilityEvaluator:
    """Linkability risk (anonymeter's ``LinkabilityEvaluator``): can the synthetic rows link two sets
    of columns (``aux_cols``) of the same original person?

    Parameters
    ----------
    ori, syn : DataFrame
        Original rows and the synthetic release.
    aux_cols : (columns, columns)
        The columns of the two datasets the attacker wants to link.
    n_attacks : int or None
        Targets (``None``: every original row).
    n_neighbors : int
        Synthetic neighbours looked up per half; :meth:`risk` can re-score with any smaller number.
    control : DataFrame, optional
        Real rows not used for training.
    """

    def __init__(self, ori: pd.DataFrame, syn: pd.DataFrame, aux_cols: Any, n_attacks: int | None = 500,
                 n_neighbors: int = 1, control: pd.DataFrame | None = None, seed: int | None = None) -> None:
        self._ori, self._syn, self._control = ori, syn, control
        self._aux_cols = aux_cols
        self._n_attacks = n_attacks
        self._n_neighbors = int(n_neighbors)
        self._seed = _seed(seed)
        self._ctx: Any = None
        self._by_k: dict[int, MetricResult] = {}
        self._evaluated = False

    def evaluate(self, n_jobs: int = -2) -> LinkabilityEvaluator:
        """Run the attack (``n_jobs`` is accepted for compatibility; synthguard's neighbour search
        is vectorised); returns ``self``."""
        if not isinstance(self._aux_cols, (list, tuple)) or len(self._aux_cols) != 2:
            raise ValueError("aux_cols must be a pair of column lists, e.g. (['age', 'zip'], ['income'])")
        self._ctx = _context(self._ori, self._syn, self._control, self._seed, keep_rows=True)
        self._by_k = {}
        self._evaluated = True
        self._result(self._n_neighbors)
        return self

    def _result(self, k: int) -> MetricResult:
        if k not in self._by_k:
            aux = [_columns(self._aux_cols[0]), _columns(self._aux_cols[1])]
            res = _run(self._ctx, "linkability", aux_cols=aux, n_neighbors=k, n_records=0,
                       **_n_attacks(self._n_attacks))
            _notes(res)
            self._by_k[k] = res
        return self._by_k[k]

    def _k(self, n_neighbors: int | None) -> int:
        if not self._evaluated:
            raise RuntimeError("The linkability evaluator wasn't evaluated yet. Please, run `evaluate()` first.")
        k = self._n_neighbors if n_neighbors is None else int(n_neighbors)
        if k > self._n_neighbors:
            raise ValueError(f"Cannot compute linkability results for `n_neighbors` ({k}) larger than the "
                             f"value used by the attack ({self._n_neighbors}).")
        if k < 1:
            raise ValueError(f"n_neighbors must be at least 1, got {k}")
        return k

    def results(self, confidence_level: float = 0.95, n_neighbors: int | None = None) -> EvaluationResults:
        """Success rates for ``n_neighbors`` (at most the number evaluated; default: that number)."""
        return _counts(self._result(self._k(n_neighbors)), confidence_level)

    def risk(self, confidence_level: float = 0.95, baseline: bool = False,
             n_neighbors: int | None = None) -> PrivacyRisk:
        """The linkability risk for ``n_neighbors`` neighbours (``ValueError`` above the number
        evaluated)."""
        return self.results(confidence_level=confidence_level, n_neighbors=n_neighbors).risk(baseline=baseline)


class InferenceEvaluator:
    """Inference risk (anonymeter's ``InferenceEvaluator``): does the nearest synthetic row on
    ``aux_cols`` reveal a target's ``secret``?

    Parameters
    ----------
    ori, syn : DataFrame
        Original rows and the synthetic release.
    aux_cols : list of str
        Columns the attacker knows.
    secret : str
        The column to infer (one name).
    regression : bool or None
        ``True``: numeric guesses within 5 % count as right; ``False``: exact match; ``None`` (default,
        anonymeter 1.0.0): ``True`` for a numerical secret.
    n_attacks : int or None
        Targets (``None``: every original row).
    control : DataFrame, optional
        Real rows not used for training.
    """

    def __init__(self, ori: pd.DataFrame, syn: pd.DataFrame, aux_cols: list[str], secret: str,
                 regression: bool | None = None, n_attacks: int | None = 500,
                 control: pd.DataFrame | None = None, seed: int | None = None) -> None:
        if not isinstance(secret, str):
            raise ValueError("secret must be a single column name")
        self._ori, self._syn, self._control = ori, syn, control
        self._aux_cols = _columns(aux_cols)
        self._secret = secret
        self._regression = regression
        self._n_attacks = n_attacks
        self._seed = _seed(seed)
        self._res: MetricResult | None = None
        self._evaluated = False

    def evaluate(self, n_jobs: int = -2) -> InferenceEvaluator:
        """Run the attack (``n_jobs`` accepted for compatibility); returns ``self``."""
        ori, syn, ctl = self._ori, self._syn, self._control
        aux = list(self._aux_cols)
        if self._secret in aux:
            # anonymeter lets the attacker know the secret itself; synthguard refuses that in aux_cols,
            # so the attacker gets a copy of the column under another name (same distances)
            copy = f"__synthguard_aux_{self._secret}__"
            ori, syn, ctl = (None if f is None else f.assign(**{copy: f[self._secret]}) for f in (ori, syn, ctl))
            aux = [copy if c == self._secret else c for c in aux]
        ctx = _context(ori, syn, ctl, self._seed, keep_rows=True)
        reg = "auto" if self._regression is None else ("true" if self._regression else "false")
        self._res = _run(ctx, "inference", secret=self._secret, aux_cols=aux, regression=reg,
                         n_records=0, **_n_attacks(self._n_attacks))
        self._evaluated = True
        return self

    def results(self, confidence_level: float = 0.95) -> EvaluationResults:
        """Success rates of the main, baseline and control attacks."""
        if not self._evaluated or self._res is None:
            raise RuntimeError("The inference evaluator wasn't evaluated yet. Please, run `evaluate()` first.")
        return _counts(self._res, confidence_level)

    def risk(self, confidence_level: float = 0.95, baseline: bool = False) -> PrivacyRisk:
        """The inference risk and its confidence interval."""
        return self.results(confidence_level=confidence_level).risk(baseline=baseline)

    def risk_for_groups(self, confidence_level: float = 0.95) -> dict[Any, EvaluationResults]:
        """Results per value of the secret (anonymeter 1.1.0): the attack and the control attack rerun on
        the original and control rows holding that value (up to ``n_attacks`` each); the naive baseline
        is the global one, as in anonymeter. One synthguard run per distinct value: meant for
        categorical secrets."""
        base = self.results(confidence_level=confidence_level)
        out: dict[Any, EvaluationResults] = {}
        for group, ori_g in self._ori.groupby(self._secret, sort=True):
            ctl_g = None if self._control is None else self._control[self._control[self._secret] == group]
            if ctl_g is not None and len(ctl_g) == 0:
                ctl_g = None
            sub = InferenceEvaluator(ori_g, self._syn, self._aux_cols, self._secret, self._regression,
                                     self._n_attacks, ctl_g, self._seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = sub.evaluate().results(confidence_level=confidence_level)
                out[group] = EvaluationResults(
                    (r.n_attacks_ori, base.n_attacks_baseline, r.n_attacks_control if ctl_g is not None else 1),
                    r.n_success, base.n_baseline, r.n_control if ctl_g is not None else None, confidence_level)
        return out
