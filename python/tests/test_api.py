"""The seed's API on corpus kernels: every public function of metal_profiler."""

import json
import random
import sys
import warnings

import pytest

import metal_profiler as mp
from conftest import DATA, MESA, MESA_KERNELS, REPO, STREAMS, mesa_bin, mesa_stats

KERNELS = DATA / "kernels.archive"


# ── profile_archive / profile_binary ─────────────────────────────────────


def test_profile_archive_matmul():
    r = mp.profile_archive(KERNELS, "matmul_naive")
    assert isinstance(r, mp.ProfileResult)
    assert r.name == "matmul_naive"
    assert r.gpu == "G13G"
    assert r.total_instructions == mesa_stats("matmul_naive_16x16")["inst"]
    assert r.max_threads == 1024
    assert r.occupancy_pct == pytest.approx(100.0)
    assert isinstance(r.bottleneck, str) and r.bottleneck
    # one loop, with its per-iteration cost
    assert len(r.loops) == 1
    loop = r.loops[0]
    assert loop.start_offset == loop.start and loop.end_offset == loop.end
    assert loop.depth == 1
    assert loop.cycles_per_iteration > 0
    assert loop.per_iteration_cycles == loop.cycles_per_iteration
    # one number per fact: the loop costs its largest bound, and the total
    # is the sum of its parts (the loop part = trip count x that cost)
    assert loop.bound["cycles"] == loop.cycles_per_iteration
    assert loop.bound["components"][loop.bound["by"]] == loop.cycles_per_iteration
    parts = r.breakdown
    assert sum(p["cycles"] for p in parts) == pytest.approx(r.total_cycles, abs=0.01 * len(parts))
    (lp,) = [p for p in parts if p["part"] == "loop"]
    assert lp["cycles"] == pytest.approx(loop.trip_count * loop.cycles_per_iteration, abs=0.1)
    assert r.paths["shortest"] <= r.paths["longest"] <= r.total_cycles
    assert loop.mem_loads == 2
    # the loop's two loads, lanes over the default 32x1x1 threadgroup: A's
    # row is one address for the SIMD-group, B's column consecutive lanes
    # at consecutive elements; B's address does not depend on the thread's
    # y position, so every thread along y re-reads it whatever the
    # threadgroup shape: the tiling advice, from that fact (issue 35)
    at = {i.addr for i in r.instructions if i.mnemonic == "device_load"}
    loads = {o: a for o, a in r.accesses.items() if o in at}
    assert sorted(a["lane_pattern"] for a in loads.values()) == ["contiguous", "uniform"], loads
    assert all(s.fact for s in r.suggestions)
    (tile,) = [s for s in r.suggestions if s.rule == "tile-global-loads"]
    assert "every thread along y" in tile.fact, tile.fact
    for s in r.suggestions:
        assert s.severity in ("high", "medium", "low")
        assert s.message and str(s).endswith(s.message)
    assert "metal-profiler: matmul_naive" in r.report
    assert r.disassembly.startswith("   0: ")


def test_to_html_is_a_self_contained_page_with_the_cfg():
    r = mp.profile_binary(mesa_bin("conv2d_kxk_nested"), "conv2d")
    page = r.to_html()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "https://" not in page and "<link" not in page and " src=" not in page
    # one SVG box per basic block, one shaded region per loop
    assert page.count('<g class="blk"') == r.kernel["cfg"]["blocks"]
    assert page.count('<rect class="loop"') == len(r.loops)
    # every instruction is an anchor of the annotated disassembly
    for d in r.kernel["instructions_detail"]:
        assert f'<tr id="k0-a{d["offset"]:x}"' in page
    # byte for byte the CLI's page
    args = ["--binary", str(mesa_bin("conv2d_kxk_nested")), "-f", "conv2d", "--format", "html"]
    code, out, _ = mp.run_cli(args)
    assert code == 0 and out == page
    dot = r.to_dot()
    assert dot.startswith('digraph "conv2d" {')
    assert dot.count("subgraph cluster_loop") == len(r.loops)


def test_profile_archive_selects_by_symbol_and_name():
    a = mp.profile_archive(KERNELS, "mandelbrot")
    b = mp.profile_archive(KERNELS, "mandelbrot_agc.main")
    assert a.to_json() == b.to_json()


def test_profile_archive_single_kernel_needs_no_name():
    r = mp.profile_archive(DATA / "texread.archive")
    assert r.name == "texread" or r.name  # named from the archive
    # texread has a prolog: the main part is profiled, the prolog summarised
    assert r.kernel.get("prolog") is not None
    r2 = mp.profile_archive(DATA / "simple_call.archive")
    assert r2.name == "simple_call"


def test_profile_archive_from_bytes_equals_path():
    data = KERNELS.read_bytes()
    assert mp.profile_archive(data, "matmul_naive").to_json() == mp.profile_archive(
        str(KERNELS), "matmul_naive"
    ).to_json()


def test_profile_binary_path_bytes_and_name(tmp_path):
    p = mesa_bin("cf_mandelbrot")
    # a file with nothing recorded beside it profiles as its bytes do
    lone = tmp_path / "kernel.bin"
    lone.write_bytes(p.read_bytes())
    a = mp.profile_binary(lone)
    b = mp.profile_binary(p.read_bytes())
    assert a.to_json() == b.to_json()
    # beside its layout.json the recorded threadgroup shape lays out the
    # lanes, as `metal-profile --binary FILE` does (issue 27)
    assert mp.profile_binary(p).to_json() != b.to_json()
    assert a.name == "kernel"
    c = mp.profile_binary(p, "mandelbrot")
    assert c.name == "mandelbrot"
    assert "metal-profiler: mandelbrot" in c.report


def test_profile_binary_offset():
    # the matmul kernel placed at 0x100 in a buffer of traps
    code = mesa_bin("matmul_naive_16x16").read_bytes()
    buf = b"\x08\x00" * 0x80 + code
    whole = mp.profile_binary(code)
    shifted = mp.profile_binary(buf, offset=0x100)
    assert shifted.total_instructions == whole.total_instructions
    assert [i.mnemonic for i in shifted.instructions] == [i.mnemonic for i in whole.instructions]


def test_trip_count_option():
    a = mp.profile_archive(KERNELS, "matmul_naive", trip_count=4)
    assert a.kernel["model"]["trip_count"] == 4
    assert a.loops[0].trip_count == 4


@pytest.mark.parametrize("name", MESA_KERNELS)
def test_mesa_corpus(name):
    """Every Mesa kernel: the Python view agrees with Mesa's stats for what
    the analysis issue guarantees, and the text report renders."""
    st = mesa_stats(name)
    r = mp.profile_binary(mesa_bin(name), name)
    assert r.total_instructions == st["inst"]
    assert r.max_threads == st["threads"]
    assert r.kernel["registers"]["highest_half_index"] == st["regs"]
    assert len(r.instructions) == st["inst"]
    assert r.report.startswith("╔")
    d = r.to_dict()
    assert d["schema"] == "metal-profiler/1"
    assert d == json.loads(r.to_json())


# ── disassemble / decode / list_functions ────────────────────────────────


@pytest.mark.parametrize("name", MESA_KERNELS)
def test_disassemble_matches_applegpu(name):
    expected = (MESA / name / "main.applegpu.txt").read_text()
    assert mp.disassemble(mesa_bin(name).read_bytes()) == expected


@pytest.mark.parametrize("stream", sorted(p.stem for p in STREAMS.glob("*.bin")))
def test_disassemble_streams(stream):
    def expected(path):
        # applegpu's `TODO:` debug prints are not part of the listing
        return "".join(
            l for l in path.read_text().splitlines(keepends=True) if not l.startswith("TODO:")
        )

    data = (STREAMS / f"{stream}.bin").read_bytes()
    assert mp.disassemble(data) == expected(STREAMS / f"{stream}.expected.txt")
    cryptic = STREAMS / f"{stream}.expected.cryptic.txt"
    if cryptic.exists():
        assert mp.disassemble(data, cryptic=True) == expected(cryptic)


def test_disassemble_offset_and_path():
    p = mesa_bin("cf_mandelbrot")
    data = p.read_bytes()
    assert mp.disassemble(p) == mp.disassemble(data)
    # from offset 4, addresses start at 0 (as `--offset 4`) unless base given
    tail = mp.disassemble(data, 4)
    assert tail.splitlines()[0].startswith("   0: ")
    based = mp.disassemble(data, 4, base=4)
    assert based.splitlines() == mp.disassemble(data).splitlines()[1:]


def test_decode_one():
    i = mp.decode(bytes.fromhex("3a8d46421aa00100"), 0xE)
    assert i.mnemonic == "fmadd32"
    assert i.operands == ["r3", "r3", "u18", "u16"]
    assert i.addr == 0xE and i.size == 8 and i.hex == "3a8d46421aa00100"
    assert i.defs == ["r3"] and "r3" in i.uses and "u18" in i.uses
    assert i.decoded


def test_list_functions():
    fs = mp.list_functions(DATA / "simple_call.archive")
    assert [(f.part, f.symbol, f.name) for f in fs] == [
        ("helper", "l__Z6helperPU9MTLdeviceKjj", "helper"),
        ("main", "_agc.main", "simple_call"),
    ]
    assert fs[1].text_offset == 0x180
    assert all(f.stage == "compute" and f.gpu == "G13G" for f in fs)
    fs = mp.list_functions(DATA / "texread.archive")
    assert [f.part for f in fs] == ["prolog", "main"]
    assert {f.name for f in mp.list_functions(KERNELS)} == {"matmul_naive", "mandelbrot"}


# ── parse_disassembly / analyze / format_report ──────────────────────────


def test_parse_disassembly_applegpu_listing():
    text = (MESA / "cf_mandelbrot" / "main.applegpu.txt").read_text()
    insns = mp.parse_disassembly(text)
    assert len(insns) == mesa_stats("cf_mandelbrot")["inst"]
    first = insns[0]
    assert (first.addr, first.offset, first.mnemonic) == (0, 0, "get_sr")
    assert first.operands == ["r1", "sr80 (thread_position_in_grid.x)"]
    assert first.hex == first.raw_bytes == "72051004"
    assert first.bytes == bytes.fromhex("72051004")
    assert first.decoded and first.defs == ["r1"]
    # the listing lines come back exactly
    lines = [l for l in text.splitlines() if l.strip()]
    assert [i.line.rstrip() for i in insns] == [l.rstrip() for l in lines]


def test_parse_then_analyze_equals_profile_binary():
    data = mesa_bin("matmul_naive_16x16").read_bytes()
    insns = mp.parse_disassembly(mp.disassemble(data))
    r = mp.analyze(insns)
    assert r.to_json() == mp.profile_binary(data).to_json()


def test_parse_text_without_hex_keeps_fields():
    insns = mp.parse_disassembly(
        "   0: get_sr           r1, sr80 (thread_position_in_grid.x)\n"
        "   4: fadd32           r0, r1, r2\n"
        "\n"
        "   8: <disassembly failed>\n"
        "garbage line\n"
    )
    assert [(i.addr, i.mnemonic) for i in insns] == [(0, "get_sr"), (4, "fadd32")]
    assert insns[1].operands == ["r0", "r1", "r2"]
    assert insns[1].operands_text == "r0, r1, r2"
    if not insns[1].decoded:
        # without the assembler the instruction has no machine code
        assert insns[1].bytes is None
        with pytest.raises(ValueError, match="no machine code"):
            mp.analyze(insns)


def test_parse_seed_annotated_lines():
    text = (
        "      a8: device_load        [MEM   1cy] r6, u0_u1, r8, unsigned      ◀ memory\n"
        "  │   ca: while_icmp         [      1cy] r0l, nseq, r3, u14, 2\n"
    )
    insns = mp.parse_disassembly(text)
    assert [(i.addr, i.mnemonic) for i in insns] == [(0xA8, "device_load"), (0xCA, "while_icmp")]
    assert insns[0].operands == ["r6", "u0_u1", "r8", "unsigned"]


def test_analyze_accepts_text_and_bytes():
    data = mesa_bin("ew_relu_f32").read_bytes()
    want = mp.profile_binary(data).to_json()
    assert mp.analyze(mp.disassemble(data)).to_json() == want
    assert mp.analyze(data).to_json() == want


def test_format_report():
    r = mp.analyze(mp.parse_disassembly(mp.disassemble(mesa_bin("cf_mandelbrot"))))
    text = mp.format_report(r)
    assert "metal-profiler: kernel" in text
    assert "── Registers & Occupancy ──" in text
    named = mp.format_report(r, "mandelbrot")
    assert "metal-profiler: mandelbrot" in named
    assert "── Disassembly ──" in mp.format_report(r, show_disasm=True)
    assert "\x1b[" in mp.format_report(r, color=True) or True  # colour optional
    with pytest.raises(TypeError):
        mp.format_report("not a result")


def test_occupancy_for_regs():
    # Mesa's table (shared/reference/timing.md): first row with regs <= max
    assert mp.occupancy_for_regs(0) == (1024, 100.0)
    assert mp.occupancy_for_regs(104) == (1024, 100.0)
    assert mp.occupancy_for_regs(105) == (896, 87.5)
    assert mp.occupancy_for_regs(256) == (384, 37.5)
    assert mp.occupancy_for_regs(257) == (0, 0.0)
    assert mp.occupancy_for_regs(-5) == (1024, 100.0)
    r = mp.profile_archive(KERNELS, "matmul_naive")
    assert mp.occupancy_for_regs(r.kernel["registers"]["highest_half_index"]) == (
        r.max_threads,
        r.occupancy_pct,
    )


def test_to_dict_is_json_of_to_json():
    r = mp.profile_archive(KERNELS, "mandelbrot")
    assert r.to_dict() == json.loads(r.to_json())
    assert r.to_dict() is not r.to_dict()
    k = r.to_dict()["kernels"][0]
    assert k["name"] == "mandelbrot"
    assert k["occupancy"]["percent"] == r.occupancy_pct
    assert k["occupancy"]["threads"] == r.max_threads
    assert k["bottleneck"] == r.bottleneck
    assert [l["cycles_per_iteration"] for l in k["loops"]] == [
        l.cycles_per_iteration for l in r.loops
    ]
    assert [s["message"] for s in k["suggestions"]] == [s.message for s in r.suggestions]


def test_seed_compatible_fields():
    r = mp.profile_archive(KERNELS, "matmul_naive")
    regs = r.kernel["registers"]
    assert r.half_regs_used == regs["allocated_half"]
    assert r.max_reg == regs["highest_half_index"] // 2
    assert r.max_live_gprs == (regs["peak_live_half"] + 1) // 2
    for k in ("f32", "f16", "scib", "ic"):
        assert getattr(r, f"{k}_cycles") == r.cycles[k]
    assert r.bottleneck_reason


# ── the seed's README examples, adapted to binaries ──────────────────────


def test_seed_readme_python_api_example():
    # report, disasm = profile_metal_file("kernel.metal", "my_kernel") needs
    # macOS; the same flow from a compiled archive:
    result = mp.profile_archive(KERNELS, "matmul_naive")
    report, disasm = result.report, result.disassembly
    assert "Registers & Occupancy" in report

    # Lower-level access
    from metal_profiler import analyze, format_report, occupancy_for_regs, parse_disassembly

    instructions = parse_disassembly(disasm)
    result = analyze(instructions)
    line1 = f"Occupancy: {result.occupancy_pct}%"
    line2 = f"Bottleneck: {result.bottleneck}"
    assert line1 == "Occupancy: 100.0%"
    assert line2.startswith("Bottleneck: ") and len(line2) > len("Bottleneck: ")
    assert "metal-profiler: matmul_naive" in format_report(result, "matmul_naive")
    assert occupancy_for_regs(18) == (1024, 100.0)


@pytest.mark.skipif(sys.platform == "darwin", reason="Metal is available on macOS")
def test_metal_source_is_runtime_error_off_macos():
    src = (DATA / "matmul.metal").read_text()
    with pytest.raises(RuntimeError, match="macOS"):
        mp.profile_metal_source(src, "matmul_naive")
    with pytest.raises(RuntimeError, match="macOS"):
        mp.profile_metal_file(DATA / "matmul.metal", "matmul_naive")
    with pytest.raises(RuntimeError, match="macOS"):
        mp.profile_metal_file(str(DATA / "matmul.metal"), "matmul_naive", include_dirs=[str(DATA)])


@pytest.mark.skipif(sys.platform != "darwin", reason="needs macOS with Metal")
def test_metal_file_on_macos():  # pragma: no cover - macOS only
    try:
        report, disasm = mp.profile_metal_file(DATA / "matmul.metal", "matmul_naive")
    except RuntimeError as e:  # no Xcode toolchain on this Mac
        pytest.skip(str(e))
    assert "metal-profiler: matmul_naive" in report
    assert mp.parse_disassembly(disasm)
    report2, _ = mp.profile_metal_source((DATA / "matmul.metal").read_text(), "matmul_naive")
    assert "metal-profiler: matmul_naive" in report2


# ── errors ───────────────────────────────────────────────────────────────


def test_missing_file():
    for f in (mp.profile_archive, mp.profile_binary, mp.list_functions, mp.disassemble):
        with pytest.raises(FileNotFoundError, match="no such file; check the path"):
            f(DATA / "does-not-exist.archive")


def test_bad_function_name():
    with pytest.raises(ValueError, match="no function named `nope`.*matmul_naive"):
        mp.profile_archive(KERNELS, "nope")


def test_ambiguous_without_name():
    with pytest.raises(ValueError, match="several kernels"):
        mp.profile_archive(KERNELS)


def test_truncated_archive():
    for f in (mp.profile_archive, mp.list_functions):
        with pytest.raises(ValueError, match="truncated"):
            f(DATA / "truncated.archive")


def test_not_an_archive():
    # the same Rust function refuses the CLI's positional input
    for f in (mp.profile_archive, mp.list_functions):
        with pytest.raises(ValueError, match="is not a Metal binary archive: unknown magic 0x.*profile_binary"):
            f(mesa_bin("cf_mandelbrot"))
    for data, what in [
        (b"", "the input is empty"),
        (b"\xcf\xfa", "only 2 bytes, too short"),
        (b"\x89PNG\r\n\x1a\n" + bytes(16), "a PNG image"),
        (b"# readme\n\ntext", "text starting"),
    ]:
        with pytest.raises(ValueError, match="the data is not a Metal binary archive: " + what):
            mp.profile_archive(data)


def test_bad_offsets():
    data = mesa_bin("cf_mandelbrot").read_bytes()
    with pytest.raises(ValueError, match="odd"):
        mp.profile_binary(data, offset=3)
    with pytest.raises(ValueError, match="past the end"):
        mp.disassemble(data, offset=len(data) + 2)


def test_undecodable():
    with pytest.raises(ValueError, match="cannot decode"):
        mp.decode(b"\xff\xff")
    with pytest.raises(TypeError):
        mp.profile_binary(12345)
    with pytest.raises(TypeError):
        mp.analyze([1, 2, 3])


def test_garbage_is_refused_not_crashes():
    # all of it undecodable: not code (the CLI's exit-1 message)
    with pytest.raises(
        ValueError,
        match=r"^the data does not look like G13 machine code: 100% of it does not decode \(is it an archive\? use profile_archive\(\)\)$",
    ):
        mp.profile_binary(b"\xff\xff" * 64)
    with pytest.raises(ValueError, match="does not look like G13 machine code"):
        mp.disassemble(b"\xff\xff" * 64)


def test_a_few_unknown_encodings_warn_and_profile():
    code = b"\xff\xff" + mesa_bin("matmul_naive_16x16").read_bytes()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = mp.profile_binary(code)
    assert any("1 of 26 positions did not decode" in str(x.message) for x in w), [str(x.message) for x in w]
    assert r.kernel["unknown_encodings"] == 1


def test_cut_and_empty_raw_code_raise():
    """Issue 21: never past the input; empty code is an error."""
    data = mesa_bin("matmul_naive_16x16").read_bytes()
    for n, at, have, need in [(1, 0, 1, 2), (3, 0, 3, 4), (147, 0x92, 1, 2)]:
        msg = (
            f"the data: the code ends inside an instruction at {at:#x}: {have} of {need} bytes; "
            "the input is cut short or offset is wrong: give the whole code"
        )
        for f in (mp.profile_binary, mp.disassemble):
            with pytest.raises(ValueError) as ei:
                f(data[:n])
            assert str(ei.value) == msg
    for f in (mp.profile_binary, mp.disassemble):
        with pytest.raises(ValueError, match="^the data is empty: no machine code"):
            f(b"")
        with pytest.raises(ValueError, match="is the end of the data"):
            f(data, offset=len(data))
    with pytest.raises(ValueError, match="holds no instructions"):
        mp.assemble("; nothing\n")


def test_random_inputs_never_crash():
    """Random bytes and mutated archives: results or Python exceptions,
    never a crash of the interpreter."""
    rng = random.Random(8)
    base = KERNELS.read_bytes()
    allowed = (ValueError, RuntimeError)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in range(150):
            if n % 2:
                data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 96)))
            else:
                b = bytearray(base)
                for _ in range(rng.randrange(1, 8)):
                    b[rng.randrange(len(b))] = rng.randrange(256)
                data = bytes(b[: rng.randrange(len(b) + 1)])
            for f in (
                lambda d: mp.profile_archive(d, "matmul_naive"),
                mp.list_functions,
                mp.profile_binary,
                mp.disassemble,
            ):
                try:
                    f(data)
                except allowed:
                    pass
            try:
                mp.analyze(mp.parse_disassembly(data.decode("latin-1")))
            except allowed:
                pass


# ── kernels that call helpers (issue 12) ──────────────────────────────────


def test_simple_call_covers_the_helper():
    r = mp.profile_archive(DATA / "simple_call.archive", "simple_call")
    calls = [c for c in r.calls if c.caller == r.functions[0].entry]
    assert len(calls) == 1
    c = calls[0]
    assert c.resolved and c.symbol == "l__Z6helperPU9MTLdeviceKjj"
    assert c.at == 0x1B6 and c.target == 0
    helper = [f for f in r.functions if not f.main]
    assert len(helper) == 1 and helper[0].symbol == c.symbol
    h = helper[0]
    # the kernel's figures cover the helper
    k = r.kernel
    assert k["registers"]["highest_half_index"] >= h.highest_half_index == 53
    assert k["spills"] >= h.spills == 5 and k["fills"] >= h.fills == 5
    assert k["total_cycles"] >= h.total_cycles > 0
    assert c.cycles == pytest.approx(h.total_cycles, abs=0.02)
    assert isinstance(c, mp.Call) and isinstance(h, mp.Function)
    assert r.functions[0].main and r.functions[0].live_in == []
    # the helper's own rows (its annotated listing's), main's are the kernel's
    rows = h.instructions_detail
    assert len(rows) == h.instructions and rows[0]["offset"] == h.entry
    assert any(d.get("stack_kind") == "save" for d in rows)
    assert r.functions[0].instructions_detail == []


def test_suggestions_include_the_helpers():
    """Issue 29: ``suggestions`` holds every function's findings, a called
    function's named by ``function`` (the text report lists them under
    Calls); main's own keep ``function is None``."""
    r = mp.profile_archive(DATA / "simple_call.archive", "simple_call")
    k = r.kernel
    helper = [f for f in k["functions"] if not f["main"]][0]
    assert helper["suggestions"], "the helper has findings"
    got = [(s.function, s.message) for s in r.suggestions]
    want = [(None, s["message"]) for s in k["suggestions"]] + [
        (helper["symbol"], s["message"]) for s in helper["suggestions"]
    ]
    assert got == want
    assert any(s.function == "l__Z6helperPU9MTLdeviceKjj" for s in r.suggestions)


def test_native_syntax_round_trip():
    """A stack adjust prints as `stack_store` in applegpu syntax and as
    itself in native syntax; native text assembles back to the same code."""
    code = (REPO / "testdata/archives/real/simple_call_compute_shader.bin").read_bytes()
    applegpu = mp.disassemble(code)
    native = mp.disassemble(code, native=True)
    assert "stack_adjust" in native and "stack_adjust" not in applegpu and "TODO" not in native
    assert mp.disassemble(mp.assemble(native), native=True) == native
    with pytest.raises(ValueError, match="pick one"):
        mp.disassemble(code, cryptic=True, native=True)


def test_divergence_branches():
    # cf_mandelbrot: the escape loop exits on the pixel's own value (NIR: div loop)
    r = mp.profile_binary(mesa_bin("cf_mandelbrot").read_bytes())
    d = r.divergence
    assert d == {
        "if_uniform": 0,
        "if_divergent": 0,
        "loop_uniform": 0,
        "loop_divergent": 1,
        "uniform_loads": 0,
    }
    assert r.functions[0].divergence == d
    loops = [b for b in r.branches if b.kind == "loop"]
    assert len(loops) == 1 and loops[0].uniform is False
    assert "slowest thread" in loops[0].reason
    assert isinstance(loops[0].arms_cycles, float)
    assert "divergent" in str(loops[0])
    assert r.to_dict()["kernels"][0]["functions"][0]["branches"][0]["at"] == r.branches[0].at


def test_uniform_address_loads():
    # scan_add_block_offsets reads its block's offset at the threadgroup
    # position (one address for the whole SIMD-group); its other loads and
    # its store are thread-indexed
    r = mp.profile_binary(mesa_bin("scan_add_block_offsets").read_bytes())
    rows = r.kernel["instructions_detail"]
    marked = [d["offset"] for d in rows if d.get("uniform_address")]
    assert r.uniform_address_loads == marked and len(marked) == 1
    assert r.divergence["uniform_loads"] == 1
    assert r.functions[0].divergence["uniform_loads"] == 1
    assert any(s.rule == "uniform-address-loads" for s in r.suggestions)
    # a kernel without them: nothing marked
    r = mp.profile_binary(mesa_bin("cf_mandelbrot").read_bytes())
    assert r.uniform_address_loads == []


def test_accesses():
    # ew_relu_f32: x[gid.x] read and written back, one contiguous line each
    r = mp.profile_binary(mesa_bin("ew_relu_f32").read_bytes())
    acc = r.accesses
    assert sorted(acc) == [0x4, 0x1C]
    for a in acc.values():
        assert a["space"] == "device"
        assert a["lane_pattern"] == "contiguous" and a["lane_stride"] == 4
        assert a["lines_per_request"] == 1
        assert "lane_stride_expr" not in a  # a constant stride
    rows = r.kernel["instructions_detail"]
    assert [d["offset"] for d in rows if "access" in d] == sorted(acc)


def test_accesses_runtime_stride():
    # regpressure_gemm8x8_wg640: each thread's own row of A, lanes 32*K
    # bytes apart (K the push constant in u16): the CLI's fields
    r = mp.profile_binary(mesa_bin("regpressure_gemm8x8_wg640").read_bytes())
    a = r.accesses[0x1FC]
    assert a["lane_pattern"] == "strided" and a["lane_stride"] is None
    assert a["lane_stride_expr"] == "32*u16"
    assert a["lines_per_request_if_wide"] == 32 and a["wide_from"] == 4


def test_call_targets_in_raw_code_warn_or_raise():
    """Issue 21: in raw code, a call whose target holds no code to follow is a
    warning naming the call (the profile is made); a called function cut
    by the end of the input is a ValueError, as `metal-profile --binary`."""
    main = mp.assemble("mov_imm r0l, 0\ncall 0x40\nstop\n")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = mp.profile_binary(main)
    want = "the call at 0x4 to 0x40 is not followed: it is past the end of the input"
    assert any(want in str(x.message) for x in w), [str(x.message) for x in w]
    assert any(want in m for m in r.warnings), r.warnings
    assert r.kernel["instructions"] == len(mp.disassemble(main).splitlines())
    # the helper is there: followed, no warning
    helper = mp.assemble("mov_imm r4, 1, 0b0\niadd r4, r4.sx, 1\nret r1\n")
    ok = main.ljust(0x40, b"\0") + helper
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = mp.profile_binary(ok)
    assert not [x for x in w if "not followed" in str(x.message)]
    assert len(r.functions) == 2, r.functions
    # the helper runs into the end of the input inside an instruction
    cut = main.ljust(0x40, b"\0") + mp.assemble("mov_imm r4, 1, 0b0\n") + mp.assemble("get_sr r1, sr80\n")[:2]
    with pytest.raises(ValueError, match=r"the function at 0x40 \(called at 0x4\): the code ends inside an instruction at 0x46: 2 of 4 bytes"):
        mp.profile_binary(cut)


def test_advice_facts_sites_stack_kinds_and_all_findings():
    """Issue 27 items 4-5: suggestions carry ``fact`` and ``sites``; stack
    accesses their ``stack_kind``; ``all_findings=True`` keeps the findings
    under 1% of the estimate, which the default hides."""
    stack = REPO / "testdata" / "apple_stack" / "simple_s16_compute_shader.bin"
    r = mp.profile_binary(stack)
    kinds = r.stack_kinds
    assert kinds and set(kinds.values()) == {"private_array"}
    rules = [s.rule for s in r.suggestions]
    assert "private-array" in rules and "spills" not in rules
    s = next(s for s in r.suggestions if s.rule == "private-array")
    assert s.fact and len(s.sites) > 1 and s.offset in s.sites
    tiled = mesa_bin("matmul_tiled_32x8")
    every = mp.profile_binary(tiled, all_findings=True)
    default = mp.profile_binary(tiled)
    minor = [
        s for s in every.suggestions if s.figures.get("share_pct", 100) < 1.0
    ]
    assert len(every.suggestions) - len(default.suggestions) == len(minor)
    assert all(s.figures.get("share_pct", 100) >= 1.0 for s in default.suggestions)
