"""The joint test's detection limit by injection (``stats/maxt.py``)."""

import numpy as np

from synthguard.stats.maxt import injection_limit


def test_injected_leak_never_flags_more_members_than_a_relabelling_leaves_unflagged():
    # 8 training and 8 control records, 11 of the 16 flagged: in a relabelling that puts 7 flags
    # on the members, a leak of every training record can flag one more, not the 8 the observed
    # flags would count (which made Fisher's counts impossible and raised before)
    member = [np.array([1, 1, 1, 0, 0, 0, 0, 0], bool)]
    non_member = [np.array([1, 1, 1, 1, 1, 1, 1, 1], bool)]
    seen = []

    def ruled_out(j, k1, n1, k2, n2):  # the verdict computes intervals from these counts
        seen.append((k1, n1, k2, n2))
        return False

    out = injection_limit(member, non_member, [np.ones(8, bool)], [1.0], 0.5, reps=20, seed=0,
                          ruled_out=ruled_out)
    assert seen and all(0 <= k1 <= n1 and 0 <= k2 <= n2 for k1, n1, k2, n2 in seen)
    assert out["k"] is None or 1 <= out["k"] <= 8


def test_injection_limit_grows_with_a_noisier_control():
    quiet = injection_limit([np.zeros(400, bool)], [np.zeros(400, bool)], [np.ones(400, bool)],
                            [1.0], 0.05, reps=20, seed=0)
    noisy = injection_limit([np.zeros(400, bool)], [np.arange(400) % 5 == 0], [np.ones(400, bool)],
                            [1.0], 0.05, reps=20, seed=0)
    assert quiet["k"] < noisy["k"]
