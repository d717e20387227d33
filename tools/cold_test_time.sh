#!/usr/bin/env bash
# Measures a cold `bash tools/test.sh` (issue 29 item 4): every crate and
# dependency compiled from an empty target directory (a new one under /tmp,
# removed afterwards; the repository's own target/ is not touched), the
# Python package installed into a fresh venv, every test run. Prints the
# machine, the load before and after, each phase's wall and CPU time
# (tools/test.sh) and the whole run's wall, user and system time.
#   bash tools/cold_test_time.sh            # as README "Tests and CI"
#   CI=true bash tools/cold_test_time.sh    # as .ci/run: missing shared data fails
# Dependencies must already be in cargo's download cache (`cargo fetch`)
# for a build-time figure rather than a download-time one.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$(mktemp -d /tmp/metal-profiler-cold.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
cargo fetch --locked >/dev/null 2>&1 || true
echo "== machine: $(nproc) logical cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== empty target directory: $dir"
status=0
CARGO_TARGET_DIR="$dir" /usr/bin/time -f '%e %U %S' -o "$dir.time" bash tools/test.sh || status=$?
read -r wall user sys <"$dir.time"
rm -f "$dir.time"
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v w="$wall" -v u="$user" -v s="$sys" -v st="$status" 'BEGIN {
  printf "== cold tools/test.sh: %d min %02d s wall, %.0f s CPU (user %.0f + sys %.0f), exit %d\n",
    int(w / 60), w - 60 * int(w / 60), u + s, u, s, st }'
exit "$status"
