"""Facades with the APIs of other toolkits: PETsARD's ``Evaluator`` and SynEval's ``PrivacyEvaluator``.

They are imported when first asked for, so that ``from synthguard.compat.anonymeter import ...``
does not load the PETsARD and SynEval adapters it does not use.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Evaluator", "EvaluatorBase", "PrivacyEvaluator"]

_WHERE = {"Evaluator": ".petsard.evaluator", "EvaluatorBase": ".petsard.evaluator",
          "PrivacyEvaluator": ".syneval"}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name], __name__), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
