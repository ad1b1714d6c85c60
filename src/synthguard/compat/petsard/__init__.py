"""PETsARD 1.10 drop-in: the ``Evaluator`` facade, its frames and the YAML runner.

``synthguard.compat.petsard.Evaluator`` and ``EvaluatorBase`` are PETsARD's evaluator API
(:mod:`.evaluator`); :func:`run_petsard_yaml` runs a PETsARD YAML experiment (:mod:`.yaml_runner`).
"""

from .evaluator import Evaluator, EvaluatorBase, petsard_metadata
from .yaml_runner import PetsardRunner, RunResult, load_yaml, petsard_split, run_petsard_yaml

__all__ = ["Evaluator", "EvaluatorBase", "PetsardRunner", "RunResult", "load_yaml", "petsard_metadata",
           "petsard_split", "run_petsard_yaml"]
