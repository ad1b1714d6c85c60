"""What the attacker knows: about the data (auxiliary or exact) and about the generator
(black-box, no-box, uncertain-box), plus the labellers that plant targets in pairs of datasets.

Every random choice takes an explicit ``numpy.random.Generator``; nothing touches a global RNG.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConfigError, MetricError
from ..generators import as_generator
from ..stats import make_rng

__all__ = ["AuxiliaryDataKnowledge", "ExactDataKnowledge", "MIALabeller", "AIALabeller",
           "BlackBoxKnowledge", "NoBoxKnowledge", "UncertainBoxKnowledge", "reseed"]


# --------------------------------------------------------------------------------------------
# knowledge of the data
# --------------------------------------------------------------------------------------------
class AuxiliaryDataKnowledge:
    """The attacker holds a sample from the same population (TAPAS' ``AuxiliaryDataKnowledge``).

    The rows are split (seeded) into an *auxiliary* part (the attacker's, for shadow/training
    datasets) and a *test* part (for the evaluation datasets, standing in for the real release).

    Parameters
    ----------
    data : DataFrame
        The population sample; row positions (0..n-1) are the record ids used for targets.
    auxiliary_split : float
        Share of rows given to the attacker.
    num_training_records : int
        Size of every sampled real dataset.
    aux_data, test_data : DataFrame, optional
        Give the two parts explicitly instead of splitting ``data``.
    seed : int
        Seed of the split.
    """

    def __init__(self, data: pd.DataFrame, auxiliary_split: float = 0.5,
                 num_training_records: int = 1000, *, aux_data: pd.DataFrame | None = None,
                 test_data: pd.DataFrame | None = None, seed: int = 0) -> None:
        if not 0.0 < auxiliary_split < 1.0:
            raise ConfigError(f"auxiliary_split must lie in (0, 1), got {auxiliary_split}")
        if num_training_records < 1:
            raise ConfigError(f"num_training_records must be at least 1, got {num_training_records}")
        self.data = data.reset_index(drop=True)
        self.num_training_records = int(num_training_records)
        n = len(self.data)
        if aux_data is not None and test_data is not None:
            self.data = pd.concat([aux_data, test_data], ignore_index=True)
            self.aux_rows = np.arange(len(aux_data))
            self.test_rows = np.arange(len(aux_data), len(self.data))
        else:
            perm = make_rng(seed, "aux-split").permutation(n)
            k = int(round(auxiliary_split * n))
            self.aux_rows, self.test_rows = np.sort(perm[:k]), np.sort(perm[k:])
        self.exact = False

    def pool(self, training: bool, exclude: Sequence[int] = ()) -> np.ndarray:
        """Row positions datasets are drawn from (targets removed)."""
        rows = self.aux_rows if training else self.test_rows
        return np.setdiff1d(rows, np.asarray(exclude, dtype=int))

    def sample_rows(self, training: bool, rng: np.random.Generator, exclude: Sequence[int] = (),
                    size: int | None = None) -> np.ndarray:
        """Positions of one real dataset (without replacement)."""
        pool = self.pool(training, exclude)
        size = self.num_training_records if size is None else size
        if size > pool.size:
            part = "auxiliary" if training else "test"
            raise ConfigError(f"num_training_records={size} exceeds the {pool.size} rows of the {part} "
                              "part: lower num_training_records or give more data")
        return np.sort(rng.choice(pool, size=size, replace=False))


class ExactDataKnowledge:
    """Worst case (DP auditing): every dataset is the private training set itself, minus targets.

    Parameters
    ----------
    training_data : DataFrame
        The exact private dataset.
    """

    def __init__(self, training_data: pd.DataFrame) -> None:
        self.data = training_data.reset_index(drop=True)
        self.num_training_records = len(self.data)
        self.aux_rows = self.test_rows = np.arange(len(self.data))
        self.exact = True

    def pool(self, training: bool, exclude: Sequence[int] = ()) -> np.ndarray:
        return np.setdiff1d(self.aux_rows, np.asarray(exclude, dtype=int))

    def sample_rows(self, training: bool, rng: np.random.Generator, exclude: Sequence[int] = (),
                    size: int | None = None) -> np.ndarray:
        return self.pool(training, exclude)


# --------------------------------------------------------------------------------------------
# labellers: plant targets into sampled datasets
# --------------------------------------------------------------------------------------------
class MIALabeller:
    """Membership labels: each target is in (1) or out (0) of a dataset.

    With ``generate_pairs`` two datasets share one base sample D and receive complementary label
    vectors, so D and D' differ only by the targets (TAPAS' default). ``replace_target`` swaps
    random records out for the inserted targets instead of growing the dataset.
    """

    def __init__(self, generate_pairs: bool = True, replace_target: bool = False) -> None:
        self.generate_pairs = bool(generate_pairs)
        self.replace_target = bool(replace_target)

    def sample(self, knowledge: Any, targets: np.ndarray, training: bool, index: int, seed: int,
               mode: str) -> tuple[np.ndarray, np.ndarray]:
        """Row positions of dataset ``index`` and its label vector (one entry per target)."""
        base_index = index // 2 if self.generate_pairs else index
        rng = make_rng(seed, mode, "mia-data", base_index)
        rows = knowledge.sample_rows(training, rng, exclude=targets)
        labels = rng.random(targets.size) < 0.5
        if self.generate_pairs and index % 2 == 1:
            labels = ~labels
        keep = rows
        n_in = int(labels.sum())
        if self.replace_target and n_in and not knowledge.exact:
            drop = rng.choice(rows.size, size=n_in, replace=False)
            keep = np.delete(rows, drop)
        return np.concatenate([keep, targets[labels]]), labels.astype(np.int8)


class AIALabeller:
    """Attribute labels: every target replaces a random record, with its sensitive attribute set to
    ``attribute_values[label]``, ``label`` drawn uniformly (or from ``distribution``).

    Parameters
    ----------
    sensitive_attribute : str
        Column the attacker infers.
    attribute_values : sequence
        Exactly two candidate values (binary AIA); the second counts as positive.
    distribution : sequence of float, optional
        Probabilities of the values (default uniform).
    generate_pairs : bool
        Datasets 2j and 2j+1 share their base sample and replaced records and get complementary
        labels (uniform labels only; variance reduction, as for membership).
    """

    def __init__(self, sensitive_attribute: str, attribute_values: Sequence[Any],
                 distribution: Sequence[float] | None = None, generate_pairs: bool = False) -> None:
        values = list(attribute_values)
        if len(values) != 2:
            raise ConfigError(f"attribute_values must hold exactly two values (binary AIA), got {values}")
        if values[0] == values[1]:
            raise ConfigError(f"attribute_values must be two different values, got {values}")
        self.sensitive_attribute = sensitive_attribute
        self.attribute_values = values
        p = np.full(2, 0.5) if distribution is None else np.asarray(distribution, dtype=float)
        if p.shape != (2,) or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
            raise ConfigError(f"distribution must be two probabilities summing to 1, got {distribution}")
        if generate_pairs and distribution is not None:
            raise ConfigError("generate_pairs makes the labels uniform: drop distribution or set "
                              "generate_pairs=False")
        self.distribution = p
        self.generate_pairs = bool(generate_pairs)

    def sample(self, knowledge: Any, targets: np.ndarray, training: bool, index: int, seed: int,
               mode: str) -> tuple[np.ndarray, np.ndarray]:
        base_index = index // 2 if self.generate_pairs else index
        rng = make_rng(seed, mode, "aia-data", base_index)
        rows = knowledge.sample_rows(training, rng, exclude=targets)
        labels = (rng.random(targets.size) < self.distribution[1]).astype(np.int8)
        if self.generate_pairs and index % 2 == 1:
            labels = 1 - labels
        if not knowledge.exact and rows.size >= targets.size:
            drop = rng.choice(rows.size, size=targets.size, replace=False)
            rows = np.delete(rows, drop)
        return np.concatenate([rows, targets]), labels


# --------------------------------------------------------------------------------------------
# knowledge of the generator
# --------------------------------------------------------------------------------------------
def reseed(generator: Any, seed: int) -> Any:
    """A copy of ``generator`` seeded with ``seed`` (``with_seed`` if it has one, else a copy with
    its ``seed`` attribute set; objects without a seed are used as they are)."""
    if hasattr(generator, "with_seed"):
        return generator.with_seed(seed)
    if hasattr(generator, "seed"):
        g = copy.deepcopy(generator)
        g.seed = seed
        if hasattr(g, "_calls"):
            g._calls = 0
        return g
    return generator


def _run(generator: Any, data: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    g = reseed(generator, seed)
    out = g.fit(data).generate(int(n))
    if not isinstance(out, pd.DataFrame):
        raise MetricError(f"generator returned {type(out).__name__}, not a DataFrame")
    return out


class BlackBoxKnowledge:
    """The attacker may run the generator (TAPAS' recommended setting).

    Parameters
    ----------
    generator : object
        Anything with ``fit``/``generate``, a callable ``(df, n) -> DataFrame``, a builtin name
        (``raw``, ``marginals``, ``copula``) or a command line (CSV on stdin/stdout).
    num_synthetic_records : int
        Rows generated per dataset.
    """

    label = "black-box"

    def __init__(self, generator: Any, num_synthetic_records: int) -> None:
        if num_synthetic_records < 1:
            raise ConfigError(f"num_synthetic_records must be at least 1, got {num_synthetic_records}")
        self.generator = as_generator(generator)
        self.num_synthetic_records = int(num_synthetic_records)

    def generate(self, data: pd.DataFrame, training: bool, seed: int) -> pd.DataFrame:
        """Fit on ``data`` and release ``num_synthetic_records`` rows."""
        return _run(self.generator, data, self.num_synthetic_records, seed)

    @property
    def name(self) -> str:
        return type(self.generator).__name__


class NoBoxKnowledge(BlackBoxKnowledge):
    """The attacker only sees the release: training samples are refused, so only attacks with a
    fixed ``("threshold", v)`` criterion can be used (the generator still makes the test sets)."""

    label = "no-box"

    def generate(self, data: pd.DataFrame, training: bool, seed: int) -> pd.DataFrame:
        if training:
            raise ConfigError("no-box knowledge: the attacker cannot run the generator; use an attack "
                              "with criterion ('threshold', v) or black-box knowledge")
        return super().generate(data, training, seed)


class UncertainBoxKnowledge:
    """The attacker knows the generator family but not its parameters: training datasets use
    parameters drawn from ``prior``, test datasets ``final_parameters``.

    Parameters
    ----------
    generator_factory : callable
        ``factory(**params) -> generator``.
    num_synthetic_records : int
        Rows generated per dataset.
    prior : callable
        ``prior(rng) -> dict`` of parameters.
    final_parameters : mapping
        Parameters of the real release.
    """

    label = "uncertain-box"

    def __init__(self, generator_factory: Callable[..., Any], num_synthetic_records: int,
                 prior: Callable[[np.random.Generator], Mapping[str, Any]],
                 final_parameters: Mapping[str, Any]) -> None:
        self.generator_factory = generator_factory
        self.num_synthetic_records = int(num_synthetic_records)
        self.prior = prior
        self.final_parameters = dict(final_parameters)

    def generate(self, data: pd.DataFrame, training: bool, seed: int) -> pd.DataFrame:
        params = dict(self.prior(make_rng(seed, "prior"))) if training else self.final_parameters
        if "seed" in inspect.signature(self.generator_factory).parameters and "seed" not in params:
            params["seed"] = seed
        gen = as_generator(self.generator_factory(**params))
        return _run(gen, data, self.num_synthetic_records, seed)

    @property
    def name(self) -> str:
        return getattr(self.generator_factory, "__name__", type(self.generator_factory).__name__)
