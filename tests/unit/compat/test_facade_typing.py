"""The anonymeter facade's evaluators of one script share one typing decision of the same frames
(``synthguard.compat.anonymeter._prepared``), and that never changes what an evaluator returns:
a frame changed in place is typed again, the typing's warnings come on every evaluator, and a
seed is each evaluator's own."""

from __future__ import annotations

import gc
import warnings

import pytest

import synthguard.data.tables as tables_module
from synthguard.compat import anonymeter as facade
from synthguard.compat.anonymeter import (
    InferenceEvaluator,
    LinkabilityEvaluator,
    SinglingOutEvaluator,
)


@pytest.fixture()
def frames(demo_data):
    facade._PREPARED.clear()
    return (demo_data["original"].head(300).copy(), demo_data["leaky"].head(300).copy(),
            demo_data["control"].head(300).copy())


@pytest.fixture()
def typings(monkeypatch):
    """How many typing decisions the facade makes."""
    calls = []
    real = tables_module.prepare_tables

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(tables_module, "prepare_tables", counted)
    return calls


def _link(ori, syn, ctl, seed=0):
    cols = list(ori.columns)
    return LinkabilityEvaluator(ori, syn, aux_cols=(cols[:4], cols[4:]), n_attacks=100, control=ctl,
                                n_neighbors=3, seed=seed).evaluate().risk()


def _infer(ori, syn, ctl, seed=0):
    aux = [c for c in ori.columns if c != "income"]
    return InferenceEvaluator(ori, syn, aux_cols=aux, secret="income", n_attacks=100, control=ctl,
                              seed=seed).evaluate().risk()


def test_evaluators_on_the_same_frames_type_them_once_and_return_what_a_fresh_typing_returns(
        frames, typings):
    shared = (_link(*frames), _infer(*frames))
    assert len(typings) == 1
    facade._PREPARED.clear()
    link_alone = _link(*frames)
    facade._PREPARED.clear()
    infer_alone = _infer(*frames)
    assert shared == (link_alone, infer_alone)


def _single(ori, syn, ctl, seed=0):
    e = SinglingOutEvaluator(ori, syn, n_attacks=50, control=ctl, seed=seed).evaluate(mode="univariate")
    return e.risk(), e.queries()


def test_the_trio_on_the_same_frames_types_them_once_and_returns_what_each_returns_alone(frames, typings):
    """Singling out counts distinct rows, linkability and inference add each row's number: one
    typing decision serves all three (the row-numbered tables derived from it), in any order."""
    shared = (_single(*frames), _link(*frames), _infer(*frames), _single(*frames), _link(*frames))
    assert len(typings) == 1
    alone = []
    for fn in (_single, _link, _infer):
        facade._PREPARED.clear()
        alone.append(fn(*frames))
    assert len(typings) == 4
    assert shared == (*alone, alone[0], alone[1])


def test_a_frame_changed_in_place_between_evaluators_is_typed_again(frames, typings):
    ori, syn, ctl = frames
    before = _infer(ori, syn, ctl)
    syn["income"] = syn["income"].sample(frac=1.0, random_state=1).to_numpy()
    after = _infer(ori, syn, ctl)
    assert len(typings) == 2
    facade._PREPARED.clear()
    assert after == _infer(ori, syn, ctl)
    assert after != before


def test_each_evaluator_keeps_its_own_seed_on_shared_typing(frames, typings):
    first = _link(*frames, seed=1)
    second = _link(*frames, seed=2)
    assert len(typings) == 1
    facade._PREPARED.clear()
    assert second == _link(*frames, seed=2)
    assert first != second


def test_a_warning_of_the_typing_comes_with_every_evaluator_that_shares_it(frames, monkeypatch):
    real = tables_module.prepare_tables

    def warning(*args, **kwargs):  # a typing decision that warns (pandas may, on some inputs)
        warnings.warn("typing says so", UserWarning, stacklevel=2)
        return real(*args, **kwargs)

    monkeypatch.setattr(tables_module, "prepare_tables", warning)
    for _ in range(2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _link(*frames)
        assert [str(w.message) for w in caught if "typing" in str(w.message)] == ["typing says so"]


def test_the_shared_typing_is_dropped_with_its_frames(demo_data):
    facade._PREPARED.clear()
    ori, syn, ctl = (demo_data[r].head(200).copy() for r in ("original", "leaky", "control"))
    _link(ori, syn, ctl)
    assert facade._PREPARED
    del ori
    gc.collect()
    assert not facade._PREPARED


def test_evaluators_in_threads_on_the_same_frames_return_what_they_return_one_at_a_time(frames):
    """The shared typing is read and replaced as one entry: evaluators run in threads (on these
    frames and on another set that keeps replacing the entry) return the serial results."""
    from concurrent.futures import ThreadPoolExecutor

    other = tuple(f.head(200).copy() for f in frames)
    serial = [_link(*frames), _infer(*frames), _link(*other), _infer(*other)]
    facade._PREPARED.clear()
    with ThreadPoolExecutor(4) as pool:
        jobs = [pool.submit(fn, *fr) for _ in range(3)
                for fn, fr in ((_link, frames), (_infer, frames), (_link, other), (_infer, other))]
        got = [j.result() for j in jobs]
    assert got == serial * 3
