"""The trio attacks what the owner declared (issue 29.5): inference secrets are the declared sensitive
columns, never a quasi-identifier; the attacker's columns are the quasi-identifiers; without roles the
result says which columns were tried. Linkability links the quasi-identifiers to the rest."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synthguard
from synthguard.calibration import (
    PUBLIC_TABLE_METADATA,
    calibration_split,
    exact_copies,
    near_copies,
)
from synthguard.errors import MetricError
from synthguard.registry import Context, get_metric
from synthguard.run.executor import run_metric


def tables(n: int = 400, seed: int = 0):
    rng = np.random.default_rng(seed)

    def pop(m):
        z = rng.normal(size=m)
        return pd.DataFrame({"age": np.clip(40 + 12 * z, 18, 90).round(),
                             "sex": rng.choice(["F", "M"], m), "zip": rng.choice(list("pqrstuvw"), m),
                             "income": np.exp(10 + 0.5 * z).round(-2), "hiv": rng.random(m) < 0.1,
                             "diag": rng.choice(list("abc"), m)})

    return pop(n), pop(n), pop(n // 2)


def run(name, ori, syn, ctl, metadata=None, **params):
    ctx = Context.from_frames(ori, syn, ctl, metadata, seed=0)
    spec = get_metric(name)
    return run_metric(spec, ctx.for_metric(spec), spec.resolve_params(params))


ROLES = {"quasi_identifiers": ["age", "sex", "zip"], "sensitive": ["diag", "hiv"]}


def test_declared_sensitive_columns_are_exactly_the_secrets_and_qis_the_attackers_columns():
    res = run("inference", *tables(), ROLES, n_attacks=100)
    per = res.details["per_secret"]
    # the run's canonical column order (sorted by name: the input column order changes nothing)
    assert [d["secret_column"] for d in per] == ["diag", "hiv"]
    assert res.details["secrets_tried"] == ["diag", "hiv"]
    assert res.details["secrets_from"] == "the declared sensitive columns"
    assert res.details["secret_column"] in ROLES["sensitive"]
    assert all(d["aux_cols"] == ["age", "sex", "zip"] for d in per)
    assert all("evidence" in d and d["evidence"]["n_member"] == 400 for d in per)


def test_a_quasi_identifier_is_never_a_secret_when_roles_are_declared():
    only_qis = run("inference", *tables(), {"quasi_identifiers": ["age", "sex", "zip"]}, n_attacks=100)
    assert only_qis.details["secrets_tried"] == ["diag", "hiv", "income"]
    both = run("inference", *tables(), {"quasi_identifiers": ["age", "sex", "zip"],
                                        "sensitive": ["sex", "diag"]}, n_attacks=100)
    assert both.details["secrets_tried"] == ["diag"]
    assert any("both quasi-identifier and sensitive" in n for n in both.details["notes"])
    with pytest.raises(MetricError, match="sensitive"):
        run("inference", *tables(), {"quasi_identifiers": ["sex"], "sensitive": ["sex"]})


def test_without_roles_the_result_names_every_column_tried():
    res = run("inference", *tables(), n_attacks=100)
    cols = ["age", "diag", "hiv", "income", "sex", "zip"]  # canonical (sorted) order
    assert res.details["secrets_tried"] == cols
    assert "no quasi-identifiers or sensitive columns declared" in res.details["secrets_from"]
    assert all(c in res.evidence.note for c in cols) and "no quasi-identifiers" in res.evidence.note


def test_linkability_links_the_declared_quasi_identifiers_to_the_rest():
    res = run("linkability", *tables(), ROLES, n_attacks=100)
    assert res.details["aux_cols"] == [["age", "sex", "zip"], ["diag", "hiv", "income"]]
    every = {"quasi_identifiers": ["age", "sex", "zip", "income", "hiv", "diag"]}
    assert run("linkability", *tables(), every, n_attacks=100).details["aux_cols"] == \
        [["age", "diag", "hiv"], ["income", "sex", "zip"]]  # all declared: canonical halves


def _copies_release(name: str, shared):
    """acs12-style release: 30 % of its rows verbatim training rows, 30 % training rows with one
    cell changed, the rest fresh real rows (calibration split, seed 0)."""
    p = calibration_split(pd.read_csv(shared / f"{name}.csv"), 0)
    f, o = p["fresh"], p["original"]
    k = 3 * len(f) // 10
    a = exact_copies(f.iloc[: len(f) - k], o, k / (len(f) - k), seed=0, of="release")
    b = near_copies(f.iloc[len(f) - k:], o, 1.0, seed=0, of="release")
    assert a.n_leaked == b.n_leaked == k
    return p, pd.concat([a.release, b.release], ignore_index=True)


@pytest.mark.parametrize("name", ["acs12", "anes96"])
def test_copies_read_high_on_inference_with_a_declared_secret(shared_data, name):
    p, release = _copies_release(name, shared_data)
    meta = PUBLIC_TABLE_METADATA[name]
    rep = synthguard.evaluate(p["original"], release, control=p["control"], metadata=meta,
                              metrics=["inference", "linkability"], seed=0, retest_columns=0)
    levels = {r.risk: r.level for r in rep.verdict.risks}
    assert levels["inference"] == "high" and levels["linkability"] == "high", levels
    res = rep.result("inference")
    assert res.details["secret_column"] in meta["sensitive"]
    assert sorted(res.details["secrets_tried"]) == sorted(meta["sensitive"])
    assert all(d["secret_column"] in meta["sensitive"] for d in res.details["per_secret"])
