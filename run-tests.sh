#!/usr/bin/env bash
# What CI runs (.ci/run), in the venv you activated (README, "Set-up"):
#   1. install the project with the dev extra (every extra but verl) and compile its
#      bytecode on every core (pip compiles on one);
#   2. ruff, mypy --strict;
#   3. the tests on two workers (worksteal: a worker that runs out takes tests queued on
#      the other, so both finish together), then the few marked `alone` (several processes
#      each) by themselves;
#   4. the verl tests, in a venv of their own: verl pins an older transformers than TRL. That
#      venv is kept in your cache directory between runs. It is installed and tested in the
#      background from the start, while step 1 runs: each pip install uses one core, so on a
#      two-core machine the two overlap instead of queueing. Its output is printed at the end.
set -euo pipefail
cd "$(dirname "$0")"
if [ -z "${VIRTUAL_ENV:-}" ]; then
  echo "run-tests.sh: activate a venv first: python3 -m venv .venv && . .venv/bin/activate" >&2
  exit 2
fi

verl_venv="${XDG_CACHE_HOME:-$HOME/.cache}/zero-rewards/venv-verl"
work="$(mktemp -d)"
# The verl venv installs a wheel built here first: two pip builds of the checkout at once
# would write its build/ and egg-info directories together. pip keeps an installed wheel of
# the same version, so the second install replaces the copy a previous run left.
pip wheel -q --no-deps -w "$work" .
wheel=("$work"/*.whl)

set -m  # the background job gets a process group of its own, ended below if this script stops
(
  python3 -m venv "$verl_venv" &&
    "$verl_venv/bin/pip" install -q --no-compile -c constraints.txt "${wheel[0]}[verl]" pytest hypothesis &&
    "$verl_venv/bin/pip" install -q --no-compile --no-deps --force-reinstall "${wheel[0]}" &&
    "$verl_venv/bin/python" -m pytest -q -p no:cacheprovider parity_tests/test_stacks_verl.py
) </dev/null >"$work/verl.log" 2>&1 &
verl=$!
trap 'kill -- -"$verl" 2>/dev/null || true; rm -rf "$work"' EXIT

pip install -q --no-compile -c constraints.txt -e ".[dev]"
python -c "import compileall, sys; compileall.compile_dir(sys.prefix, quiet=2, workers=0); import jax, torch; print('jax', jax.__version__, '| torch', torch.__version__)"
ruff check .
mypy
pytest -q -n 2 --dist worksteal -m "not alone"

verl_status=0
wait "$verl" || verl_status=$?
echo "verl tests ($verl_venv):"
cat "$work/verl.log"
if [ "$verl_status" != 0 ]; then exit "$verl_status"; fi

# After the verl job: these start several processes each, with timeouts, and want the
# machine to themselves.
pytest -q -m alone parity_tests/test_multiprocess.py parity_tests/test_trl_multiprocess.py
