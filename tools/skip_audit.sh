#!/usr/bin/env bash
# Which tests could pass by not testing? (issue 36 item 6)
#
# Runs every Rust test alone under strace with CI=true and the shared
# corpora pointed at a folder that does not exist, and lists each test that
# looked for shared data (a file access under that folder or a `shared`
# folder beside the repository) and still passed: such a test returned
# early instead of failing. Prints one line per test (`rc accesses crate
# test`) into $OUT (default target/skip-audit.txt) and the suspects at the
# end; exits 1 when there is one. Slow (one process per test: ~10 min on 2
# cores); not part of tools/test.sh. Needs strace (apt-get install strace).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
out="${OUT:-target/skip-audit.txt}"
missing="/nonexistent-shared-$$"
beside="$(cd .. && pwd)/shared"
export CI=true METAL_PROFILER_SHARED="$missing"
: >"$out"
# every test executable with its package's directory (cargo's own JSON)
cargo test --workspace --locked --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys, os
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"], os.path.dirname(m["manifest_path"]))
' | while read -r exe dir; do
  "$exe" --list 2>/dev/null | sed -n 's/: test$//p' | while read -r t; do
    trace="$(mktemp)"
    rc=0
    (cd "$dir" && timeout 600 strace -f -qq -e trace=openat,newfstatat,statx,stat,access,readlink \
      -o "$trace" "$exe" --exact "$t" -q >/dev/null 2>&1) || rc=$?
    hits=$(grep -c -e "$missing" -e "$beside" "$trace" || true)
    rm -f "$trace"
    echo "$rc $hits ${dir#"$root"/} $t" >>"$out"
  done
done
suspects="$(awk '$1 == 0 && $2 > 0' "$out")"
echo "$(wc -l <"$out") tests run; suspects (looked for shared data, passed anyway):"
if [ -n "$suspects" ]; then
  printf '%s\n' "$suspects"
  exit 1
fi
echo "none"
