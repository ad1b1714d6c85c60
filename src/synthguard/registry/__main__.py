"""``python -m synthguard.registry --write-manifest``: regenerate ``_manifest.py`` from the live registry."""

import sys

from synthguard import registry as _live  # the package's module, where the decorators register

if sys.argv[1:] != ["--write-manifest"]:
    sys.exit("usage: python -m synthguard.registry --write-manifest")
written = _live.write_manifest()
print(f"wrote {written} ({len(_live.live_manifest())} metrics)")
