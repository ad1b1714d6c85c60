"""Fixtures of the text-metric tests: small texts with known entities and known copies, an isolated
cache folder, and a helper that runs one metric through the registry."""

from __future__ import annotations

import pandas as pd
import pytest

from synthguard.metrics.text._cache import TextCache

from ....helpers import context
from ....helpers import run as run_metric

ORIGINAL_TEXTS = [
    "Dr. Maria Gonzalez visited Springfield, Illinois with John Smith from Acme Corp last week.",
    "Call me at 555-123-4567 or write to maria.gonzalez@example.com about the invoice AB123456.",
    "My neighbor Peter Parker works at the Daily Bugle in New York City as a photographer.",
    "The product arrived late but tasted fine, my husband liked it a lot honestly.",
    "We bought this at Costco in Seattle and the kids loved it every single day.",
    "Great coffee, strong flavour, would buy again from Amazon without hesitation at all.",
    "The teacher told my sister that Helen Carter from Boston had won the baking contest.",
    "These crackers are stale and the box was crushed when it finally came to our house.",
]
# rows 0 and 6 copied verbatim, row 3 copied with one word changed; the rest is new
SYNTHETIC_TEXTS = [
    "Dr. Maria Gonzalez visited Springfield, Illinois with John Smith from Acme Corp last week.",
    "This tea is lovely and I drink it every morning before work at the office.",
    "The product arrived late but tasted fine, my husband liked it a lot really.",
    "Terrible taste, the package was broken when it arrived, never again for me.",
    "The teacher told my sister that Helen Carter from Boston had won the baking contest.",
    "Nice snack for the road, not too salty and the bag is easy to reseal later.",
]
CLEAN_SYNTHETIC = [
    "This tea is lovely and I drink it every morning before work at the office.",
    "Terrible taste, the package was broken when it arrived, never again for me.",
    "Nice snack for the road, not too salty and the bag is easy to reseal later.",
    "The cookies were soft and sweet, exactly like the ones from the bakery downtown.",
]
METADATA = {"text_columns": ["note"], "columns": {"id": {"sdtype": "id"}}}


def frame(texts: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"id": range(len(texts)), "note": texts})


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    """Every test gets its own cache folder and an empty in-process memo."""
    monkeypatch.setenv("SYNTHGUARD_CACHE_DIR", str(tmp_path / "cache"))
    TextCache.clear_memo()
    yield tmp_path / "cache"
    TextCache.clear_memo()


def run(name: str, original: pd.DataFrame, synthetic: pd.DataFrame, control: pd.DataFrame | None = None,
        metadata: dict | None = None, seed: int = 0, **params):
    """Run a registered metric through the executor (:func:`tests.helpers.run`), on tables in their
    input order: the known answers here are per document, by input position."""
    ctx = context(original, synthetic, control, metadata or METADATA, seed=seed, canonical=False)
    return run_metric(name, ctx=ctx, **params)


@pytest.fixture(scope="session")
def texts():
    return {"original": ORIGINAL_TEXTS, "synthetic": SYNTHETIC_TEXTS, "clean": CLEAN_SYNTHETIC}
