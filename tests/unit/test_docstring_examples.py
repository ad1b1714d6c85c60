"""Every example in the package's docstrings runs and prints what it says (the numpydoc
``Examples`` sections are part of each public function's contract: a stale one is a sentence that
says more than the numbers)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import synthguard

#: modules whose import needs an optional extra; skipped, with the reason, when it is missing
_MODULES = sorted(m.name for m in pkgutil.walk_packages(synthguard.__path__, "synthguard.")
                  if not m.name.endswith("__main__"))  # a script: importing it runs it


@pytest.mark.parametrize("name", _MODULES)
def test_the_docstring_examples_of_each_module_give_what_they_show(name):
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # an optional extra (dask, spaCy, ...) not installed here
        pytest.skip(f"{name} needs an optional dependency: {exc}")
    got = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                          verbose=False, report=True)
    assert got.failed == 0, f"{got.failed} of {got.attempted} examples of {name} failed (printed above)"
