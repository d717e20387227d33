"""Python equals the CLI (issue 37 item 3).

The signature-drift test walks every option of ``metal-profile`` and of its
subcommands, read from clap's own ``Command`` through the native module
(``_native.cli_options()``), against the Python signatures
(``inspect.signature``): an option that changes a result must be a keyword
of every function it applies to, with the CLI's default; the others are in
a table with the reason they have no keyword. Then each keyword is checked
to give the CLI's JSON for the same option.
"""

import inspect
import json

import pytest

import metal_profiler as mp
from metal_profiler import _native
from conftest import REPO

EXAMPLES = REPO / "examples"
KERNELS = EXAMPLES / "kernels.archive"
TEXREAD = EXAMPLES / "texread.archive"
MATMUL_BIN = EXAMPLES / "matmul_naive.bin"
APPLE9 = EXAMPLES / "apple9_loop.a9bin"

# the functions that profile one kernel, and where the model options apply
PROFILE = ("profile_binary", "profile_untimed", "profile_archive",
           "profile_metal_file", "profile_metal_source")
MODEL = PROFILE + ("analyze",)
MODEL_MANY = MODEL + ("profile_many",)
METAL = ("profile_metal_file", "profile_metal_source")
GPU = PROFILE + ("list_functions", "disassemble", "profile_many", "diff")


def kw(functions, name):
    """The option is the keyword ``name`` of each of ``functions``."""
    return {f: name for f in functions}


# (command, flag) -> {function: keyword}, or the reason it has no keyword.
# Flags as `--long`, `-s` or `<id>` (positional); command "" is the main one.
OPTIONS = {
    ("", "<input>"): "the input is the first argument: profile_archive(path), "
                     "profile_metal_file(path); `-` (stdin): pass the bytes",
    ("", "--binary"): "raw code is profile_binary(path_or_bytes)",
    ("", "--source"): "Metal source text is profile_metal_source(source)",
    ("", "--function"): {**kw(PROFILE[:1] + PROFILE[2:], "function_name"),
                         "analyze": "kernel_name"},
    ("", "--disasm-only"): "the listing alone is disassemble() (or result.disassembly)",
    ("", "--allow-unknown"): "only the exit code (4): Python returns the result and "
                             "issues the warning as a RuntimeWarning",
    ("", "--show-disasm"): {"format_report": "show_disasm"},
    ("", "--all-findings"): kw(MODEL, "all_findings"),
    ("", "--offset"): kw(("profile_binary", "profile_untimed", "disassemble"), "offset"),
    ("", "--base"): kw(("profile_binary", "profile_untimed", "disassemble"), "base"),
    ("", "--syntax"): {"disassemble": ("cryptic", "native")},
    ("", "--list"): "the functions of an archive are list_functions()",
    ("", "--gpu"): kw(GPU[:-2], "gpu"),
    ("", "--part"): kw(("profile_archive",) + METAL, "part"),
    ("", "--format"): "the output form: ProfileResult.report, to_json(), to_html(), to_dot()",
    ("", "--output"): "writing a file: Python returns the text",
    ("", "--color"): {"format_report": "color"},
    ("", "--trip-count"): {**kw(MODEL_MANY, "trip_count"), **kw(MODEL_MANY, "trip_counts")},
    ("", "--l1-hit-latency"): kw(MODEL_MANY, "l1_hit_latency"),
    ("", "--l1-miss-latency"): kw(MODEL_MANY, "l1_miss_latency"),
    ("", "--l1-hit-rate"): kw(MODEL_MANY, "l1_hit_rate"),
    ("", "--chip"): kw(MODEL_MANY, "chip"),
    ("", "--threadgroup"): kw(MODEL_MANY, "threadgroup"),
    ("", "--jobs"): "the cores one profile uses: the output is the same for any N "
                    "(Python uses every core the host allows)",
    ("", "--explain-model"): "prints the timing model's tables, not a profile of input",
    ("", "--keep-archive"): kw(METAL, "keep_archive"),
    ("", "--all"): "every kernel of a .metal source: profile_metal_file() per name, or "
                   "`metal-profile export --all` then profile_many()",
    ("", "--target"): kw(METAL, "target"),
    ("", "--jit"): kw(METAL, "jit"),
    ("", "--min-macos"): kw(METAL, "min_macos"),
    ("", "-I"): kw(METAL, "include_dirs"),
    ("", "-D"): kw(METAL, "defines"),
    ("", "--std"): kw(METAL, "std"),
    ("batch", "<paths>"): {"profile_many": "paths"},
    ("batch", "--jobs"): {"profile_many": "jobs"},
    ("batch", "--format"): "profile_many() returns the JSON document as a dict",
    ("batch", "--output"): "writing a file: Python returns the document",
    ("batch", "--trip-count"): {"profile_many": "trip_count"},
    ("batch", "--l1-hit-latency"): {"profile_many": "l1_hit_latency"},
    ("batch", "--l1-miss-latency"): {"profile_many": "l1_miss_latency"},
    ("batch", "--l1-hit-rate"): {"profile_many": "l1_hit_rate"},
    ("batch", "--chip"): {"profile_many": "chip"},
    ("batch", "--threadgroup"): {"profile_many": "threadgroup"},
    ("batch", "--gpu"): {"profile_many": "gpu"},
    ("batch", "--allow-unknown"): "only the exit code (4): Python returns the document "
                                  "and issues RuntimeWarnings",
    ("diff", "<old>"): {"diff": "old"},
    ("diff", "<new>"): {"diff": "new"},
    ("diff", "--fail-on"): {"diff": "fail_on"},
    ("diff", "--format"): "diff() returns the JSON document as a dict",
    ("diff", "--output"): "writing a file: Python returns the document",
    ("diff", "--jobs"): {"diff": "jobs"},
    ("diff", "--all"): "the text and markdown tables only: the JSON document diff() "
                       "returns lists every kernel",
    ("diff", "--allow-unknown"): "only the exit code (4): Python returns the document "
                                 "and issues RuntimeWarnings",
    ("diff", "--gpu"): {"diff": "gpu"},
    ("asm", "<file>"): {"assemble": "text"},
    ("asm", "--output"): "assemble() returns the bytes",
    ("asm", "--check"): "assemble() raises ValueError on an error: calling it checks",
    ("asm", "--syntax"): "only which warnings are printed: the bytes do not depend on it",
    ("export", "<source>"): "export writes an archive file; profile_metal_file("
                            "keep_archive=PATH) saves the one it builds",
    ("export", "--function"): "as <source>",
    ("export", "--all"): "as <source>",
    ("export", "--output"): "as <source>",
    ("export", "--target"): "as <source>",
    ("export", "--jit"): "as <source>",
    ("export", "--min-macos"): "as <source>",
    ("export", "-I"): "as <source>",
    ("export", "-D"): "as <source>",
    ("export", "--std"): "as <source>",
}

# Python defaults that mean "the flag not given" besides None/False/the
# CLI's own default value: no offset or base is 0, no gate is ()
NO_FLAG = {"offset": 0, "base": 0, "fail_on": ()}


def flag(o: dict) -> str:
    if o["positional"]:
        return f"<{o['id']}>"
    return f"--{o['long']}" if o["long"] else f"-{o['short']}"


def cli_options():
    return {(o["command"], flag(o)): o for o in _native.cli_options()}


def drift(api) -> list:
    """What keeps the Python API (``api``: a module or namespace) from
    equalling the CLI: options missing from OPTIONS, stale entries,
    keywords missing from a signature or with another default."""
    opts = cli_options()
    problems = [f"{c or 'main'} {f}: not in OPTIONS (give it a keyword or a reason)"
                for (c, f) in opts if (c, f) not in OPTIONS]
    problems += [f"{c or 'main'} {f}: in OPTIONS but not a CLI option"
                 for (c, f) in OPTIONS if (c, f) not in opts]
    for key, where in OPTIONS.items():
        if key not in opts:
            continue
        if isinstance(where, str):
            if not where.strip():
                problems.append(f"{key}: a reason is needed")
            continue
        o = opts[key]
        for fn, names in where.items():
            params = inspect.signature(getattr(api, fn)).parameters
            for name in (names if isinstance(names, tuple) else (names,)):
                p = params.get(name)
                if p is None:
                    problems.append(f"{key[0] or 'main'} {key[1]}: {fn}() has no {name}=")
                    continue
                if o["positional"] or p.default is inspect.Parameter.empty:
                    continue
                ok = [None, False, *o["defaults"]]
                if name in NO_FLAG:
                    ok.append(NO_FLAG[name])
                if p.default not in ok:
                    problems.append(
                        f"{key[1]}: {fn}(..., {name}={p.default!r}) but the CLI's default is "
                        f"{o['defaults'] or 'none'}")
    return problems


def test_every_cli_option_is_a_python_keyword_or_explained():
    assert drift(mp) == []


def test_drift_is_found_when_a_keyword_is_removed():
    # profile_binary without chip=: the drift test names it
    def without_chip(path_or_bytes, function_name=None, offset=0, *, base=0, gpu=None,
                     trip_count=None, trip_counts=None, all_findings=False,
                     threadgroup=None, l1_hit_rate=None, l1_hit_latency=None,
                     l1_miss_latency=None):
        raise AssertionError("not called")

    class Api:
        pass

    api = Api()
    for name in dir(mp):
        setattr(api, name, getattr(mp, name))
    api.profile_binary = without_chip
    assert drift(api) == ["main --chip: profile_binary() has no chip="]
    # and a default that is not the CLI's
    api.profile_binary = mp.profile_binary
    api.profile_archive = lambda path, function_name=None, *, gpu=None, part="all", **k: None
    assert any("part='all'" in p for p in drift(api)), drift(api)


def test_the_cli_options_come_from_clap():
    opts = cli_options()
    # the help text is clap's: the drift test reads the CLI, not a copy
    assert "WxHxD" in opts[("", "--threadgroup")]["help"]
    assert opts[("", "--part")]["defaults"] == ["main"]
    assert opts[("", "--all-findings")]["takes_value"] is False
    assert ("batch", "--chip") in opts and ("diff", "--fail-on") in opts


# ── each keyword gives the CLI's result ─────────────────────────────────


def cli_json(args) -> dict:
    code, out, err = mp.run_cli([*map(str, args), "--format", "json"])
    assert code == 0, err
    return json.loads(out)


def same(py_result, args) -> dict:
    doc = json.loads(py_result.to_json())
    assert doc == cli_json(args)
    return doc


MATMUL = [KERNELS, "-f", "matmul_naive"]


def matmul(**options):
    return mp.profile_archive(KERNELS, "matmul_naive", **options)


def test_threadgroup_equals_the_cli():
    default = json.loads(matmul().to_json())
    for shape in ((16, 16, 1), "16x16x1", [16, 16]):
        doc = same(matmul(threadgroup=shape), MATMUL + ["--threadgroup", "16x16x1"])
        assert doc != default  # the shape reaches the access patterns
    k = doc["kernels"][0]
    assert "tile-global-loads" in {s["rule"] for s in k["suggestions"]}
    with pytest.raises(ValueError, match=r"threadgroup='16x0': .*not a positive integer"):
        matmul(threadgroup="16x0")
    with pytest.raises(TypeError, match=r"threadgroup= takes a tuple"):
        matmul(threadgroup=16)


def test_chip_equals_the_cli():
    default = json.loads(matmul().to_json())["kernels"][0]
    for chip in ("M1 Max", "m1-max"):
        doc = same(matmul(chip=chip), MATMUL + ["--chip", "M1 Max"])
    k = doc["kernels"][0]
    assert k != default  # the chip changes the figures, as --chip does
    with pytest.raises(ValueError) as e:
        matmul(chip="M7")
    m = str(e.value)
    assert m.startswith("unknown chip 'M7'; known: ")
    assert all(c in m for c in mp.chips()) and "--" not in m


def test_trip_counts_and_l1_options_equal_the_cli():
    header = matmul().loops[0].header
    doc = same(matmul(trip_counts={header: 1024}), MATMUL + ["--trip-count", f"{header:#x}=1024"])
    assert doc["kernels"][0]["loops"][0]["trip_count"] == 1024
    same(matmul(trip_count=100), MATMUL + ["--trip-count", "100"])
    default = json.loads(matmul().to_json())
    doc = same(
        matmul(l1_hit_rate=0.25, l1_hit_latency=90, l1_miss_latency=400),
        MATMUL + ["--l1-hit-rate", "0.25", "--l1-hit-latency", "90", "--l1-miss-latency", "400"],
    )
    assert doc != default
    with pytest.raises(ValueError, match="l1_hit_rate must be between 0 and 1"):
        matmul(l1_hit_rate=2)


def test_binary_options_equal_the_cli():
    r = mp.profile_binary(MATMUL_BIN, "k", base=0x100, gpu="G13G", threadgroup=(8, 8, 1))
    same(r, ["--binary", MATMUL_BIN, "-f", "k", "--base", "0x100", "--gpu", "g13g",
             "--threadgroup", "8x8x1"])
    assert r.gpu == "G13G" and r.instructions[0].addr == 0x100
    # analyze() of the same bytes takes the same options
    a = mp.analyze(MATMUL_BIN.read_bytes(), kernel_name="k", threadgroup=(8, 8, 1), chip="M1 Pro")
    b = mp.profile_binary(MATMUL_BIN.read_bytes(), "k", threadgroup=(8, 8, 1), chip="M1 Pro")
    assert a.to_json() == b.to_json()


def test_part_equals_the_cli():
    r = mp.profile_archive(TEXREAD, "texread", part="prolog")
    same(r, [TEXREAD, "-f", "texread", "--part", "prolog"])
    assert r.to_json() != mp.profile_archive(TEXREAD, "texread").to_json()
    with pytest.raises(ValueError, match=r"part='all' gives several profiles"):
        mp.profile_archive(TEXREAD, "texread", part="all")
    with pytest.raises(ValueError, match=r"part='x': use 'main'"):
        mp.profile_archive(TEXREAD, "texread", part="x")


def test_gpu_g16g_is_the_untimed_profile():
    r = mp.profile_binary(APPLE9, offset=0x40, gpu="g16g")
    assert isinstance(r, mp.UntimedProfile)
    assert json.loads(r.to_json()) == cli_json(["--binary", APPLE9, "--gpu", "g16g", "--offset", "0x40"])
    # the old name is an alias: the same result
    assert mp.profile_untimed(APPLE9, "g16g", offset=0x40).to_json() == r.to_json()
    # and a GPU with a timing model just works (the timed profile)
    t = mp.profile_untimed(MATMUL_BIN, "g13g")
    assert isinstance(t, mp.ProfileResult) and t.gpu == "G13G"
    # its listing with that family's decoder, as --disasm-only
    code, out, _ = mp.run_cli(["--binary", str(APPLE9), "--gpu", "g16g", "--offset", "0x40",
                               "--disasm-only"])
    assert code == 0 and mp.disassemble(APPLE9, 0x40, gpu="g16g") == out


@pytest.mark.parametrize("call", [
    lambda: mp.profile_untimed(APPLE9, "g99"),
    lambda: mp.profile_binary(APPLE9, gpu="g99"),
    lambda: mp.profile_archive(KERNELS, "matmul_naive", gpu="g99"),
    lambda: mp.list_functions(KERNELS, gpu="g99"),
    lambda: mp.disassemble(APPLE9, gpu="g99"),
    lambda: mp.profile_many([KERNELS], gpu="g99"),
    lambda: mp.diff(KERNELS, KERNELS, gpu="g99"),
])
def test_unknown_gpu_is_a_value_error_naming_it(call):
    with pytest.raises(ValueError) as e:
        call()
    m = str(e.value)
    assert m.startswith("unknown GPU 'g99'; known: "), m
    assert all(g in m for g in mp.gpus()), m


def test_many_and_diff_take_the_options():
    tg = mp.profile_many([KERNELS], threadgroup=(16, 16, 1), chip="M1 Max")
    code, out, err = mp.run_cli(["batch", str(KERNELS), "--format", "json",
                                 "--threadgroup", "16x16x1", "--chip", "M1 Max"])
    assert code == 0, err
    assert tg == json.loads(out)
    assert tg != mp.profile_many([KERNELS])
    d = mp.diff(KERNELS, KERNELS, gpu="g13g")
    code, out, err = mp.run_cli(["diff", str(KERNELS), str(KERNELS), "--format", "json",
                                 "--gpu", "g13g"])
    assert code == 0 and d == json.loads(out), err
    with pytest.raises(ValueError) as e:
        mp.diff(KERNELS, KERNELS, fail_on="bogus")
    m = str(e.value)
    assert m.startswith("fail_on='bogus': unknown metric") and "--" not in m, m
    with pytest.raises(ValueError, match="jobs=0"):
        mp.profile_many([KERNELS], jobs=0)


def test_archive_gpu_g15g_is_the_untimed_profile():
    from conftest import DATA
    a9 = DATA / "apple9.archive"
    r = mp.profile_archive(a9, gpu="g15g")
    assert isinstance(r, mp.UntimedProfile) and r.isa == "Apple9"
    assert json.loads(r.to_json()) == cli_json([a9, "--gpu", "g15g"])
    p = mp.profile_archive(a9, gpu="g15g", part="prolog")
    assert json.loads(p.to_json()) == cli_json([a9, "--gpu", "g15g", "--part", "prolog"])
    assert p.to_json() != r.to_json()
    names = [f.symbol for f in mp.list_functions(a9, gpu="g15g")]
    assert names == ["_agc.main.constant_program", "_agc.main"]
    with pytest.raises(ValueError, match="no slice for GPU `g15g`"):
        mp.profile_archive(KERNELS, "matmul_naive", gpu="g15g")


@pytest.mark.parametrize("gpu, words", [
    ("g13p", "gpu='g13p': no GPU model reads G13P code; give one of: g13g"),
    ("G17G", "gpu='G17G': M5 (G17G/G17S) code is not Apple9"),
])
def test_gpu_without_a_model_says_why(gpu, words):
    with pytest.raises(ValueError) as e:
        mp.profile_binary(APPLE9, offset=0x40, gpu=gpu)
    assert str(e.value).startswith(words), str(e.value)
