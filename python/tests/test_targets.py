"""Issue 14 from Python: `profile_metal_file(..., target=...)` through the
offline path (a fake `xcrun` from testdata/fake-xcrun first on PATH, as the
Rust tests use) and `profile_archive(..., gpu=...)`."""

import os

import pytest

import metal_profiler as mp
from conftest import DATA, REPO

FAKE = REPO / "testdata" / "fake-xcrun"
KERNELS = DATA / "kernels.archive"


@pytest.fixture
def fake_xcrun(monkeypatch, tmp_path):
    log = tmp_path / "xcrun.log"
    monkeypatch.setenv("PATH", f"{FAKE}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_XCRUN_LOG", str(log))
    # metal-tt "writes" this archive (G13G code of matmul_naive and others)
    monkeypatch.setenv("FAKE_XCRUN_ARCHIVE", str(KERNELS))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("FAKE_XCRUN_FAIL", raising=False)
    return log


def test_profile_metal_file_with_target(fake_xcrun):
    report, disasm = mp.profile_metal_file(DATA / "matmul.metal", "matmul_naive", target="g13g")
    assert "metal-profiler: matmul_naive" in report
    assert "GPU G13G (M1)" in report
    assert mp.parse_disassembly(disasm)
    calls = fake_xcrun.read_text().splitlines()
    assert calls[2].startswith("-sdk macosx metal-tt -arch applegpu_g13g -o ")
    assert calls[2].endswith("pipelines.mtlp-json")


def test_profile_metal_source_with_targets_and_gpu(fake_xcrun):
    src = (DATA / "matmul.metal").read_text()
    # the prepared archive has only G13G: the missing G14G slice is said
    with pytest.warns(RuntimeWarning, match="metal-tt wrote no applegpu_g14g slice"):
        report, _ = mp.profile_metal_source(
            src, "matmul_naive", target=["g13g", "g14g"], gpu="g13g"
        )
    assert "GPU G13G (M1)" in report
    assert "-arch applegpu_g13g -arch applegpu_g14g" in fake_xcrun.read_text()


def test_tool_failure_is_the_clis_message(fake_xcrun, monkeypatch):
    monkeypatch.setenv("FAKE_XCRUN_FAIL", "air_version")
    # the fix in Python's terms: the keyword, not the flag
    with pytest.raises(RuntimeError, match='min_macos="14.0"'):
        mp.profile_metal_file(DATA / "matmul.metal", "matmul_naive", target="g14g")
    with pytest.raises(RuntimeError, match="not a known Apple GPU architecture"):
        mp.profile_metal_file(DATA / "matmul.metal", "matmul_naive", target="g99z")


def test_profile_archive_gpu():
    r = mp.profile_archive(KERNELS, "matmul_naive", gpu="G13G")
    assert r.to_json()  # labelled and profiled
    assert '"gpu_name": "G13G (M1)"' in r.to_json()
    with pytest.raises(Exception, match="no slice for GPU `g14g` in this archive; it holds: G13G"):
        mp.profile_archive(KERNELS, "matmul_naive", gpu="g14g")


def test_compile_flags_and_options_are_keywords(fake_xcrun, tmp_path):
    # -D, --std, --min-macos, --keep-archive as keywords (issue 37 item 3)
    kept = tmp_path / "kept.archive"
    report, _ = mp.profile_metal_file(
        DATA / "matmul.metal", "matmul_naive", target="g13g", defines=["N=4", "M"],
        std="metal3.0", min_macos="14.0", keep_archive=kept, threadgroup=(16, 16, 1),
        chip="M1 Max",
    )
    metal = fake_xcrun.read_text().splitlines()[0]
    assert "-std=metal3.0 -DN=4 -DM -target air64-apple-macos14.0" in metal, metal
    assert kept.read_bytes() == KERNELS.read_bytes()
    # the model options reach the profile of the built archive
    r = mp.profile_archive(KERNELS, "matmul_naive", threadgroup=(16, 16, 1), chip="M1 Max")
    assert report == mp.format_report(r, None)
    assert report != mp.profile_metal_file(DATA / "matmul.metal", "matmul_naive", target="g13g")[0]
