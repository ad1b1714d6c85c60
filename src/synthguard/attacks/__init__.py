"""Adversarial auditing: threat models, attacks and scoring (TAPAS-style, seeded and vectorised).

Typical use::

    from synthguard.attacks import (TargetedMIA, AuxiliaryDataKnowledge, BlackBoxKnowledge,
                                    ClosestDistanceMIA)
    from synthguard.generators import GaussianCopula

    tm = TargetedMIA(AuxiliaryDataKnowledge(df, num_training_records=500),
                     BlackBoxKnowledge(GaussianCopula(), 500), targets="auto:3", seed=0)
    for view in tm:                      # one view per target; datasets are shared
        attack = ClosestDistanceMIA("gower").train(view, num_samples=100)
        print(view.test(attack, num_samples=100).metrics()["auc"])
"""

from .audit import ATTACKS, make_attack, run_audit, summary_to_result
from .base import Attack, TrainableThresholdAttack
from .distance import ClosestDistanceAIA, ClosestDistanceMIA, LocalNeighbourhoodAttack
from .features import (
    CorrSetFeature,
    HistSetFeature,
    NaiveSetFeature,
    RandomTargetedQueryFeature,
    SetFeature,
)
from .inference import DensityEstimateMIA, SyntheticPredictorAIA
from .knowledge import (
    AIALabeller,
    AuxiliaryDataKnowledge,
    BlackBoxKnowledge,
    ExactDataKnowledge,
    MIALabeller,
    NoBoxKnowledge,
    UncertainBoxKnowledge,
)
from .scoring import AttackSummary, effective_epsilon, parse_criterion, select_threshold
from .shadow import FeatureBasedSetClassifier, GroundhogAttack, ShadowModellingAttack
from .targets import isolation_scores, select_vulnerable_targets
from .threat_models import TargetedAIA, TargetedMIA, TargetView

__all__ = [
    "AIALabeller", "ATTACKS", "Attack", "AttackSummary", "AuxiliaryDataKnowledge", "BlackBoxKnowledge",
    "ClosestDistanceAIA", "ClosestDistanceMIA", "CorrSetFeature", "DensityEstimateMIA",
    "ExactDataKnowledge", "FeatureBasedSetClassifier", "GroundhogAttack", "HistSetFeature",
    "LocalNeighbourhoodAttack", "MIALabeller", "NaiveSetFeature", "NoBoxKnowledge",
    "RandomTargetedQueryFeature", "SetFeature", "ShadowModellingAttack", "SyntheticPredictorAIA",
    "TargetView", "TargetedAIA", "TargetedMIA", "TrainableThresholdAttack", "UncertainBoxKnowledge",
    "effective_epsilon", "isolation_scores", "make_attack", "parse_criterion", "run_audit",
    "select_threshold", "select_vulnerable_targets", "summary_to_result",
]
