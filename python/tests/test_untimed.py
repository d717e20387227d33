"""profile_untimed(): the profile of Apple9 (M3/M4) code, the same record
as ``metal-profile --binary FILE --gpu g16g --format json``."""

import json
import subprocess

import pytest

import metal_profiler as mp
from conftest import REPO, console_script

EXAMPLE = REPO / "examples" / "apple9_loop.a9bin"


def test_example_profile_fields():
    r = mp.profile_untimed(EXAMPLE, "g16g", offset=0x40)
    assert r.isa == "Apple9" and r.gpu == "G16G"
    assert r.timing["model"] is None
    assert r.instructions == 9 and r.code_bytes == 0x42
    assert [(l["start"], l["end"], l["depth"]) for l in r.loops] == [(0x8, 0x2E, 1)]
    assert r.loops[0]["memory"] == [0x8, 0x1C]
    assert [m["dir"] for m in r.memory] == ["load", "store"]
    assert r.registers["lower_bound"] is False
    assert r.registers["file_gprs"] == 96
    assert "Branches (" in r.report and "Loop 0" in r.html
    # the cycle-bearing keys are kept with null (issue 36: one record shape)
    assert r.data["cycles"] is None and r.data["total_cycles"] is None
    assert r.functions[0]["branches"][0]["kind"] == "if"
    # the CFG's blocks (the DOT view's nodes): the loop is block 1
    assert [(b["start"], b["end"], b["instructions"], b["loop"]) for b in r.blocks] == [
        (0x0, 0x4, 2, None), (0x8, 0x2E, 5, 0), (0x38, 0x3E, 2, None)]
    # bytes profile alike, named "the data"
    b = mp.profile_untimed(EXAMPLE.read_bytes(), "g16g", offset=0x40)
    assert b.loops == r.loops and b.registers == r.registers


def test_same_document_as_the_cli():
    exe = console_script()
    p = subprocess.run(
        exe + ["--binary", str(EXAMPLE), "--gpu", "g16g", "--offset", "0x40", "--format", "json"],
        capture_output=True, text=True,
    )
    assert p.returncode == 0, p.stderr
    r = mp.profile_untimed(str(EXAMPLE), "g16g", offset=0x40)
    assert json.loads(p.stdout) == json.loads(r.to_json())


def test_g13_is_timed_and_bad_code_warns():
    # profile_untimed is profile_binary(gpu=) (issue 36): a GPU with a
    # timing model gets the timed profile; Apple9 bytes are not G13 code
    r = mp.profile_untimed(REPO / "examples" / "matmul_naive.bin", "g13g")
    assert isinstance(r, mp.ProfileResult) and r.gpu == "G13G" and r.total_cycles > 0
    with pytest.raises(ValueError, match="does not look like G13 machine code"):
        mp.profile_untimed(EXAMPLE, "g13g")
    # mov_imm, then an encoding key no source sizes: framing stops
    code = bytes([0x04, 0x00, 0x1F, 0x03, 0, 0, 0, 0, 0x0E, 0, 0, 0])
    with pytest.warns(RuntimeWarning, match="framing stops at 0x2"):
        r = mp.profile_untimed(code, "g16g")
    assert r.framing["stopped"]["offset"] == 2
