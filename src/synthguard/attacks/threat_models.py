"""Targeted threat models (TAPAS' ``TargetedMIA`` / ``TargetedAIA``): memoised, seeded, and
sharing one set of shadow/test datasets across all targets.

Sample ``i`` of a mode (``"train"`` or ``"test"``) is a pure function of ``(seed, mode, i)``: asking
for 100 samples then 200 gives the same first 100 as asking for 200 at once, and the same seed gives
bit-identical datasets (with seeded generators).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data.encoding import Block, Encoder, value_ranges
from ..data.schema import Schema, infer_schema
from ..errors import ConfigError
from ..stats import make_rng
from ._conform import conform
from .knowledge import AIALabeller, MIALabeller
from .scoring import AttackSummary
from .targets import resolve_targets

__all__ = ["TargetedMIA", "TargetedAIA", "TargetView", "conform"]


class _LabelInference:
    """Engine behind :class:`TargetedMIA` and :class:`TargetedAIA` (TAPAS'
    ``LabelInferenceThreatModel`` in multiple-label mode)."""

    kind = "MIA"

    def __init__(self, data_knowledge: Any, generator_knowledge: Any, targets: Any, labeller: Any, *,
                 metadata: Mapping[str, Any] | Schema | None = None, seed: int = 0,
                 target_metric: str = "gower", n_jobs: int = 1) -> None:
        if n_jobs < 1:
            raise ConfigError(f"n_jobs must be at least 1, got {n_jobs}")
        self.n_jobs = int(n_jobs)
        self.data_knowledge = data_knowledge
        self.generator_knowledge = generator_knowledge
        self.labeller = labeller
        self.seed = int(seed)
        self.schema = (metadata if isinstance(metadata, Schema)
                       else infer_schema(data_knowledge.data, metadata))
        # typed once (dates read from CSV as text become datetimes), so targets, real datasets
        # and conformed generator outputs all encode alike
        data = conform(data_knowledge.data, data_knowledge.data, self.schema, "data")
        self.data = data
        self.columns = self.schema.tabular_columns()
        if not self.columns:
            raise ConfigError("the data has no tabular columns to attack: check the metadata sdtypes")
        self.encoder = Encoder(self.schema)
        full = self.encoder.encode(data, self.columns)  # learns the vocabularies, codes 0..V-1
        self.vocab_sizes = (full.cat.max(axis=0) + 1 if full.cat.shape[0] else
                            np.zeros(full.cat.shape[1], dtype=np.int64)).clip(min=1)
        self.ranges = value_ranges(full)
        with np.errstate(all="ignore"):
            self.mins = np.where(np.isnan(full.num), np.inf, full.num).min(axis=0) if full.n_rows else \
                np.zeros(full.num.shape[1])
        self.mins[~np.isfinite(self.mins)] = 0.0
        self.full_block = full
        self.targets = resolve_targets(targets, data, self.schema, encoder=self.encoder,
                                       columns=self.columns, seed=self.seed, metric=target_metric)
        self.warnings: list[str] = []
        if not data_knowledge.exact:
            in_aux = np.intersect1d(self.targets, data_knowledge.aux_rows)
            if in_aux.size:
                self.warnings.append(
                    f"target row(s) {in_aux.tolist()} are in the attacker's auxiliary part; they are "
                    "removed from every sampled dataset so only planted copies count")
        self._memo: dict[str, list[tuple[pd.DataFrame, np.ndarray]]] = {"train": [], "test": []}
        self._enc: dict[tuple, tuple[pd.DataFrame, Block]] = {}
        self.feature_cache: dict[tuple, tuple[pd.DataFrame, np.ndarray]] = {}

    # -- datasets -------------------------------------------------------------------------------
    def _real_dataset(self, rows: np.ndarray, labels: np.ndarray) -> pd.DataFrame:
        return self.data.iloc[rows].reset_index(drop=True)

    def _samples(self, mode: str, n: int) -> tuple[list[pd.DataFrame], np.ndarray]:
        if n is None or n < 0:
            raise ConfigError(f"num_samples must be a non-negative integer, got {n}")
        memo = self._memo[mode]
        training = mode == "train"

        def make(i: int) -> tuple[pd.DataFrame, np.ndarray]:
            rows, labels = self.labeller.sample(self.data_knowledge, self.targets, training, i,
                                                self.seed, mode)
            real = self._real_dataset(rows, labels)
            gen_seed = int(make_rng(self.seed, mode, "generator", i).integers(2**31 - 1))
            syn = self.generator_knowledge.generate(real, training, gen_seed)
            return conform(syn, self.data, self.schema, f"generated dataset {mode}#{i}"), labels

        todo = list(range(len(memo), n))
        if self.n_jobs > 1 and len(todo) > 1:
            # sample i depends only on (seed, mode, i): results are identical to a serial run
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(self.n_jobs) as pool:
                memo.extend(pool.map(make, todo))
        else:
            for i in todo:
                memo.append(make(i))
        if n == 0:
            return [], np.zeros((0, self.targets.size), dtype=np.int8)
        return [m[0] for m in memo[:n]], np.stack([m[1] for m in memo[:n]])

    def generate_training_samples(self, num_samples: int) -> tuple[list[pd.DataFrame], np.ndarray]:
        """``num_samples`` shadow datasets and their labels, shape ``(num_samples, n_targets)``."""
        return self._samples("train", num_samples)

    def generate_test_samples(self, num_samples: int) -> tuple[list[pd.DataFrame], np.ndarray]:
        """``num_samples`` evaluation datasets (the stand-ins for the real release) and labels."""
        return self._samples("test", num_samples)

    def encode(self, frame: pd.DataFrame, columns: Sequence[str] | None = None, *,
               categorical_only: bool = False) -> Block:
        """Encoded block of a dataset, memoised per dataset object (shared by attacks and targets)."""
        cols = tuple(columns) if columns is not None else tuple(self.columns)
        key = (id(frame), cols, categorical_only)
        hit = self._enc.get(key)
        if hit is None or hit[0] is not frame:
            hit = (frame, self.encoder.encode(frame, cols, categorical_only=categorical_only))
            self._enc[key] = hit
        return hit[1]

    # -- persistence ------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Pickle the threat model with its memoised datasets (generated once, reused later)."""
        state = dict(self.__dict__)
        state["_enc"] = {}
        state["feature_cache"] = {}
        from ..core.io import open_output

        with open_output(path, "path", binary=True) as fh:
            pickle.dump((type(self), state), fh)

    @staticmethod
    def load(path: str | Path) -> _LabelInference:
        """Restore a threat model written by :meth:`save` (only load files you trust: pickle)."""
        with open(path, "rb") as fh:
            cls, state = pickle.load(fh)  # noqa: S301 - documented: trusted files only
        obj = cls.__new__(cls)
        obj.__dict__.update(state)
        return obj

    # -- targets --------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.targets.size)

    def __iter__(self) -> Iterator[TargetView]:
        for i in range(self.targets.size):
            yield TargetView(self, i)

    def view(self, i: int) -> TargetView:
        """The threat model restricted to target number ``i``."""
        if not 0 <= i < self.targets.size:
            raise ConfigError(f"target index {i} out of range (0..{self.targets.size - 1})")
        return TargetView(self, i)

    @property
    def generator_name(self) -> str:
        return getattr(self.generator_knowledge, "name", type(self.generator_knowledge).__name__)


class TargetView:
    """One target of a multi-target threat model; shares the parent's memoised datasets.

    Attributes
    ----------
    parent : TargetedMIA or TargetedAIA
    index : int
        Position of the target in ``parent.targets``.
    target_id : int
        Row position of the target in the data.
    target_record : DataFrame
        The target row (1 x columns).
    """

    def __init__(self, parent: _LabelInference, index: int) -> None:
        self.parent = parent
        self.index = int(index)
        self.target_id = int(parent.targets[index])
        self.target_record = parent.data.iloc[[self.target_id]].reset_index(drop=True)
        self.kind = parent.kind

    def __getattr__(self, name: str) -> Any:
        return getattr(self.parent, name)

    def generate_training_samples(self, num_samples: int) -> tuple[list[pd.DataFrame], np.ndarray]:
        """Shadow datasets and this target's labels (shape ``(num_samples,)``)."""
        ds, labels = self.parent.generate_training_samples(num_samples)
        return ds, labels[:, self.index]

    def generate_test_samples(self, num_samples: int) -> tuple[list[pd.DataFrame], np.ndarray]:
        ds, labels = self.parent.generate_test_samples(num_samples)
        return ds, labels[:, self.index]

    def test(self, attack: Any, num_samples: int = 100) -> AttackSummary:
        """Run a trained ``attack`` on ``num_samples`` test datasets; returns an :class:`AttackSummary`."""
        ds, labels = self.generate_test_samples(num_samples)
        if not getattr(attack, "trained", False):
            raise ConfigError(f"attack {attack.label!r} is not trained: call attack.train(threat_model)")
        if getattr(attack, "target_id", self.target_id) != self.target_id:
            raise ConfigError(f"attack {attack.label!r} was trained for target {attack.target_id}, not "
                              f"{self.target_id}: train it on this target view first")
        scores = np.asarray(attack.attack_score(ds), dtype=float)
        preds = np.asarray(attack.attack(ds, scores=scores)).astype(bool)
        positive = None
        if self.kind == "AIA":
            positive = self.parent.labeller.attribute_values[1]
        return AttackSummary(labels=labels.astype(bool), scores=scores, predictions=preds,
                             threshold=float(getattr(attack, "threshold", np.nan)), attack=attack.label,
                             target=self.target_id, generator=self.parent.generator_name,
                             kind=self.kind, positive_label=positive)


class TargetedMIA(_LabelInference):
    """Membership inference on one or more target records.

    Parameters
    ----------
    data_knowledge : AuxiliaryDataKnowledge or ExactDataKnowledge
        What the attacker knows about the data.
    generator_knowledge : BlackBoxKnowledge, NoBoxKnowledge or UncertainBoxKnowledge
        What the attacker can do with the generator.
    targets : int, sequence of int, or str
        Row positions in ``data_knowledge.data``, or ``"auto:k"`` for the ``k`` most isolated
        records (see :func:`~synthguard.attacks.targets.select_vulnerable_targets`).
    generate_pairs, replace_target : bool
        Labeller options (see :class:`~synthguard.attacks.knowledge.MIALabeller`).
    metadata : mapping or Schema, optional
        Column sdtypes (inferred otherwise).
    seed : int
        Seed of every dataset, label and generator run.
    n_jobs : int
        Generator runs in parallel threads (useful for external commands); results are identical.
    """

    kind = "MIA"

    def __init__(self, data_knowledge: Any, generator_knowledge: Any, targets: Any = "auto:1", *,
                 generate_pairs: bool = True, replace_target: bool = False,
                 metadata: Mapping[str, Any] | Schema | None = None, seed: int = 0,
                 n_jobs: int = 1) -> None:
        super().__init__(data_knowledge, generator_knowledge, targets,
                         MIALabeller(generate_pairs, replace_target), metadata=metadata, seed=seed,
                         n_jobs=n_jobs)


class TargetedAIA(_LabelInference):
    """Attribute inference (binary): guess which of two values a target's sensitive attribute has.

    Parameters are those of :class:`TargetedMIA` plus ``sensitive_attribute``,
    ``attribute_values`` (two values, the second is "positive"), ``distribution`` and
    ``generate_pairs`` (see :class:`~synthguard.attacks.knowledge.AIALabeller`).
    """

    kind = "AIA"

    def __init__(self, data_knowledge: Any, generator_knowledge: Any, targets: Any,
                 sensitive_attribute: str, attribute_values: Sequence[Any], *,
                 distribution: Sequence[float] | None = None, generate_pairs: bool = False,
                 metadata: Mapping[str, Any] | Schema | None = None, seed: int = 0,
                 n_jobs: int = 1) -> None:
        if sensitive_attribute not in data_knowledge.data.columns:
            raise ConfigError(f"sensitive_attribute {sensitive_attribute!r} is not a column of the data")
        super().__init__(data_knowledge, generator_knowledge, targets,
                         AIALabeller(sensitive_attribute, attribute_values, distribution, generate_pairs),
                         metadata=metadata, seed=seed, n_jobs=n_jobs)
        if sensitive_attribute not in self.columns:
            raise ConfigError(f"sensitive_attribute {sensitive_attribute!r} is a text/id column: "
                              "pick a tabular column")
        self.sensitive_attribute = sensitive_attribute
        self.attribute_values = list(attribute_values)

    def _real_dataset(self, rows: np.ndarray, labels: np.ndarray) -> pd.DataFrame:
        frame = self.data.iloc[rows].reset_index(drop=True)
        n_t = self.targets.size
        col = frame[self.sensitive_attribute].astype(object).to_numpy().copy()
        vals = np.asarray(self.attribute_values, dtype=object)
        col[len(frame) - n_t:] = vals[labels.astype(int)]
        series = pd.Series(col, name=self.sensitive_attribute)
        dtype = self.data[self.sensitive_attribute].dtype
        try:
            frame[self.sensitive_attribute] = series.astype(dtype)
        except (TypeError, ValueError):
            frame[self.sensitive_attribute] = series
        return frame
