"""The entity data model: validation errors, SDV metadata forms, and the sequence/window identities
against a brute-force reading."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import synthguard as sg
from synthguard.data.entities import build_entity_run, prepare_entities
from synthguard.errors import ConfigError, InputError
from synthguard.metrics.entity.copies import subsequence_copies_of, whole_sequence_copies


def _events(n_people: int, seed: int, start: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 7, n_people)
    ids = np.repeat(np.arange(start, start + n_people), lengths)
    ev = pd.DataFrame({"pid": ids, "t": rng.integers(0, 1000, len(ids)),
                       "kind": rng.choice(list("abcd"), len(ids)), "amount": rng.integers(1, 50, len(ids)).astype(float)})
    ctx = pd.DataFrame({"pid": np.arange(start, start + n_people), "age": rng.integers(20, 80, n_people),
                        "sex": rng.choice(["f", "m"], n_people)})
    return ev, ctx


@pytest.fixture()
def trio():
    o, oc = _events(60, 1, 0)
    s, sc = _events(40, 2, 1000)
    c, cc = _events(40, 3, 2000)
    return o, oc, s, sc, c, cc


def test_orphan_rows(trio):
    o, oc, s, sc, c, cc = trio
    with pytest.raises(InputError, match="orphan rows.*pid=.*add their parents"):
        prepare_entities(o, s, c, entity_key="pid", original_context=oc.iloc[1:], synthetic_context=sc,
                         control_context=cc)


def test_keys_shared_by_original_and_control(trio):
    o, oc, s, sc, c, cc = trio
    c = pd.concat([c, o[o.pid == 5]])
    with pytest.raises(InputError, match="held out whole"):
        prepare_entities(o, s, c, entity_key="pid")


def test_context_not_constant(trio):
    o, oc, s, sc, c, cc = trio
    with pytest.raises(InputError, match="constant within an entity"):
        prepare_entities(o, s, c, entity_key="pid", original_context=pd.concat([oc, oc.iloc[:1]]),
                         synthetic_context=sc, control_context=cc)
    joined = o.merge(oc, on="pid")
    joined.loc[joined.index[joined.pid == joined.pid.iloc[0]][-1], "sex"] = "x"
    with pytest.raises(InputError, match="'sex' is not constant within entity"):
        prepare_entities(joined, s.merge(sc, on="pid"), None,
                         metadata={"entity_key": "pid", "context_columns": ["age", "sex"]})


def test_missing_key_and_missing_context(trio):
    o, oc, s, sc, c, cc = trio
    with pytest.raises(InputError, match="entity key column 'who' is missing"):
        prepare_entities(o, s, None, entity_key="who")
    with pytest.raises(InputError, match="--synthetic-context"):
        prepare_entities(o, s, None, entity_key="pid", original_context=oc)
    with pytest.raises(ConfigError, match="--entity-key"):
        prepare_entities(o, s, None, metadata={"columns": {}})


def test_context_columns_inside_the_sequence_table(trio):
    o, oc, s, sc, c, cc = trio
    a = prepare_entities(o, s, c, entity_key="pid", sequence_key="t", original_context=oc,
                         synthetic_context=sc, control_context=cc)
    b = prepare_entities(o.merge(oc, on="pid"), s.merge(sc, on="pid"), c.merge(cc, on="pid"),
                         metadata={"entity_key": "pid", "sequence_key": "t", "context_columns": ["age", "sex"]})
    ea, eb = build_entity_run(a).entities, build_entity_run(b).entities
    assert list(ea.original.columns) == list(eb.original.columns)
    pd.testing.assert_frame_equal(ea.original, eb.original)


def test_sdv_sequential_metadata(trio):
    o, oc, s, sc, c, cc = trio
    meta = {"columns": {"pid": {"sdtype": "id"}, "t": {"sdtype": "numerical"}},
            "sequence_key": "pid", "sequence_index": "t"}
    data = prepare_entities(o, s, c, meta)
    assert data.spec.entity_key == "pid" and data.spec.sequence_key == "t"


def _brute_whole(o: pd.DataFrame, s: pd.DataFrame) -> int:
    def seqs(df):
        out = {}
        for pid, g in df.sort_values(["pid", "t", "amount", "kind"]).groupby("pid"):
            t = g.t.to_numpy()
            gaps = np.r_[t[0], np.diff(t)]  # absolute start, then gaps
            out[pid] = tuple(zip(gaps.tolist(), g.kind, g.amount, strict=True))
        return out
    so, ss = seqs(o), set(seqs(s).values())
    return sum(v in ss for v in so.values())


def _brute_windows(o: pd.DataFrame, s: pd.DataFrame, L: int) -> int:
    def wins(df):
        out = {}
        for pid, g in df.sort_values(["pid", "t", "amount", "kind"]).groupby("pid"):
            t = g.t.to_numpy()
            ev = list(zip(g.kind, g.amount, strict=True))
            w = set()
            for i in range(len(ev) - L + 1):
                w.add((ev[i],) + tuple((t[j] - t[j - 1], ev[j]) for j in range(i + 1, i + L)))
            out[pid] = w
        return out
    wo, ws = wins(o), set().union(*wins(s).values())
    return sum(bool(w & ws) for w in wo.values())


def test_copy_identities_match_brute_force(trio):
    o, oc, s, sc, c, cc = trio
    # plant copies: two whole histories and one 3-event window
    s = pd.concat([s, o[o.pid == 3].assign(pid=5000), o[o.pid == 7].assign(pid=5001)])
    lo = o.groupby("pid").size()
    donor = lo.index[lo >= 4][0]
    w = o[o.pid == donor].sort_values(["t", "amount", "kind"]).iloc[1:4].assign(pid=5002)
    s = pd.concat([s, w.assign(t=w.t + 17)])
    run = build_entity_run(prepare_entities(o, s, c, entity_key="pid", sequence_key="t"))
    whole = whole_sequence_copies(run, min_events=1)
    assert int(whole["original"]["copied"].sum()) == _brute_whole(o, s) >= 2
    sub = subsequence_copies_of(run, length=3)
    assert int(sub["original"]["copied"].sum()) == _brute_windows(o, s, 3) >= 3


def test_without_entity_key_metrics_are_skipped():
    o, _ = _events(30, 1)
    s, _ = _events(30, 2, 100)
    rep = sg.evaluate(o, s, metrics=["entity_copies", "sequence_length"])
    for m in ("entity_copies", "sequence_length"):
        assert rep[m]["status"] == "skipped"
        assert "--entity-key" in rep[m]["reason"]


def test_cli_entity_key(tmp_path, trio):
    from synthguard.cli import main

    o, oc, s, sc, c, cc = trio
    for name, df in dict(o=o, oc=oc, s=s, sc=sc, c=c, cc=cc).items():
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["evaluate", "-o", str(tmp_path / "o.csv"), "-s", str(tmp_path / "s.csv"),
                                    "-c", str(tmp_path / "c.csv"), "--entity-key", "pid", "--sequence-key", "t",
                                    "--original-context", str(tmp_path / "oc.csv"),
                                    "--synthetic-context", str(tmp_path / "sc.csv"),
                                    "--control-context", str(tmp_path / "cc.csv"),
                                    "--metrics", "entity_copies,dcr,sequence_length", "--json", str(out),
                                    "--no-progress"])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert d["unit"] == "entity"
    assert d["metrics"]["dcr"]["unit"] == "entity" and d["metrics"]["dcr"]["result"]["n"] == 40
    assert d["metrics"]["entity_copies"]["result"]["member"]["n"] == int((o.groupby("pid").size() >= 2).sum())
    bad = CliRunner().invoke(main, ["evaluate", "-o", str(tmp_path / "o.csv"), "-s", str(tmp_path / "s.csv"),
                                    "-c", str(tmp_path / "o.csv"), "--entity-key", "pid", "--no-progress"])
    assert bad.exit_code == 2 and "held out whole" in bad.output


def test_near_copies_and_dates(trio):
    o, oc, s, sc, c, cc = trio
    start = pd.Timestamp("2020-01-01")
    to_dates = {"t": lambda d: (start + pd.to_timedelta(d["t"], unit="D")).dt.strftime("%Y-%m-%d")}
    o, s, c = (x.assign(**to_dates) for x in (o, s, c))
    # three histories copied with amounts nudged by 0.1 %: not exact copies, near ones
    near = o[o.pid.isin([1, 2, 3])].assign(pid=lambda d: d.pid + 9000, amount=lambda d: d.amount * 1.001)
    s = pd.concat([s, near])
    run = build_entity_run(prepare_entities(o, s, c, entity_key="pid", sequence_key="t"))
    assert run.rows.schema.sdtype("t") == "datetime"
    exact = whole_sequence_copies(run)["original"]["copied"]
    rounded = whole_sequence_copies(run, round_digits=2)["original"]["copied"]
    assert not exact[run.ordered["original"].entities.get_indexer(["1", "2", "3"])].any()
    assert rounded[run.ordered["original"].entities.get_indexer(["1", "2", "3"])].all()
    # a copy shifted in time is a copy under time="relative" only
    lo = o.groupby("pid").size()
    pid = int(lo.index[lo >= 2][0])
    shifted = o[o.pid == pid].assign(pid=9999, t=lambda d: (pd.to_datetime(d.t) + pd.Timedelta(days=40))
                                   .dt.strftime("%Y-%m-%d"))
    run2 = build_entity_run(prepare_entities(o, pd.concat([s, shifted]), c, entity_key="pid", sequence_key="t"))
    i4 = run2.ordered["original"].entities.get_loc(str(pid))
    assert not whole_sequence_copies(run2)["original"]["copied"][i4]
    assert whole_sequence_copies(run2, time="relative")["original"]["copied"][i4]


def test_quasi_identifiers_may_be_sequence_features(trio):
    o, oc, s, sc, c, cc = trio
    meta = {"entity_key": "pid", "sequence_key": "t", "quasi_identifiers": ["age", "n_events", "kind:first"],
            "sensitive": ["sex", "kind"]}
    rep = sg.evaluate(o, s, c, metadata=meta, original_context=oc, synthetic_context=sc, control_context=cc,
                      metrics=["k_anonymity", "singling_out_univariate"]).to_dict()
    ent = rep["entities"]
    assert ent["quasi_identifiers"] == ["age", "n_events", "kind:first"]
    assert ent["sensitive"] == ["sex"]
    assert ent["roles_not_in_entity_table"] == {"sensitive": ["kind"]}
    assert rep["metrics"]["k_anonymity"]["status"] == "ok"
    assert rep["metrics"]["k_anonymity"]["unit"] == "entity"
