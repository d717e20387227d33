#!/usr/bin/env bash
# Regenerates docs/accuracy.md: builds the metal-profile CLI (the mixes are
# scored through it), then runs the accuracy example. Extra arguments go to
# the example, e.g. `tools/accuracy.sh --mixes held_out.tsv` to score another
# copy of the mix table (printed to stdout instead of docs/accuracy.md).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q -p metal-profiler
cargo build -q --release -p agx-analysis --example accuracy
if [ "$#" -gt 0 ]; then
    exec ./target/release/examples/accuracy --cli target/debug/metal-profile "$@"
fi
./target/release/examples/accuracy --cli target/debug/metal-profile > docs/accuracy.md
echo "wrote docs/accuracy.md"
