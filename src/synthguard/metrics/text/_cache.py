"""A small cache of NLP outputs: an in-process memo plus gzipped JSON files on disk.

Keys are SHA-256 digests of everything that changes the result (the texts themselves, the backend,
model name and version, spaCy version, device, extraction version). Values must be plain JSON. The
directory is ``cache_dir`` if given, else ``$SYNTHGUARD_CACHE_DIR``, else ``~/.cache/synthguard``;
files live under ``<dir>/text/``. JSON (not pickle) so a shared cache folder cannot run code.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

__all__ = ["TextCache", "cache_key", "default_cache_dir"]

_MEMO: OrderedDict[str, Any] = OrderedDict()
_MEMO_SIZE = 16


def default_cache_dir() -> Path:
    """``$SYNTHGUARD_CACHE_DIR`` or ``~/.cache/synthguard``."""
    env = os.environ.get("SYNTHGUARD_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "synthguard"


def cache_key(**parts: Any) -> str:
    """Digest of the keyword parts (JSON, sorted keys)."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


class TextCache:
    """Memo + disk cache for NLP outputs.

    Parameters
    ----------
    enabled : bool
        ``False`` turns both layers off (every call recomputes).
    directory : str or Path, optional
        Root folder; default :func:`default_cache_dir`.
    """

    def __init__(self, enabled: bool = True, directory: str | Path | None = None) -> None:
        self.enabled = bool(enabled)
        root = Path(directory).expanduser() if directory is not None else default_cache_dir()
        self.directory = root / "text"
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.json.gz"

    def get(self, key: str) -> Any | None:
        """The stored value, or ``None``; unreadable files count as misses."""
        if not self.enabled:
            return None
        if key in _MEMO:
            _MEMO.move_to_end(key)
            self.hits += 1
            return _MEMO[key]
        path = self._path(key)
        if path.exists():
            try:
                with gzip.open(path, "rt", encoding="utf-8") as fh:
                    value = json.load(fh)
            except (OSError, ValueError):
                value = None
            if value is not None:
                self._memo(key, value)
                self.hits += 1
                return value
        self.misses += 1
        return None

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` in the memo and (best effort, atomically) on disk."""
        if not self.enabled:
            return
        self._memo(key, value)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "wb") as raw, gzip.open(raw, "wt", encoding="utf-8") as fh:
                json.dump(value, fh)
            os.replace(tmp, self._path(key))
        except OSError:
            pass  # a read-only or full disk must not fail the metric

    @staticmethod
    def _memo(key: str, value: Any) -> None:
        _MEMO[key] = value
        _MEMO.move_to_end(key)
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)

    @staticmethod
    def clear_memo() -> None:
        """Forget the in-process memo (tests)."""
        _MEMO.clear()
