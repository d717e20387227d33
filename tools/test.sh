#!/usr/bin/env bash
# Runs every test of the project: the Rust workspace (unit, integration,
# corpus differential tests — the full shared corpus too: ../shared beside
# the repository or $METAL_PROFILER_SHARED; with CI=true missing shared data
# fails the run instead of skipping, see testdata/shared_data.rs)
# and the Python package's pytest suite in a fresh virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."

# tests that skip (shared data, Chromium, Graphviz missing) still report
# "ok" to cargo's harness: each writes a line here (testdata/shared_data.rs
# `skip`), printed at the end; under CI=true a skip is a failure instead
skipped="${CARGO_TARGET_DIR:-target}/skipped-tests.txt"
rm -f "$skipped"
pytest_skips=""

# each phase's wall time and the CPU time (user + system) of its child
# processes, printed at the end: where a cold run's time goes (README
# "Tests and CI"; tools/cold_test_time.sh runs this from an empty target dir)
phase_report=""
phase_name=""
times_file="$(mktemp)"
cpu_now=0
child_cpu() {
  # bash `times` (run in this shell, not a subshell, which would have no
  # children yet): the second line is the children's user and system time
  times >"$times_file"
  cpu_now=$(sed -n 2p "$times_file" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%.1f", t }')
}
phase_end() {
  [ -n "$phase_name" ] || return 0
  local wall cpu
  wall=$(( SECONDS - phase_t0 ))
  child_cpu
  cpu=$(awk -v a="$cpu_now" -v b="$phase_cpu0" 'BEGIN { printf "%.1f", a - b }')
  phase_report+="$(printf '%-44s %5d s wall %7s s CPU' "$phase_name" "$wall" "$cpu")"$'\n'
  echo "== done: $(printf '%s' "$phase_report" | tail -1)"
  phase_name=""
}
phase() {
  phase_end
  phase_name="$1"
  phase_t0=$SECONDS
  child_cpu
  phase_cpu0=$cpu_now
  echo "== $1"
}

print_skips() {
  phase_end
  if [ -n "$phase_report" ]; then
    echo "== time per phase (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a))"
    printf '%s' "$phase_report"
  fi
  rm -f "$times_file"
  echo "== skipped tests"
  if [ -s "$skipped" ] || [ -n "$pytest_skips" ]; then
    [ -s "$skipped" ] && sort -u "$skipped"
    [ -n "$pytest_skips" ] && printf '%s\n' "$pytest_skips"
  else
    echo "none"
  fi
}
trap print_skips EXIT

# nothing may be left in the repository by the tests (issue 29): its
# `git status` before and after must match (outside a git checkout: no check)
# (ignored files count too, e.g. .pytest_cache/ ignores itself; the build
# directory and Python's bytecode caches do not)
git_state() {
  git status --porcelain --ignored 2>/dev/null \
    | grep -v -e '^!! target/$' -e '__pycache__/$' -e '^!! \.venv' || true
}
state_before="$(git_state)"

phase "cargo test --workspace: build"
cargo test --workspace --locked --no-run
phase "cargo test --workspace: run"
cargo test --workspace --locked

if [ -f pyproject.toml ] && [ "${SKIP_PYTHON:-0}" != "1" ]; then
  phase "python: fresh venv, pytest installed"
  venv="$(mktemp -d)/venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip
  # nbformat, nbconvert: the notebook test (python/tests/test_notebook.py)
  "$venv/bin/pip" install --quiet pytest nbformat nbconvert
  # the extension in cargo's dev profile (dependencies at opt-level 2, see
  # Cargo.toml): it reuses what `cargo test` just built in the same target
  # directory instead of a second, release build of every crate (issue 29:
  # measured in README "Testing"); `pip install .` alone builds release
  phase "python: pip install . (dev profile)"
  "$venv/bin/pip" install --quiet . --config-settings=build-args="--profile dev"
  phase "python: pytest"
  # -rs: pytest's own list of skips with their reasons (kept for the end);
  # no cache provider: nothing (.pytest_cache/) is left in the repository
  log="$(mktemp)"
  (cd python/tests && "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider) | tee "$log"
  pytest_skips="$(grep '^SKIPPED' "$log" | sed 's/^/python: /' || true)"
  rm -f "$log"
fi
phase_end

if [ "$(git_state)" != "$state_before" ]; then
  echo "error: the tests left files in the repository:" >&2
  diff <(printf '%s\n' "$state_before") <(git_state) >&2 || true
  exit 1
fi
