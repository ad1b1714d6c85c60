"""Disclosure metrics with SDMetrics' names and semantics, computed exactly and vectorised.

* :mod:`.cap` - ``cap``, ``zero_cap``, ``generalized_cap`` (correct attribution probability);
* :mod:`.disclosure_protection` - ``disclosure_protection``, ``disclosure_protection_estimate``;
* :mod:`.dcr_protection` - ``dcr_baseline_protection``, ``dcr_overfitting_protection``;
* :mod:`.new_row_synthesis` - ``new_row_synthesis``;
* :mod:`.anonymity` - ``k_anonymity``, ``l_diversity`` on exact equivalence classes.

See ``docs/disclosure.md`` for the definitions and where synthguard differs from SDMetrics 0.32.
"""
