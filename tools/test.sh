#!/usr/bin/env bash
# Runs every test of the project: the Rust workspace (unit, integration,
# corpus differential tests — the full shared corpus too: ../shared beside
# the repository or $METAL_PROFILER_SHARED; with CI=true missing shared data
# fails the run instead of skipping, see testdata/shared_data.rs)
# and the Python package's pytest suite in a fresh virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo test --workspace"
cargo test --workspace --locked

if [ -f pyproject.toml ] && [ "${SKIP_PYTHON:-0}" != "1" ]; then
  echo "== python: fresh venv, pip install ., pytest"
  venv="$(mktemp -d)/venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip
  "$venv/bin/pip" install --quiet pytest
  "$venv/bin/pip" install --quiet .
  (cd python/tests && "$venv/bin/python" -m pytest -q)
fi
