"""A disk cache of metric results, keyed by the inputs' fingerprints and the metric's parameters.

Re-running an evaluation after changing one metric's parameters recomputes only that metric; the
others are read back from disk and marked ``"cached": true`` in the JSON report.

The cache is **off by default**. Turn it on with ``evaluate(..., cache=True)`` (directory
``$SYNTHGUARD_CACHE_DIR``, else ``~/.cache/synthguard``), ``cache="some/dir"``, a
:class:`DiskCache`, or on the command line with ``--cache`` / ``--cache-dir DIR``.

The key is a SHA-256 of: the SHA-256 fingerprint and shape of every input table (file bytes for
paths, cell values for DataFrames), the schema (sdtypes and roles), the metric name, its resolved
parameters, the seed, the risk thresholds, the synthguard version and a hash of the source file
that defines the metric (so editing a metric invalidates its entries). Entries are pickles of
:class:`~synthguard.core.results.MetricResult`; only open caches you wrote yourself (pickle runs code).
Metrics that need a generator are never cached (a generator has no fingerprint).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import os
import pickle
import tempfile
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core.results import MetricResult, to_jsonable

ENV_VAR = "SYNTHGUARD_CACHE_DIR"
_FORMAT = 3  # 2: Evidence carries risk, sees, visibility and record flags; 3: effect_ci is the
#: interval of the two one-sided bounds (its upper end = effect_upper), not the two-sided 95 % one


def default_cache_dir() -> Path:
    """``$SYNTHGUARD_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/synthguard`` or ``~/.cache/synthguard``."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "synthguard"


@lru_cache(maxsize=256)
def _source_hash(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError:
        return "unknown"


def _metric_code_hash(func: Any) -> str:
    try:
        return _source_hash(inspect.getfile(func))
    except Exception:  # noqa: BLE001 - a key without the code hash is still a valid key
        return "unknown"


class DiskCache:
    """Metric results pickled under ``directory/<key[:2]>/<key>.pkl``.

    Parameters
    ----------
    directory : str or Path, optional
        Where entries live; default :func:`default_cache_dir`.

    Attributes
    ----------
    hits, misses, writes : int
        Counters of this instance (for reports and tests).
    """

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory).expanduser() if directory is not None else default_cache_dir()
        self.hits = 0
        self.misses = 0
        self.writes = 0

    def __repr__(self) -> str:
        return f"DiskCache({str(self.directory)!r})"

    def key(self, tables: Any, name: str, params: Mapping[str, Any], seed: int,
            thresholds: Mapping[str, float], func: Any = None) -> str:
        """SHA-256 of everything a metric's result depends on (see the module docstring)."""
        from .._version import __version__

        # "sample": the rows are a seeded sample of the input (synthguard.run.sample)
        prints = {role: {k: v for k, v in dict(fp).items()
                         if k in ("rows", "columns", "sha256", "sample")}
                  for role, fp in dict(getattr(tables, "fingerprints", {})).items()}
        schema = tables.schema.to_dict() if hasattr(tables, "schema") else None
        payload = {"format": _FORMAT, "version": __version__, "inputs": prints, "schema": schema,
                   "metric": name, "code": _metric_code_hash(func), "params": params,
                   "seed": seed, "thresholds": dict(thresholds or {})}
        text = json.dumps(to_jsonable(payload), sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.pkl"

    def get(self, key: str) -> MetricResult | None:
        """The stored result, or ``None`` (missing, unreadable or not a MetricResult)."""
        path = self._path(key)
        try:
            with path.open("rb") as fh:
                obj = pickle.load(fh)  # noqa: S301 - the user's own cache directory
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError,
                ValueError):
            self.misses += 1
            return None
        if not isinstance(obj, MetricResult):
            self.misses += 1
            return None
        self.hits += 1
        return obj

    def put(self, key: str, result: MetricResult) -> None:
        """Store ``result`` atomically (write to a temporary file, then rename)."""
        path = self._path(key)
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.stem[:16]}.", suffix=".tmp", dir=path.parent)
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
            self.writes += 1
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            # an unwritable cache must never sink an evaluation; the result is still returned
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            return

    def clear(self) -> int:
        """Delete every entry; returns how many files were removed."""
        n = 0
        if not self.directory.exists():
            return 0
        for f in self.directory.glob("*/*.pkl"):
            try:
                f.unlink()
                n += 1
            except OSError:
                pass
        return n


def as_cache(cache: Any) -> Any:
    """Normalise the ``cache`` argument of :func:`synthguard.evaluate`.

    ``None``/``False`` -> no cache; ``True`` -> :class:`DiskCache` in :func:`default_cache_dir`;
    a str/Path -> :class:`DiskCache` there; anything with ``key``/``get``/``put`` is used as is.
    """
    if cache is None or cache is False:
        return None
    if cache is True:
        return DiskCache()
    if isinstance(cache, (str, Path)):
        return DiskCache(cache)
    if all(callable(getattr(cache, m, None)) for m in ("key", "get", "put")):
        return cache
    from ..errors import ConfigError

    raise ConfigError(f"cache must be True, a directory path or a DiskCache, got {cache!r}")
