#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it in two venvs:
#  1. .venv-test: synthguard with all extras at the NEWEST versions a fresh install resolves
#     (pandas 3.x, numpy 2.x: what a user gets from `pip install synthguard` today): every test
#     but the calibration suite's runs (tests/calibration, run 2 runs them; its leak builders,
#     test_builders.py, run here too);
#  2. .venv-oldest: the OLDEST versions pyproject allows (pandas 2.0, numpy 1.24, scipy 1.10,
#     scikit-learn 1.3), plus the test-only reference libraries (extra `oracles`: anonymeter 1.1.0,
#     sdmetrics 0.32) that run as oracles in tests/oracles: every test but those marked
#     metric_on_dask (but the privacy preset's, which runs every distributed metric on pandas 2 too)
#     (a metric's whole run on a Dask cluster against one process: the metric code
#     is the one both venvs run in one process, and the Dask backend's answers, the loading and
#     the typing, which depend on the pandas and dask versions, are tested here by their own tests
#     in tests/integration/dask).
# Each run gets about half of the suite's time (CI has 30 minutes for the two side by side): the
# calibration suite (minutes of real-data runs, the same numbers in both venvs: it reads the shared
# CSVs with the correctly rounded float parser) and the whole-metric Dask runs (minutes of a
# cluster's fixed cost per task) go one to each.
# The oracles cannot sit in the newest venv: anonymeter 1.1.0 pins numpy<1.27 and sdmetrics 0.32
# pins pandas<3. Their tests carry @pytest.mark.oracle(lib) (or importorskip with the same reason)
# and are reported as skipped, with that reason, in run 1; run 2 runs them. Every test runs somewhere.
# The two runs go side by side when the machine has two cores or more (run 2's output is printed
# when it ends); SYNTHGUARD_TEST_SERIAL=1 runs them one after the other.
# Also installs Debian's headless Chromium for the HTML report test and Debian's PostgreSQL server
# for the database-source test (the test starts and stops its own server).
# Extra arguments go to pytest in both runs (e.g. scripts/test.sh -k dcr).
# SYNTHGUARD_TEST_VENV / SYNTHGUARD_OLDEST_VENV rename the venvs; SYNTHGUARD_TEST_OLDEST=0 skips run 2.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
USER_NARGS=$#  # pytest arguments given by the caller (a filter may then collect nothing)
VENV=${SYNTHGUARD_TEST_VENV:-.venv-test}
OLDEST=${SYNTHGUARD_OLDEST_VENV:-.venv-oldest}
# the oldest versions pyproject.toml allows (keep in sync with [project] dependencies)
# (pyarrow too: the newest pyarrow refuses numpy 1.24 at import, which would leave Parquet untested)
OLDEST_PINS=("pandas==2.0.*" "numpy==1.24.*" "scipy==1.10.*" "scikit-learn==1.3.*" "pyarrow==14.*")

make_venv() {
  if [ ! -x "$1/bin/python" ]; then
    "$PY" -m venv "$1"
  fi
  "$1/bin/python" -m pip install -q --upgrade pip >/dev/null
}

# --- run 1: newest
make_venv "$VENV"
if "$VENV/bin/python" -c "import anonymeter.evaluators" >/dev/null 2>&1; then
  echo "error: $VENV holds the oracle anonymeter (a venv made before the newest/oldest split);" \
       "it cannot take the newest numpy. Move it away (or set SYNTHGUARD_TEST_VENV) and rerun." >&2
  exit 1
fi
# eager upgrade: an existing venv also moves to the newest versions that resolve together
"$VENV/bin/python" -m pip install -q --upgrade --upgrade-strategy eager -e ".[all,test]"
# the example plugin (a privacy test in a package of its own, entry point synthguard.metrics):
# tests/plugins exercise it, and with SYNTHGUARD_REQUIRE_PLUGIN=1 fail rather than skip without it
PLUGIN_DIR=examples/synthguard-example-plugin
"$VENV/bin/python" -m pip install -q --no-deps -e "$PLUGIN_DIR"
export SYNTHGUARD_REQUIRE_PLUGIN=1
# Debian packages the tests drive: chromium (the HTML report test), postgresql (the database-source
# tests start a server of their own: tests/integration/sources/conftest.py)
apt_missing=()
command -v chromium >/dev/null 2>&1 || apt_missing+=(chromium)
{ command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; } \
  || apt_missing+=(postgresql)
if [ "${#apt_missing[@]}" -gt 0 ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's ${apt_missing[*]} for the tests..." >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_missing[@]}" >/dev/null) \
    || echo "warning: could not install ${apt_missing[*]}: without chromium the browser test fails," \
            "without postgresql the PostgreSQL test is skipped (naming this)" >&2
fi

run_suite() {  # venv, label, pytest args...
  local venv=$1 label=$2
  shift 2
  echo "== $label: $("$venv/bin/python" -c 'import numpy, pandas, scipy, sklearn; print(f"pandas {pandas.__version__}, numpy {numpy.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__}")')" >&2
  set +e
  "$venv/bin/python" -m pytest "$@"
  local rc=$?
  set -e
  # pytest's exit code 5 means "no tests collected": only acceptable when a filter was given
  if [ "$rc" = "5" ] && [ "$USER_NARGS" -gt 0 ]; then rc=0; fi
  return "$rc"
}

prepare_oldest() {
  make_venv "$OLDEST"
  "$OLDEST/bin/python" -m pip install -q -e ".[all,test,oracles]" "${OLDEST_PINS[@]}"
  "$OLDEST/bin/python" -m pip install -q --no-deps -e "$PLUGIN_DIR"
}
OLDEST_ARGS=(-m "not metric_on_dask")
# (the newest runs the calibration suite's leak builders, test_builders.py: their pandas code on pandas 3)
NEWEST_ARGS=(--ignore-glob='tests/calibration/test_[!b]*.py')
if [ "${SYNTHGUARD_TEST_OLDEST:-1}" = "0" ]; then NEWEST_ARGS=(); fi  # no run 2: run 1 runs everything

rc_new=0
rc_old=0
if [ "${SYNTHGUARD_TEST_OLDEST:-1}" != "0" ] && [ "${SYNTHGUARD_TEST_SERIAL:-0}" != "1" ] \
    && [ "$(nproc 2>/dev/null || echo 1)" -ge 2 ]; then
  # --- run 2 in the background (its own log), run 1 in the foreground
  OLDLOG=$(mktemp "${TMPDIR:-/tmp}/synthguard-oldest.XXXXXX")
  ( prepare_oldest && run_suite "$OLDEST" "oldest supported versions + oracles ($OLDEST)" \
      "${OLDEST_ARGS[@]}" "$@" ) >"$OLDLOG" 2>&1 &
  old_pid=$!
  run_suite "$VENV" "newest versions ($VENV)" "${NEWEST_ARGS[@]}" "$@" || rc_new=$?
  wait "$old_pid" || rc_old=$?
  cat "$OLDLOG"
  rm -f "$OLDLOG"
else
  run_suite "$VENV" "newest versions ($VENV)" "${NEWEST_ARGS[@]}" "$@" || rc_new=$?
  if [ "${SYNTHGUARD_TEST_OLDEST:-1}" != "0" ]; then
    prepare_oldest
    run_suite "$OLDEST" "oldest supported versions + oracles ($OLDEST)" "${OLDEST_ARGS[@]}" "$@" \
      || rc_old=$?
  fi
fi
echo "newest: exit $rc_new; oldest: exit $rc_old" >&2
if [ "$rc_new" != "0" ]; then exit "$rc_new"; fi
exit "$rc_old"
