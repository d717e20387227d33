"""`metal-profile` (console script) and `python -m metal_profiler.metal_profile`
run the Rust command line: same output, same exit codes; and the module's
`to_json()` equals the CLI's `--format json`."""

import sys

import pytest

import metal_profiler as mp
from conftest import DATA, MESA_KERNELS, console_script, mesa_bin, run, rust_binary

KERNELS = str(DATA / "kernels.archive")
MANDEL = str(mesa_bin("cf_mandelbrot"))
MODULE = [sys.executable, "-m", "metal_profiler.metal_profile"]

# (arguments, expected exit code): the seed's flags and the error paths
CASES = [
    ([KERNELS, "-f", "matmul_naive"], 0),
    ([KERNELS, "-f", "matmul_naive", "--show-disasm"], 0),
    ([KERNELS, "-f", "mandelbrot", "--disasm-only"], 0),
    ([KERNELS, "--list"], 0),
    ([KERNELS, "-f", "matmul_naive", "--format", "json"], 0),
    (["--binary", MANDEL, "-f", "mandelbrot"], 0),
    (["--binary", MANDEL, "--disasm-only"], 0),
    (["--binary", MANDEL, "--offset", "4", "--disasm-only"], 0),
    ([str(DATA / "texread.archive"), "--part", "all", "--disasm-only"], 0),
    ([KERNELS, "-f", "matmul_naive", "--color", "always"], 0),
    ([KERNELS, "-f", "nope"], 1),
    ([MANDEL], 1),  # raw code is not an archive: --binary
    ([MANDEL, "-f", "mandelbrot"], 1),
    ([KERNELS, "--disasm-only", "--format", "json"], 2),
    (["--binary", MANDEL, "--all"], 2),
    ([KERNELS, "--explain-model"], 2),
    ([KERNELS, "--list", "--format", "json"], 0),
    (["--explain-model", "--format", "json"], 0),
    (["--binary", MANDEL, "--disasm-only", "--syntax", "native"], 0),
    ([KERNELS], 1),
    ([str(DATA / "truncated.archive")], 1),
    ([str(DATA / "missing.archive")], 1),
    (["--binary", MANDEL, "--offset", "3"], 2),
    ([], 2),
    (["--bogus"], 2),
    (["--help"], 0),
    (["--version"], 0),
]
if sys.platform != "darwin":
    CASES += [
        ([str(DATA / "matmul.metal"), "-f", "matmul_naive"], 1),
        (["--source", "kernel void k() {}", "-f", "k"], 1),
    ]


def _ids(case):
    return " ".join(a.replace(str(DATA) + "/", "") for a in case[0]) or "(none)"


@pytest.mark.parametrize("args,code", CASES, ids=[_ids(c) for c in CASES])
def test_module_equals_console_script(args, code):
    script = run(console_script() + args)
    module = run(MODULE + args)
    assert script.returncode == code, script.stderr.decode()
    assert module.returncode == code
    assert module.stdout == script.stdout
    assert module.stderr == script.stderr
    if code:
        assert script.stderr, "errors are reported on stderr"
    # the in-process runner gives the same bytes
    c, out, err = mp.run_cli(args)
    assert (c, out, err) == (code, script.stdout.decode(), script.stderr.decode())


@pytest.mark.parametrize("args,code", CASES, ids=[_ids(c) for c in CASES])
def test_console_script_equals_rust_binary(args, code):
    exe = rust_binary()
    if exe is None:
        pytest.skip("no up-to-date Rust metal-profile binary (set METAL_PROFILE_BIN)")
    script = run(console_script() + args)
    native = run([str(exe)] + args)
    assert script.returncode == native.returncode == code
    assert script.stdout == native.stdout
    assert script.stderr == native.stderr


def test_usage_errors_are_one_line():
    """Issue 21: clap's errors too are one `metal-profile: error:` line, exit 2."""
    code, _out, err = mp.run_cli(["--binary", MANDEL, "--offset", "-4"])
    assert code == 2
    assert err.splitlines() == [
        "metal-profile: error: invalid value '-4' for '--offset <N>': -4 is negative; "
        "give 0 or more (decimal or 0x-prefixed hex); see `metal-profile --help`"
    ]


def test_error_messages_match_exceptions(tmp_path):
    """The exception text is the CLI's message after `metal-profile: error: `,
    in Python's terms (flags named as this package's arguments, issue 29)."""
    CUT = tmp_path / "cut.bin"
    CUT.write_bytes(mesa_bin("cf_mandelbrot").read_bytes()[:3])
    NOISE = tmp_path / "noise.bin"
    NOISE.write_bytes(bytes((i * 151 + 7) % 256 | 0x80 for i in range(4096)))
    cases = [
        (lambda: mp.profile_archive(KERNELS, "nope"), [KERNELS, "-f", "nope"]),
        (lambda: mp.profile_archive(DATA / "truncated.archive"), [str(DATA / "truncated.archive")]),
        (lambda: mp.profile_archive(DATA / "missing.archive"), [str(DATA / "missing.archive")]),
        (lambda: mp.profile_binary(MANDEL, offset=3), ["--binary", MANDEL, "--offset", "3"]),
        # issue 21: cut and not-code raw input, the same line as the CLI's
        (lambda: mp.profile_binary(CUT), ["--binary", str(CUT)]),
        (lambda: mp.profile_binary(NOISE), ["--binary", str(NOISE)]),
    ]
    if sys.platform != "darwin":
        cases.append(
            (
                lambda: mp.profile_metal_file(DATA / "matmul.metal", "matmul_naive"),
                [str(DATA / "matmul.metal"), "-f", "matmul_naive"],
            )
        )
    for call, args in cases:
        with pytest.raises(Exception) as ei:
            call()
        code, _out, err = mp.run_cli(args)
        assert code in (1, 2)
        line = err.splitlines()[-1].removeprefix("metal-profile: error: ")
        assert str(ei.value) == mp._native.python_terms(line)


def test_to_json_equals_cli_json_subprocess():
    """`ProfileResult.to_json()` is byte-identical to `metal-profile ...
    --format json` (the console script, run as a separate process)."""
    cases = [
        (mp.profile_archive(KERNELS, "matmul_naive"), [KERNELS, "-f", "matmul_naive"]),
        (mp.profile_archive(KERNELS, "mandelbrot"), [KERNELS, "-f", "mandelbrot"]),
        (mp.profile_archive(DATA / "texread.archive"), [str(DATA / "texread.archive")]),
        (mp.profile_archive(DATA / "simple_call.archive"), [str(DATA / "simple_call.archive")]),
        (mp.profile_binary(MANDEL), ["--binary", MANDEL]),
        (mp.profile_binary(MANDEL, "mandelbrot"), ["--binary", MANDEL, "-f", "mandelbrot"]),
        (
            mp.profile_archive(KERNELS, "matmul_naive", trip_count=5),
            [KERNELS, "-f", "matmul_naive", "--trip-count", "5"],
        ),
    ]
    for result, args in cases:
        p = run(console_script() + args + ["--format", "json"])
        assert p.returncode == 0, p.stderr.decode()
        assert result.to_json() == p.stdout.decode()
        assert result.to_dict() == __import__("json").loads(p.stdout)


def test_report_equals_cli_text():
    r = mp.profile_archive(KERNELS, "matmul_naive")
    p = run(console_script() + [KERNELS, "-f", "matmul_naive"])
    assert r.report == p.stdout.decode()
    p = run(console_script() + [KERNELS, "-f", "matmul_naive", "--show-disasm"])
    assert mp.format_report(r, None, show_disasm=True) == p.stdout.decode()
    p = run(console_script() + ["--binary", MANDEL, "--disasm-only"])
    assert mp.disassemble(mesa_bin("cf_mandelbrot")) == p.stdout.decode()
    p = run(console_script() + [KERNELS, "--list"])
    assert {f.symbol for f in mp.list_functions(KERNELS)} <= set(p.stdout.decode().split())


@pytest.mark.parametrize("name", MESA_KERNELS)
def test_to_json_equals_cli_json_corpus(name):
    """Every Mesa kernel, through the in-process runner of the same CLI."""
    path = str(mesa_bin(name))
    code, out, err = mp.run_cli(["--binary", path, "-f", name, "--format", "json"])
    assert code == 0, err
    assert mp.profile_binary(path, name).to_json() == out


def test_seed_readme_cli_examples():
    """The seed README's command lines, adapted to binaries."""
    # python -m metal_profiler.metal_profile kernel.metal -f my_kernel
    p = run(MODULE + [KERNELS, "-f", "matmul_naive"])
    assert p.returncode == 0
    out = p.stdout.decode()
    assert "metal-profiler: matmul_naive" in out and "── Registers & Occupancy ──" in out
    # ... --disasm-only
    p = run(MODULE + [KERNELS, "-f", "matmul_naive", "--disasm-only"])
    assert p.stdout.decode() == mp.profile_archive(KERNELS, "matmul_naive").disassembly
    # ... --show-disasm
    p = run(MODULE + [KERNELS, "-f", "matmul_naive", "--show-disasm"])
    assert "── Disassembly ──" in p.stdout.decode()
    # --binary gpu_code.bin -f my_kernel
    p = run(MODULE + ["--binary", MANDEL, "-f", "mandelbrot"])
    assert p.returncode == 0 and "metal-profiler: mandelbrot" in p.stdout.decode()


def test_python_dash_m_package():
    p = run([sys.executable, "-m", "metal_profiler", "--binary", MANDEL, "--disasm-only"])
    assert p.returncode == 0
    assert p.stdout.decode() == mp.disassemble(mesa_bin("cf_mandelbrot"))


def test_stdin_input():
    data = mesa_bin("cf_mandelbrot").read_bytes()
    p = run(MODULE + ["--binary", "-", "--disasm-only"], input=data)
    assert p.returncode == 0
    assert p.stdout.decode() == mp.disassemble(data)
    # `-` alone is an archive on stdin: raw code is refused, naming it
    p = run(MODULE + ["-", "--disasm-only"], input=data)
    assert p.returncode == 1
    assert "<stdin> is not a Metal binary archive: unknown magic 0x" in p.stderr.decode()
    assert "for raw machine code use --binary FILE" in p.stderr.decode()
    archive = (DATA / "kernels.archive").read_bytes()
    p = run(MODULE + ["-", "--list"], input=archive)
    assert p.returncode == 0 and b"mandelbrot" in p.stdout
