"""Every example in the package's docstrings runs and prints what it says (the numpydoc
``Examples`` sections are part of each public function's contract: a stale one is a sentence that
says more than the numbers)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import synthguard

#: every module of the package but scripts; one whose import needs a missing optional extra is
#: skipped with the reason
_MODULES = sorted(m.name for m in pkgutil.walk_packages(synthguard.__path__, "synthguard.")
                  if not m.name.endswith("__main__"))  # a script: importing it runs it


@pytest.mark.parametrize("name", _MODULES)
def test_the_docstring_examples_of_each_module_give_what_they_show(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:  # an optional extra (dask, spaCy, ...) not installed here
        if (exc.name or "synthguard").split(".")[0] == "synthguard":
            raise  # a broken import of the package itself is a failure, never a skip
        pytest.skip(f"{name} needs the optional dependency {exc.name}: {exc}")
    got = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                          verbose=False, report=True)
    assert got.failed == 0, f"{got.failed} of {got.attempted} examples of {name} failed (printed above)"
