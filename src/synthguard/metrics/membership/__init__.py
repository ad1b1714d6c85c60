"""The membership-attack ensemble (``membership_attacks``): no-box attacks with a reference sample.

:mod:`.attacks` scores records (DOMIAS, DCR-Diff, data plagiarism index, Gen-LRA, a classifier, a
near-copy score and the closest distance); :mod:`.ensemble` is the registered metric that tests
them jointly (label-permutation max-T), bounds epsilon from the best one and lists the most exposed
records. See ``docs/attacks.md``.
"""

from .attacks import ATTACKS, AttackScores, attack_scores

__all__ = ["ATTACKS", "AttackScores", "attack_scores"]
