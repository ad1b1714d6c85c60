"""What a call did, for differential tests: the same call made on a reference library and on a
synthguard facade must end the same way (same exception type and message, or the same user
warnings and numbers)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import pytest


def outcome(call: Callable[[], Any]) -> dict[str, Any]:
    """The call's result or its exception ``(type name, message)``, and the user warnings it raised
    (each ``(category, message)`` once, in order: a library may repeat one per table or column)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out: dict[str, Any] = {"result": call()}
        except Exception as exc:  # noqa: BLE001
            out = {"error": (type(exc).__name__, str(exc))}
    seen = []
    for w in caught:
        key = (w.category.__name__, str(w.message))
        if issubclass(w.category, UserWarning) and key not in seen:
            seen.append(key)
    out["warnings"] = seen
    return out


def same_number(a: float, b: float, tol: float = 1e-12) -> bool:
    """Equal within ``tol``, NaN equal to NaN."""
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=tol)


def flat(d: dict[str, Any], pre: str = "") -> dict[str, float]:
    """A nested dict of numbers as ``{"a.b": float}``."""
    out: dict[str, float] = {}
    for k, v in d.items():
        out.update(flat(v, pre + k + ".") if isinstance(v, dict) else {pre + k: float(v)})
    return out


def sdmetrics_pair(name: str, *args: Any, method: str = "compute_breakdown",
                   **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The outcomes of ``name.method(*args, **kwargs)`` on SDMetrics 0.32 (``sdmetrics.single_table``)
    and on ``synthguard.compat.sdmetrics.single_table``; the error and the warnings must be the
    same."""
    import sdmetrics.single_table as oracle

    from synthguard.compat.sdmetrics import single_table as facade

    ref = outcome(lambda: getattr(getattr(oracle, name), method)(*args, **kwargs))
    got = outcome(lambda: getattr(getattr(facade, name), method)(*args, **kwargs))
    assert got.get("error") == ref.get("error")
    assert got["warnings"] == ref["warnings"]
    return ref, got


def same_dcr_baseline(ref: dict[str, Any], got: dict[str, Any]) -> None:
    """DCRBaselineProtection: the synthetic median exactly; the score exactly when the synthetic
    median decides it (0, both random medians being positive). The random rows themselves differ
    on purpose (docs/compat.md S7: drawn by sdtype; S8: seeded)."""
    if "error" in ref:
        return
    r, g = ref["result"], got["result"]
    key = "median_DCR_to_real_data"
    assert same_number(g[key]["synthetic_data"], r[key]["synthetic_data"])
    if r[key]["synthetic_data"] == 0 and min(r[key]["random_data_baseline"], g[key]["random_data_baseline"]) > 0:
        assert same_number(g["score"], r["score"])


def same_breakdown(ref: dict[str, Any], got: dict[str, Any]) -> None:
    """Every number of the two breakdowns equal (same keys)."""
    if "error" in ref:
        return
    r, g = flat(ref["result"]), flat(got["result"])
    assert r.keys() == g.keys()
    assert all(same_number(g[k], r[k]) for k in r), (r, g)
