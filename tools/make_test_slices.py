#!/usr/bin/env python3
"""Copy compact slices of the shared applegpu corpus into testdata/ so that a
fresh clone tests itself. Run from the repo root with ../shared present:

    python3 tools/make_test_slices.py

Picks up to 8 cases per descriptor index (every size, cases with TODO: lines,
context-dependent ones first), deterministically, and a few whole streams.
"""
import json
import os
import shutil

SRC = "../shared/corpus/applegpu"
DST = "testdata/applegpu"
PER_FORM = 8
STREAMS = {
    "stream01_plain": True,       # with cryptic listing
    "stream12_zero_pad": True,
    "stream14_lone_zero": False,  # <disassembly failed> lines
    "stream19_ctx": False,        # context-dependent first match
}

def main():
    os.makedirs(DST + "/streams", exist_ok=True)
    by_idx = {}
    with open(SRC + "/encodings.jsonl") as f:
        for line in f:
            c = json.loads(line)
            by_idx.setdefault(c["idx"], []).append((line, c))
    out = []
    for idx in sorted(by_idx):
        cases = by_idx[idx]
        # priority: context-dependent, with debug lines, then one per size, then the rest
        chosen = []
        def take(pred):
            for line, c in cases:
                if len(chosen) >= PER_FORM:
                    return
                if pred(c) and line not in chosen:
                    chosen.append(line)
                    return
        take(lambda c: not c["ctx_free"])
        take(lambda c: c["pre"])
        for size in sorted({c["size"] for _, c in cases}):
            take(lambda c, s=size: c["size"] == s)
        for line, c in cases:
            if len(chosen) >= PER_FORM:
                break
            if line not in chosen:
                chosen.append(line)
        out.extend(chosen)
    with open(DST + "/encodings.slice.jsonl", "w") as f:
        f.writelines(out)
    for name, cryptic in STREAMS.items():
        shutil.copy(f"{SRC}/streams/{name}.bin", f"{DST}/streams/")
        shutil.copy(f"{SRC}/streams/{name}.expected.txt", f"{DST}/streams/")
        if cryptic:
            shutil.copy(f"{SRC}/streams/{name}.expected.cryptic.txt", f"{DST}/streams/")
    print(len(out), "cases,", len(STREAMS), "streams")

main()
