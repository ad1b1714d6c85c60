"""The shared spaCy pass (one NLP run per distinct text for text_entities AND text_nominals) gives
exactly the outputs of the two separate passes, and one evaluation runs it once."""

from __future__ import annotations

import pytest

from synthguard import evaluate
from synthguard.metrics.text import _backends, _common
from synthguard.metrics.text._backends import (
    extract_entities,
    extract_nominal_candidates,
    extract_shared,
    load_backend,
)

from .conftest import METADATA, frame

# "Philly.  Now": after the parser has set sentence boundaries spaCy's NER cannot span them, so a
# pass with NER after the parser finds "Philly.  " instead of the NER-only "Philly.  Now".
BOUNDARY_TEXT = ("Found this pasta brand originally at a small Italian market in Philly.  Now, it's the only "
                 "one we use.  Great texture - chewy but not too chewy.  Flavorful too.  The best gluten "
                 "free dry pasta we've found and we've tried a bunch.")


@pytest.fixture(scope="module")
def spacy_backend():
    return load_backend("spacy")


def _corpus(texts):
    return sorted(set(texts["original"]) | set(texts["synthetic"]) | set(texts["clean"]) | {BOUNDARY_TEXT})


def test_shared_pass_equals_separate_passes(texts, spacy_backend):
    corpus = _corpus(texts)
    ents = extract_entities(spacy_backend, corpus)
    noms = extract_nominal_candidates(spacy_backend, corpus)
    shared_ents, shared_noms = extract_shared(spacy_backend, corpus, batch_size=4)
    assert shared_ents == ents
    assert shared_noms == noms
    assert any(e[0] == "Philly.  Now" for e in ents[corpus.index(BOUNDARY_TEXT)][1])


def test_shared_pass_worker_processes_equal_in_process(texts, spacy_backend):
    corpus = _corpus(texts)
    one = extract_shared(spacy_backend, corpus, batch_size=4, n_process=1)
    two = extract_shared(spacy_backend, corpus, batch_size=4, n_process=2)
    assert two == one


def test_one_evaluation_runs_one_nlp_pass(texts, monkeypatch):
    calls = []
    real = _backends.extract_shared

    def counting(backend, batch, **kw):
        calls.append(len(batch))
        return real(backend, batch, **kw)

    monkeypatch.setattr(_backends, "extract_shared", counting)
    params = {"backend": "spacy", "cache": False}
    rep = evaluate(frame(texts["original"]), frame(texts["synthetic"]), metadata=METADATA,
                   metrics={"text_entities": params, "text_nominals": params})
    assert rep["text_entities"]["status"] == "ok" and rep["text_nominals"]["status"] == "ok"
    # one call, on the distinct texts of both tables together (verbatim copies analysed once)
    assert calls == [len(set(texts["original"]) | set(texts["synthetic"]))]
    # each metric alone gives the same result as in the joint evaluation
    for name in ("text_entities", "text_nominals"):
        alone = evaluate(frame(texts["original"]), frame(texts["synthetic"]), metadata=METADATA,
                         metrics={name: params})
        assert alone.result(name).to_dict() == rep.result(name).to_dict()


def test_shared_outputs_match_per_role_extraction(texts, spacy_backend):
    from synthguard.metrics.text._cache import TextCache
    from synthguard.registry import Context

    ctx = Context.from_frames(frame(texts["original"]), frame(texts["synthetic"]), None, METADATA)
    by_role = {"original": texts["original"] + texts["original"][:2], "synthetic": texts["synthetic"]}
    out = _common.shared_outputs(ctx, spacy_backend, by_role, TextCache(False), n_process=1, batch_size=8)
    for role, t in by_role.items():
        assert [p[0] for p in out[role]] == extract_entities(spacy_backend, t)
        assert [p[1] for p in out[role]] == extract_nominal_candidates(spacy_backend, t)
