"""Run a PETsARD 1.10 YAML (``Loader`` / ``Splitter`` / ``Synthesizer`` / ``Evaluator`` /
``Reporter``) with synthguard's evaluators: ``synthguard run petsard.yaml``.

The YAML has PETsARD's three levels, ``Module: {experiment name: {parameters}}``. Several
experiments under one module make a grid: every combination runs, depth first, in file order.

Supported modules
-----------------
``Loader``
    ``filepath`` (CSV/TSV/Parquet; relative paths are read from the working directory, else from
    the YAML's folder), ``nrows``, ``na_values``, ``header_names``. PETsARD's ``benchmark://``
    datasets are downloads and are refused.
``Splitter``
    ``train_split_ratio`` (default 0.8), ``num_samples`` (default 1), ``random_state``,
    ``max_overlap_ratio``, ``max_attempts``: PETsARD's split (Python's ``random`` seeded with
    ``random_state``, a sample of ``round(n * ratio)`` row positions as ``ori``, the rest as
    ``control``), so the same seed gives PETsARD's rows. ``method: custom_data`` with
    ``filepath: {ori: ..., control: ...}`` reads both from files.
``Synthesizer``
    ``method: custom_data`` + ``filepath`` reads the synthetic table; ``method: default`` fits
    synthguard's built-in Gaussian copula (:class:`synthguard.generators.GaussianCopula`, named
    ``synthguard-gaussian_copula`` in the output: PETsARD's default is its own copula, so the rows
    differ) on ``ori`` and samples ``sample_num_rows`` (default: as many as ``ori``).
``Preprocessor`` / ``Postprocessor``
    ``method: default`` only, run as a no-op (synthguard's evaluators and copula take the raw
    types); anything else is refused.
``Evaluator``
    every method of :class:`synthguard.compat.petsard.evaluator.Evaluator`.
``Reporter``
    ``method: save_report`` with ``granularity`` (one or a list), ``eval`` (experiment names),
    ``output`` (prefix, default ``petsard``), ``naming_strategy`` (``traditional``:
    ``<output>_Reporter[<granularity>].csv`` or ``<output>_Reporter[<eval>_<granularity>].csv``;
    ``compact``: ``petsard.report.Rp.<...>.<G|C|P>.csv``). The frames of the chosen evaluators
    are merged side by side, their columns prefixed ``<experiment>_``, as PETsARD writes them.
    ``details`` are not tables and, as with PETsARD, write no file. ``method: save_data`` writes
    ``<output>_<Module>[<experiment>].csv`` for each ``source`` module.
``Executor``
    logging settings: accepted and ignored.

Any other module, method or parameter is a :class:`~synthguard.errors.ConfigError`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

import pandas as pd

from ...core.io import write_csv
from ...errors import ConfigError, InputError

MODULES = ("Loader", "Splitter", "Preprocessor", "Synthesizer", "Postprocessor", "Evaluator", "Reporter")
UNSUPPORTED = {"Constrainer": "constraints on synthetic rows", "Describer": "descriptive statistics",
               "Processor": "PETsARD's processors"}
GRAN_ABBR = {"global": "G", "columnwise": "C", "pairwise": "P", "details": "D", "tree": "T"}
_KEYS = ["full_expt_name"]


@dataclass
class RunResult:
    """What a YAML run produced: evaluator outputs per pipeline and the files written."""

    results: dict[tuple[tuple[str, str], ...], dict[str, Any]] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def load_yaml(path: str | Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Read and validate a PETsARD YAML (three levels, known modules)."""
    from ...run.config import load_config_file

    p = Path(path)
    data = load_config_file(p)
    for module, block in data.items():
        if module in UNSUPPORTED:
            raise ConfigError(f"{p}: module {module!r} ({UNSUPPORTED[module]}) is not supported by "
                              f"'synthguard run'; remove the block (supported: {', '.join(MODULES)})")
        if module not in MODULES and module != "Executor":
            raise ConfigError(f"{p}: unknown module {module!r}; PETsARD modules supported here: "
                              f"{', '.join(MODULES)} (and Executor)")
        if not isinstance(block, Mapping) or not block:
            raise ConfigError(f"{p}: module {module!r} must map experiment names to parameters, "
                              f"e.g. {module}: {{my_experiment: {{method: default}}}}")
        if module == "Executor":
            continue
        for name, params in block.items():
            if params is not None and not isinstance(params, Mapping):
                raise ConfigError(f"{p}: {module}.{name} must be a mapping of parameters")
    if "Loader" not in data:
        raise ConfigError(f"{p}: a PETsARD YAML needs a Loader block (Loader: {{data: {{filepath: "
                          "...}}}})")
    return data


def _resolve(path: Any, base: Path, where: str) -> Path:
    if not isinstance(path, (str, Path)) or not str(path):
        raise ConfigError(f"{where}: filepath must be a file path")
    if str(path).startswith("benchmark://"):
        raise ConfigError(f"{where}: {path} is a PETsARD benchmark download; synthguard never downloads "
                          "data: download the CSV once and give its path")
    p = Path(path)
    if p.is_absolute() or p.exists():
        return p
    alt = base / p
    return alt if alt.exists() else p


def _read(path: Any, base: Path, where: str, params: Mapping[str, Any] | None = None) -> pd.DataFrame:
    from ...data.loading import CSV_FLOAT_KW, load_table

    params = dict(params or {})
    file = _resolve(path, base, where)
    nrows, na_values, names = params.get("nrows"), params.get("na_values"), params.get("header_names")
    if nrows is None and na_values is None and names is None:
        frame, _ = load_table(file, where)
        return frame
    if not file.exists():
        raise InputError(f"{where}: file {file} does not exist: check the path")
    kw: dict[str, Any] = dict(CSV_FLOAT_KW)
    if nrows is not None:
        kw["nrows"] = int(nrows)
    if na_values is not None:
        kw["na_values"] = na_values
    if names is not None:
        kw.update(names=list(names), header=0)
    sep = "\t" if file.suffix.lower() == ".tsv" else ","
    try:
        return pd.read_csv(file, sep=sep, **kw)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"{where}: file {file} could not be read ({exc})") from exc


_LOADER_KEYS = {"filepath", "method", "nrows", "na_values", "header_names", "column_types", "schema"}
_SPLIT_KEYS = {"method", "num_samples", "train_split_ratio", "random_state", "max_overlap_ratio",
               "max_attempts", "filepath"}
_SYN_KEYS = {"method", "filepath", "sample_num_rows", "sample_from", "random_state", "seed"}
_REPORT_KEYS = {"method", "granularity", "eval", "output", "naming_strategy", "source"}


def _check_keys(params: Mapping[str, Any], allowed: set[str], where: str) -> None:
    bad = sorted(set(params) - allowed)
    if bad:
        raise ConfigError(f"{where}: unsupported parameter(s) {bad}; supported: {sorted(allowed)}")


def petsard_split(n: int, train_split_ratio: float = 0.8, num_samples: int = 1,
                  random_state: Any = None, max_overlap_ratio: float = 1.0,
                  max_attempts: int = 30) -> list[tuple[list[int], list[int]]]:
    """PETsARD's Splitter: ``num_samples`` (train positions, validation positions) pairs.

    Python's :mod:`random` seeded with ``random_state`` draws ``round(n * ratio)`` positions; the
    positions come back in the order of a Python ``set``, as PETsARD returns them. A new sample that
    repeats an earlier one, or overlaps one by more than ``max_overlap_ratio``, is redrawn (up to
    ``max_attempts`` times).
    """
    if not 0.0 <= float(train_split_ratio) <= 1.0:
        raise ConfigError("Splitter: train_split_ratio must be between 0 and 1")
    if not 0.0 <= float(max_overlap_ratio) <= 1.0:
        raise ConfigError("Splitter: max_overlap_ratio must be between 0 and 1")
    rng = random.Random(random_state)
    index = list(range(n))
    size = round(n * float(train_split_ratio))
    seen: list[set[int]] = []
    out = []
    for _ in range(int(num_samples)):
        for _attempt in range(int(max_attempts)):
            pick = set(rng.sample(index, size))
            ok = all(pick != s and (max_overlap_ratio >= 1.0 or
                                    len(pick & s) / max(len(pick), 1) <= max_overlap_ratio) for s in seen)
            if ok:
                seen.append(pick)
                out.append((list(pick), list(set(index) - pick)))
                break
        else:
            raise ConfigError(f"Splitter: could not draw {num_samples} samples with ratio "
                              f"{train_split_ratio} and max_overlap_ratio {max_overlap_ratio} in "
                              f"{max_attempts} attempts: lower num_samples or raise max_overlap_ratio")
    return out


class PetsardRunner:
    """Execute one PETsARD YAML.

    Parameters
    ----------
    config : str or Path
        The YAML file.
    output_dir : str or Path, optional
        Folder the Reporter writes to (default: the working directory, as PETsARD).
    seed : int
        Seed of synthguard's evaluators and of the built-in copula.
    allow_outside_output_dir : bool
        Let a Reporter ``output`` be an absolute path or climb out of ``output_dir`` with ``..``
        (refused by default: a YAML from elsewhere must not write anywhere on the machine).
    """

    def __init__(self, config: str | Path, output_dir: str | Path | None = None, seed: int = 0,
                 allow_outside_output_dir: bool = False) -> None:
        self.path = Path(config)
        self.base = self.path.resolve().parent
        self.config = load_yaml(self.path)
        self.output_dir = Path(output_dir) if output_dir is not None else Path.cwd()
        self.seed = seed
        self.allow_outside = allow_outside_output_dir
        self._validate()

    def _inputs(self) -> list[Path]:
        """The files the YAML reads (the YAML itself and every Loader file): never written."""
        files = [self.path]
        for p in (self.config.get("Loader") or {}).values():
            fp = (p or {}).get("filepath")
            if fp:
                files.append(Path(fp) if Path(fp).is_absolute() else self.base / str(fp))
        return files

    def _output_path(self, where: str, fname: str) -> Path:
        """``output_dir / fname``, refused when it leaves ``output_dir`` (unless allowed), names
        an input file, or cannot be written (a link to a folder, a folder...)."""
        from ...core.io import check_distinct_outputs, check_writable

        path = self.output_dir / fname
        if not self.allow_outside:
            root = self.output_dir.resolve()
            if Path(fname).is_absolute() or ".." in Path(fname).parts or not path.resolve().is_relative_to(root):
                raise ConfigError(f"{where}: output {fname!r} would be written outside the output folder "
                                  f"{self.output_dir}: give a plain file prefix, or pass "
                                  "--allow-outside-output-dir")
        check_distinct_outputs({f"{where} output": path},
                               {f"input {p.name}": p for p in self._inputs()})
        if path.parent.exists():  # a missing folder is created when the file is written
            check_writable(path, f"{where} output")
        return path

    def _validate(self) -> None:
        from .evaluator import Evaluator

        c = self.config
        for name, p in c["Loader"].items():
            _check_keys(p or {}, _LOADER_KEYS, f"Loader.{name}")
            if not (p or {}).get("filepath"):
                raise ConfigError(f"Loader.{name}: filepath is required (a CSV/TSV/Parquet file)")
            if (p or {}).get("method", "default") not in ("default", None):
                raise ConfigError(f"Loader.{name}: method {p['method']!r} is not supported; give filepath")
        for name, p in c.get("Splitter", {}).items():
            _check_keys(p or {}, _SPLIT_KEYS, f"Splitter.{name}")
            method = (p or {}).get("method", "default")
            if method not in ("default", "custom_data", None):
                raise ConfigError(f"Splitter.{name}: method {method!r} is not supported (default or "
                                  "custom_data)")
            if method == "custom_data":
                fp = (p or {}).get("filepath")
                if not isinstance(fp, Mapping) or not {"ori", "control"} <= set(fp):
                    raise ConfigError(f"Splitter.{name}: custom_data needs filepath: {{ori: ..., "
                                      "control: ...}}")
        for module in ("Preprocessor", "Postprocessor"):
            for name, p in c.get(module, {}).items():
                if (p or {}).get("method", "default") != "default":
                    raise ConfigError(f"{module}.{name}: only method 'default' is supported (run as a "
                                      "no-op: synthguard's evaluators take the raw types)")
        for name, p in c.get("Synthesizer", {}).items():
            _check_keys(p or {}, _SYN_KEYS, f"Synthesizer.{name}")
            method = (p or {}).get("method", "default")
            if method not in ("default", "custom_data"):
                raise ConfigError(f"Synthesizer.{name}: method {method!r} is not supported: use "
                                  "custom_data (a synthetic file) or default (synthguard's Gaussian "
                                  "copula)")
            if method == "custom_data" and not (p or {}).get("filepath"):
                raise ConfigError(f"Synthesizer.{name}: custom_data needs filepath")
        self._evaluators = {}
        for name, p in c.get("Evaluator", {}).items():
            params = dict(p or {})
            method = params.pop("method", "default")
            try:
                Evaluator(method, seed=self.seed, **params)  # validates method and parameters
            except ConfigError as exc:
                raise ConfigError(f"Evaluator.{name}: {exc}") from None
            self._evaluators[name] = (method, params)
        for name, p in c.get("Reporter", {}).items():
            _check_keys(p or {}, _REPORT_KEYS, f"Reporter.{name}")
            method = (p or {}).get("method")
            if method not in ("save_report", "save_data"):
                raise ConfigError(f"Reporter.{name}: method {method!r} is not supported (save_report or "
                                  "save_data)")
            if method == "save_report":
                g = (p or {}).get("granularity")
                grans = [g] if isinstance(g, str) else list(g or [])
                bad = [x for x in grans if str(x).lower() not in GRAN_ABBR]
                if not grans or bad:
                    raise ConfigError(f"Reporter.{name}: granularity must be one or a list of "
                                      f"{list(GRAN_ABBR)}, got {g!r}")
                ev = (p or {}).get("eval")
                evs = [ev] if isinstance(ev, str) else list(ev or [])
                unknown = [e for e in evs if e not in self._evaluators]
                if unknown:
                    raise ConfigError(f"Reporter.{name}: eval {unknown} names no Evaluator experiment; "
                                      f"experiments: {list(self._evaluators)}")
                strategy = (p or {}).get("naming_strategy", "traditional")
                if strategy not in ("traditional", "compact"):
                    raise ConfigError(f"Reporter.{name}: naming_strategy must be traditional or compact")
            output = str((p or {}).get("output", "petsard"))
            self._output_path(f"Reporter.{name}", f"{output}_x.csv")  # checked before any work
            if method == "save_report":
                for fname in _report_names(dict(p)).values():
                    self._output_path(f"Reporter.{name}", fname)

    # ------------------------------------------------------------------------------------- run
    def run(self) -> RunResult:
        """Run every pipeline of the grid, then the Reporter blocks."""
        from .evaluator import Evaluator

        out = RunResult()
        c = self.config
        data_by_chain: dict[tuple, dict[str, pd.DataFrame]] = {}
        loaders = {name: _read(p["filepath"], self.base, f"Loader.{name}", p) for name, p in c["Loader"].items()}
        splits: list[tuple[tuple[str, str], pd.DataFrame, dict[str, pd.DataFrame]]] = []
        for lname, frame in loaders.items():
            if "Splitter" not in c:
                splits.append(((("Loader", lname),), frame, {"ori": frame}))
                continue
            for sname, p in c["Splitter"].items():
                p = dict(p or {})
                if p.get("method") == "custom_data":
                    fp = p["filepath"]
                    d = {"ori": _read(fp["ori"], self.base, f"Splitter.{sname}.ori"),
                         "control": _read(fp["control"], self.base, f"Splitter.{sname}.control")}
                    splits.append(((("Loader", lname), ("Splitter", f"{sname}_[1-1]")), frame, d))
                    continue
                p.pop("method", None)
                n_s = int(p.get("num_samples", 1))
                frame = frame.reset_index(drop=True)
                for i, (tr, va) in enumerate(petsard_split(len(frame), **p), start=1):
                    d = {"ori": frame.iloc[tr].reset_index(drop=True),
                         "control": frame.iloc[va].reset_index(drop=True)}
                    splits.append(((("Loader", lname), ("Splitter", f"{sname}_[{n_s}-{i}]")), frame, d))
        synths = c.get("Synthesizer") or {"none": None}
        for (chain, _frame, d), (syname, sp) in product(splits, synths.items()):
            d = dict(d)
            if sp is not None:
                sp = dict(sp or {})
                if sp.get("method", "default") == "custom_data":
                    syn = _read(sp["filepath"], self.base, f"Synthesizer.{syname}")
                    k = int(sp.get("sample_num_rows") or 0)
                    d["syn"] = syn.iloc[:k].copy() if 0 < k < len(syn) else syn
                else:
                    from ...generators import GaussianCopula

                    seed = sp.get("random_state", sp.get("seed", self.seed))
                    gen = GaussianCopula(seed=int(seed) if seed is not None else 0).fit(d["ori"])
                    k = int(sp.get("sample_num_rows") or len(d["ori"]))
                    d["syn"] = gen.generate(k)
                    out.notes.append(f"Synthesizer.{syname}: method 'default' ran synthguard's built-in "
                                     "Gaussian copula (synthguard-gaussian_copula), not PETsARD's")
                chain = (*chain, ("Synthesizer", syname))
            data_by_chain[chain] = d
            for ename, (method, params) in self._evaluators.items():
                ev = Evaluator(method, seed=self.seed, **params)
                ev.create()
                needed = {k: v for k, v in d.items() if k in ev.required_keys or k in ("ori", "syn")}
                missing = [k for k in ev.required_keys if k not in d]
                if missing:
                    raise ConfigError(f"Evaluator.{ename} ({method}) needs {missing}: add a Splitter "
                                      "(control) and/or a Synthesizer (syn) block")
                out.results[(*chain, ("Evaluator", ename))] = ev.eval(needed)
        self._data_by_chain = data_by_chain
        for rname, p in (c.get("Reporter") or {}).items():
            if p["method"] == "save_report":
                out.files.extend(self._save_report(dict(p), out))
            else:
                out.files.extend(self._save_data(rname, dict(p), loaders))
        return out

    # --------------------------------------------------------------------------------- reporter
    def _save_report(self, p: dict[str, Any], res: RunResult) -> list[Path]:
        ev = p.get("eval")
        evs = [ev] if isinstance(ev, str) else (list(ev) if ev else None)
        files = []
        for gran, fname in _report_names(p).items():
            merged = self._merge(res, gran, evs)
            if merged is None:
                res.notes.append(f"Reporter: no {gran} table to save (PETsARD writes none either)")
                continue
            path = self._output_path("Reporter", fname)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_csv(merged, path, "Reporter")
            files.append(path)
        return files

    def _merge(self, res: RunResult, gran: str, evs: list[str] | None) -> pd.DataFrame | None:
        per_chain: dict[tuple, pd.DataFrame] = {}
        for chain, scores in res.results.items():
            ename = chain[-1][1]
            if evs is not None and ename not in evs:
                continue
            frame = scores.get(gran)
            if not isinstance(frame, pd.DataFrame):
                continue
            upstream = chain[:-1]
            if gran == "global":
                f = frame.reset_index(drop=True)
                on: list[str] = []
            elif gran == "columnwise":
                f = frame.reset_index(names="column")
                on = ["column"]
            elif gran == "pairwise":
                f = frame.reset_index(names=["column1", "column2"])
                on = ["column1", "column2"]
            else:
                f = frame.reset_index(drop=True)
                on = []
            f = f.rename(columns={c: f"{ename}_{c}" for c in f.columns if c not in on})
            keys = {"full_expt_name": "_".join(f"{m}[{e}]" for m, e in upstream) + f"_Evaluator[{gran}]"}
            for m, e in upstream:
                keys[m] = e
            keys["Evaluator"] = f"[{gran}]"
            head = pd.DataFrame({k: [v] * len(f) for k, v in keys.items()})
            f = pd.concat([head, f.reset_index(drop=True)], axis=1)
            key_cols = list(keys) + on
            if upstream in per_chain:
                # sort=True: PETsARD's rows come from an outer merge, which sorts the keys
                # lexicographically since pandas 2.2 whatever ``sort`` says; pandas 2.0/2.1 keep
                # the order of appearance unless asked to sort, so ask, for the same rows everywhere
                per_chain[upstream] = per_chain[upstream].merge(f, on=key_cols, how="outer", sort=True)
            else:
                per_chain[upstream] = f
        if not per_chain:
            return None
        return pd.concat(list(per_chain.values()), ignore_index=True)

    def _save_data(self, rname: str, p: dict[str, Any], loaders: Mapping[str, pd.DataFrame]) -> list[Path]:
        src = p.get("source")
        sources = [src] if isinstance(src, str) else list(src or [])
        if not sources:
            raise ConfigError(f"Reporter.{rname}: save_data needs source (a module name, e.g. Synthesizer)")
        output = str(p.get("output", "petsard"))
        files = []
        for chain, d in self._data_by_chain.items():
            for module in sources:
                key = {"Loader": None, "Splitter": "ori", "Synthesizer": "syn"}.get(module, "missing")
                if key == "missing":
                    raise ConfigError(f"Reporter.{rname}: source {module!r} is not supported "
                                      "(Loader, Splitter, Synthesizer)")
                names = dict(chain)
                if module not in names:
                    continue
                frame = loaders[names["Loader"]] if key is None else d[key]
                tag = "_".join(f"{m}[{e}]" for m, e in chain if MODULES.index(m) <= MODULES.index(module))
                safe = re.sub(r"[/\\]", "-", tag)
                path = self._output_path(f"Reporter.{rname}", f"{output}_{safe}.csv")
                path.parent.mkdir(parents=True, exist_ok=True)
                write_csv(frame, path, f"Reporter.{rname}")
                files.append(path)
        return sorted(set(files))


def _report_names(p: Mapping[str, Any]) -> dict[str, str]:
    """Granularity -> the file name a ``save_report`` Reporter block writes it to."""
    g = p["granularity"]
    ev = p.get("eval")
    evs = [ev] if isinstance(ev, str) else (list(ev) if ev else None)
    output = str(p.get("output", "petsard"))
    out = {}
    for gran in (str(x).lower() for x in ([g] if isinstance(g, str) else g)):
        name = gran if evs is None else "-".join(evs) + f"_{gran}"
        if p.get("naming_strategy", "traditional") == "compact":
            out[gran] = f"petsard.report.Rp.{name}.{GRAN_ABBR[gran]}.csv"
        else:
            out[gran] = f"{output}_Reporter[{name}].csv"
    return out


def run_petsard_yaml(config: str | Path, output_dir: str | Path | None = None, seed: int = 0,
                     allow_outside_output_dir: bool = False) -> RunResult:
    """Run a PETsARD YAML; see the module docstring for what is supported. Reporter files go under
    ``output_dir`` only, unless ``allow_outside_output_dir``."""
    return PetsardRunner(config, output_dir=output_dir, seed=seed,
                         allow_outside_output_dir=allow_outside_output_dir).run()
