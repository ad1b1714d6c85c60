"""The generator protocol and adapters for callables and external commands."""

from __future__ import annotations

import inspect
import io
import shlex
import subprocess
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import pandas as pd

from ..errors import ConfigError, MetricError


@runtime_checkable
class Generator(Protocol):
    """Anything with ``fit(df)`` and ``generate(n)``."""

    def fit(self, data: pd.DataFrame) -> Generator: ...

    def generate(self, n: int) -> pd.DataFrame: ...


class CallableGenerator:
    """Wraps ``func(training_df, n) -> DataFrame`` (plus an optional seed) as a generator."""

    def __init__(self, func: Callable[..., pd.DataFrame], seed: int | None = None) -> None:
        self.func = func
        self.seed = seed
        self._data: pd.DataFrame | None = None

    def with_seed(self, seed: int | None) -> CallableGenerator:
        """A copy with another seed (passed to ``func`` when it accepts a ``seed`` argument)."""
        return CallableGenerator(self.func, seed=seed)

    def fit(self, data: pd.DataFrame) -> CallableGenerator:
        self._data = data.copy()
        return self

    def generate(self, n: int) -> pd.DataFrame:
        if self._data is None:
            raise MetricError("generator: call fit() before generate()")
        try:
            takes_seed = "seed" in inspect.signature(self.func).parameters
        except (TypeError, ValueError):
            takes_seed = False
        out = self.func(self._data, n, seed=self.seed) if takes_seed else self.func(self._data, n)
        if not isinstance(out, pd.DataFrame):
            raise MetricError(f"generator callable returned {type(out).__name__}, not a DataFrame")
        return out


class CommandGenerator:
    """An external command: training CSV on stdin, synthetic CSV on stdout.

    The command is run as ``cmd --n N [--seed S]`` (arguments appended); it must print a CSV with
    the same columns.
    """

    def __init__(self, command: str | list[str], seed: int | None = None, timeout: float = 600) -> None:
        self.command = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.command:
            raise ConfigError("generator command is empty")
        self.seed = seed
        self.timeout = timeout
        self._csv: str | None = None

    def with_seed(self, seed: int | None) -> CommandGenerator:
        """A copy with another seed (passed as ``--seed``)."""
        return CommandGenerator(self.command, seed=seed, timeout=self.timeout)

    def fit(self, data: pd.DataFrame) -> CommandGenerator:
        self._csv = data.to_csv(index=False)
        return self

    def generate(self, n: int) -> pd.DataFrame:
        if self._csv is None:
            raise MetricError("generator: call fit() before generate()")
        args = self.command + ["--n", str(int(n))]
        if self.seed is not None:
            args += ["--seed", str(int(self.seed))]
        try:
            proc = subprocess.run(args, input=self._csv, capture_output=True, text=True,
                                  timeout=self.timeout, check=False)
        except FileNotFoundError as exc:
            raise ConfigError(f"generator command {self.command[0]!r} not found: check the path") from exc
        except subprocess.TimeoutExpired as exc:
            raise MetricError(f"generator command timed out after {self.timeout} s") from exc
        if proc.returncode != 0:
            tail = (proc.stderr or "").strip().splitlines()[-1:] or ["(no stderr)"]
            raise MetricError(f"generator command exited with {proc.returncode}: {tail[0]}")
        try:
            from ..data.loading import CSV_FLOAT_KW

            return pd.read_csv(io.StringIO(proc.stdout), **CSV_FLOAT_KW)
        except Exception as exc:  # noqa: BLE001
            raise MetricError(f"generator command did not print a CSV: {exc}") from exc
