"""ProfileResult reads the one record (issue 20, item 6): every attribute is
a field of the kernel's JSON record, nothing parsed from prose or from
assembly text; in a notebook the result shows as the HTML report."""

import metal_profiler as mp
from conftest import MESA_KERNELS, REPO, mesa_bin

KERNELS = str(REPO / "examples" / "kernels.archive")


def _results():
    yield mp.profile_archive(KERNELS, "matmul_naive")
    yield mp.profile_archive(KERNELS, "mandelbrot")
    for name in MESA_KERNELS[:8]:
        yield mp.profile_binary(mesa_bin(name), name)


def test_register_counts_are_record_fields():
    for r in _results():
        regs = r.kernel["registers"]
        assert r.max_live_gprs == regs["peak_live_gprs"]
        assert r.allocated_gprs == regs["allocated_gprs"]
        assert r.max_reg == regs["highest_gpr"]
        assert r.uniform_regs_used == regs["uniform_gprs"]
        assert r.half_regs_used == regs["allocated_half"]
        # and the record says what the text report says
        assert f"({regs['allocated_gprs']} GPRs;" in r.report
        assert f"{regs['file_half']} allocated" in r.report


def test_bottleneck_reason_is_the_record_bound_in_words():
    r = mp.profile_archive(KERNELS, "matmul_naive")
    assert r.bound_by == r.kernel["bound_by"] == "device_bandwidth"
    assert r.bottleneck_reason == r.kernel["bottleneck_unit"]
    assert r.bottleneck_reason == "device-memory (DRAM) bandwidth"


def test_mix_is_the_record_and_the_report_prints_it():
    for r in _results():
        mix = r.mix
        assert mix == r.kernel["mix"]
        assert sum(mix["by_unit"].values()) == r.total_instructions
        assert sum(m["count"] for m in mix["by_mnemonic"]) == r.total_instructions
        units = " · ".join(f"{u} {n}" for u, n in mix["by_unit"].items())
        assert f"by unit: {units}\n" in r.report


def test_operands_come_from_the_decoder_not_a_text_column():
    for r in _results():
        for i in r.instructions:
            # the operands joined are the text after the mnemonic, whatever
            # the mnemonic's length
            assert i.text.startswith(i.mnemonic)
            assert i.text[len(i.mnemonic) :].strip() == ", ".join(i.operands)


def test_repr_html_is_the_html_report_as_a_fragment():
    r = mp.profile_archive(KERNELS, "matmul_naive")
    frag = r._repr_html_()
    page = r.to_html()
    # the page's body, in one div whose styles are scoped to it (issue 29:
    # a notebook keeps its own look; test_notebook.py renders one)
    body = page[page.index("<body>\n") + len("<body>\n") : page.index("<script>")]
    assert "matmul_naive" in body
    assert frag.startswith('<div class="metal-profiler-report" id="metal-profiler-report-')
    assert body in frag
    for tag in ("<!DOCTYPE", "<html", "<head>", "<body", "<script"):
        assert tag not in frag
