"""Shared paths and helpers of the metal_profiler tests.

The tests use files inside the repository only (so a fresh clone works):
python/tests/data (archives built from real G13 code, see its NOTE.md),
testdata/mesa (Mesa-compiled kernels with Mesa's stats), testdata/applegpu
(streams with applegpu's expected listings).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
REPO = TESTS.parents[1]
MESA = REPO / "testdata" / "mesa"
STREAMS = REPO / "testdata" / "applegpu" / "streams"

MESA_KERNELS = sorted(p.name for p in MESA.iterdir() if (p / f"{p.name}.bin").is_file())


def mesa_bin(name: str) -> Path:
    return MESA / name / f"{name}.bin"


def mesa_stats(name: str) -> dict:
    return json.loads((MESA / name / "stats.json").read_text())


def console_script() -> list:
    """The installed `metal-profile` console script (next to the running
    interpreter, as pip installs it into the venv)."""
    exe = Path(sys.executable).parent / ("metal-profile.exe" if os.name == "nt" else "metal-profile")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("metal-profile")
    if found is None:
        # `pip install .` installs it (pyproject [project.scripts]); under
        # CI=true its absence is a failure, not a skip
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail("the metal-profile console script is not installed (pip install .)")
        pytest.skip("the metal-profile console script is not installed")
    return [found]


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    return subprocess.run(cmd, capture_output=True, env=env, timeout=120, **kw)


def rust_binary():
    """The Rust `metal-profile` binary if a cargo build left one (optional)."""
    cands = []
    if os.environ.get("METAL_PROFILE_BIN"):
        cands.append(Path(os.environ["METAL_PROFILE_BIN"]))
    for t in (os.environ.get("CARGO_TARGET_DIR"), str(REPO / "target")):
        if t:
            cands += [Path(t) / "debug" / "metal-profile", Path(t) / "release" / "metal-profile"]
    newest_source = max(
        # what the binary is built from (a test-only change does not rebuild it)
        (f.stat().st_mtime for f in (REPO / "crates").glob("*/src/**/*.rs")),
        default=0.0,
    )
    for c in cands:
        if c.is_file() and os.access(c, os.X_OK):
            # a binary older than the sources may not match the installed module
            if c == cands[0] and os.environ.get("METAL_PROFILE_BIN"):
                return c
            if c.stat().st_mtime >= newest_source:
                return c
    return None
