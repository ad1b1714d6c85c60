"""Facades with the APIs of other toolkits: PETsARD's ``Evaluator`` and SynEval's ``PrivacyEvaluator``."""

from .petsard.evaluator import Evaluator, EvaluatorBase
from .syneval import PrivacyEvaluator

__all__ = ["Evaluator", "EvaluatorBase", "PrivacyEvaluator"]
