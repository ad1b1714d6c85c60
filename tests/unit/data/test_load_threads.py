"""The loading's per-table steps (the control check's row hashes, the canonical order's reorder)
run in a thread per table when the process has the cores, with the same tables as one after
another (data/threads.py)."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

import synthguard.data.quirks as quirks
import synthguard.data.tables as tables_mod
import synthguard.data.threads as threads
from synthguard.data.tables import prepare_tables


def _frames(n: int = 3000) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(0)

    def one(m: int, shift: int) -> pd.DataFrame:
        return pd.DataFrame({"b": rng.integers(0, 50, m) + shift, "a": rng.normal(size=m),
                             "c": pd.array(rng.choice(["x", "y", "z"], m), dtype="string")})

    return {"original": one(n, 0), "synthetic": one(n, 0), "control": one(n // 3, 0)}


def _spy(monkeypatch, module, name: str) -> list[str]:
    seen: list[str] = []
    real = getattr(module, name)

    def spy(*a, **k):
        seen.append(threading.current_thread().name)
        return real(*a, **k)

    monkeypatch.setattr(module, name, spy)
    return seen


@pytest.mark.parametrize("n_cores", [1, 3])
def test_the_canonical_order_is_the_same_with_a_thread_per_table(monkeypatch, n_cores):
    f = _frames()
    serial = prepare_tables(f["original"], f["synthetic"], f["control"]).in_canonical_order()
    monkeypatch.setattr(threads, "cores", lambda: n_cores)
    seen = _spy(monkeypatch, tables_mod, "take_rows")
    got = prepare_tables(f["original"], f["synthetic"], f["control"]).in_canonical_order()
    for role in ("original", "synthetic", "control"):
        pd.testing.assert_frame_equal(got.get(role), serial.get(role))
        np.testing.assert_array_equal(got.row_numbers[role], serial.row_numbers[role])
    assert len(seen) == 3
    assert all(s.startswith("synthguard-load") for s in seen) == (n_cores > 1), seen


def test_the_control_check_hashes_each_table_in_a_thread_of_its_own(monkeypatch):
    f = _frames()
    schema = prepare_tables(f["original"], f["synthetic"], f["control"]).schema
    monkeypatch.setattr(threads, "cores", lambda: 3)
    seen = _spy(monkeypatch, quirks, "row_hashes")
    got: dict = {}
    quirks.check_control(f, schema, {}, hashes=got)
    assert sorted(got) == ["control", "original", "synthetic"]
    assert len(seen) == 3 and all(s.startswith("synthguard-load") for s in seen), seen
    for role in got:
        np.testing.assert_array_equal(got[role], quirks.row_hashes(f[role][list(f[role].columns)]))


def test_an_error_in_one_tables_step_is_raised_as_the_loop_would():
    def fail_on(x):
        if x >= 2:
            raise ValueError(f"item {x}")
        return x

    with pytest.raises(ValueError, match="item 2"):
        threads.map_threads(fail_on, [0, 1, 2, 3])
