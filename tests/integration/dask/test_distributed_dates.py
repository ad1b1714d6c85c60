"""Datetime columns on a Dask cluster read exactly as in one process (issue #33.5): one format per
column decided from every partition of every table, never partition by partition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate
from synthguard.errors import InputError

from .test_distributed_equality import _entries

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")

COLUMNS = ["State", "Individuals_Affected", "Type_of_Breach", "Location_of_Breached_Information",
           "breach_start", "breach_end"]


def _split(shared_data):
    """hhs_breaches as text (ISO ``breach_start``, ``breach_end`` with blanks, and ``reported``: the
    start written month-first, ``10/16/2009``): original, a control, and a release of 200 other
    rows and 90 verbatim copies. The original is sorted so that its first partition holds only ambiguous
    month-first dates (no field above 12): a partition on its own cannot tell day-first from
    month-first."""
    df = pd.read_csv(shared_data / "hhs_breaches.csv", dtype=str)[COLUMNS]
    df["reported"] = pd.to_datetime(df["breach_start"], format="ISO8601").dt.strftime("%m/%d/%Y")
    idx = np.random.default_rng(0).permutation(len(df))
    orig, ctl, fresh = df.iloc[idx[:400]], df.iloc[idx[400:800]], df.iloc[idx[800:1000]]
    day = orig["reported"].str.split("/").str[1].astype(int)
    orig = orig.iloc[np.argsort((day > 12).to_numpy(), kind="stable")].reset_index(drop=True)
    syn = pd.concat([fresh, orig.iloc[-90:]], ignore_index=True)  # the control stays held out
    return orig, syn, ctl.reset_index(drop=True)


def test_datetime_columns_equal_single_process_on_real_breaches(dask_client, shared_data):
    orig, syn, ctl = _split(shared_data)
    first = orig.iloc[:100]["reported"].str.split("/")
    assert (first.str[0].astype(int) <= 12).all() and (first.str[1].astype(int) <= 12).all()
    # dcr_overfitting_protection: datetimes in exact seconds; whole days, so one process shares dcr's
    # search (days) while the cluster searches in seconds on its own: the same distances;
    # new_row_synthesis: datetimes in days within the tolerance of their range, blanks missing
    metrics = {"exact_matches": {}, "dcr": {"n_boot": 20}, "k_anonymity": {"k": 3},
               "dcr_overfitting_protection": {}, "new_row_synthesis": {}}
    meta = {"quasi_identifiers": ["State", "reported", "Type_of_Breach"]}
    single = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=4)
    dist = evaluate(orig, syn, ctl, meta, metrics=metrics, seed=4, client=dask_client)
    assert single.to_dict()["schema"] == dist.to_dict()["schema"]
    assert {c: s["sdtype"] for c, s in dist.to_dict()["schema"]["columns"].items()
            if c in ("reported", "breach_start")} == {"reported": "datetime", "breach_start": "datetime"}
    for name in metrics:
        assert dist[name]["status"] == "ok", (name, dist[name].get("reason"))
    assert _entries(single, metrics) == _entries(dist, metrics)
    assert single["exact_matches"]["result"]["synthetic_match_rate"]["k"] >= 90
    assert single["new_row_synthesis"]["result"]["num_matched_rows"] >= 90


def test_a_bad_date_in_a_later_partition_is_one_input_error(dask_client, shared_data):
    orig, syn, ctl = _split(shared_data)
    orig.loc[len(orig) - 3, "breach_start"] = "not a date"
    meta = {"columns": {"breach_start": {"sdtype": "datetime"}}}
    with pytest.raises(InputError, match=r"column 'breach_start' is datetime but 1 value\(s\) do not parse.*"
                                         r"'not a date'"):
        evaluate(orig, syn, ctl, meta, metrics={"exact_matches": {}}, client=dask_client)
    with pytest.raises(InputError, match="'not a date'"):  # the same error in one process
        evaluate(orig, syn, ctl, meta, metrics={"exact_matches": {}})


def test_day_first_in_one_table_and_month_first_in_another_is_refused_before_work(dask_client,
                                                                                  shared_data):
    orig, syn, ctl = _split(shared_data)
    parts = syn["reported"].str.split("/")
    syn["reported"] = parts.str[1] + "/" + parts.str[0] + "/" + parts.str[2]  # day-first
    with pytest.raises(InputError, match="mixes day-first dates .* and month-first dates"):
        evaluate(orig, syn, ctl, None, metrics={"exact_matches": {}}, client=dask_client)
