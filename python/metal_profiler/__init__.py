"""metal-profiler: static profiler for Apple GPU (AGX G13 / M1) compute shaders.

The analysis runs in Rust (the same pipeline as the ``metal-profile`` command
line); this package keeps the seed tool's Python API::

    from metal_profiler import profile_metal_file, profile_metal_source

    report, disasm = profile_metal_file("kernel.metal", "my_kernel")   # macOS
    print(report)

    # Any OS: native code from a Metal binary archive or a raw dump
    from metal_profiler import profile_archive, profile_binary
    result = profile_archive("kernel.archive", "my_kernel")
    print(result.report)

    # Lower-level: parse saved applegpu disassembly, analyse, report
    from metal_profiler import parse_disassembly, analyze, format_report
    instructions = parse_disassembly(disasm)
    result = analyze(instructions)
    print(f"Occupancy: {result.occupancy_pct}%")
    print(f"Bottleneck: {result.bottleneck}")
    print(format_report(result, "my_kernel"))

Errors are Python exceptions carrying the command line's messages in
Python's terms (``function_name=``, ``offset=``, ``trip_count=``,
``profile_binary()`` where the CLI says ``-f``, ``--offset``, ...); arguments
are checked with the CLI's limits (``trip_count=0`` or ``-1``: ``ValueError``):
``FileNotFoundError`` (and other ``OSError``) for unreadable files,
``ValueError`` for bad input (not G13 code, unknown function, truncated
archive...), ``RuntimeError`` for compiling ``.metal`` source where Metal is
unavailable or the compiler fails.
"""

from __future__ import annotations

import os
import warnings as _warnings
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _native
from ._model import (
    Branch,
    Call,
    Function,
    FunctionInfo,
    Instruction,
    Loop,
    ProfileResult,
    Suggestion,
    UntimedProfile,
)
from ._parse import parse_disassembly

__version__ = _native.__version__

__all__ = [
    "Branch",
    "Call",
    "Function",
    "FunctionInfo",
    "Instruction",
    "Loop",
    "ProfileResult",
    "Suggestion",
    "UntimedProfile",
    "analyze",
    "assemble",
    "decode",
    "diff",
    "disassemble",
    "format_report",
    "list_functions",
    "occupancy_for_regs",
    "parse_disassembly",
    "profile_archive",
    "profile_binary",
    "profile_metal_file",
    "profile_many",
    "profile_metal_source",
    "profile_untimed",
    "run_cli",
]

def __dir__() -> List[str]:
    """The public names (``__all__``) and ``__version__``: no typing or
    ``os`` imports, no private modules (issue 29)."""
    return sorted(__all__ + ["__version__"])


PathOrBytes = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]


def _input(data: PathOrBytes):
    """A path (str / PathLike) or the bytes themselves, for the native side."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if isinstance(data, (str, os.PathLike)):
        return os.fspath(data)
    raise TypeError(
        f"expected a path or bytes, got {type(data).__name__}"
    )


def _warn(messages: Iterable[str]) -> None:
    for m in messages:
        _warnings.warn(m, RuntimeWarning, stacklevel=3)


def _result(native) -> ProfileResult:
    _warn(native.warnings)
    return ProfileResult._from_native(native)


# ── profiling ──────────────────────────────────────────────────────────────


def profile_binary(
    path_or_bytes: PathOrBytes,
    function_name: Optional[str] = None,
    offset: int = 0,
    *,
    trip_count: Optional[int] = None,
    all_findings: bool = False,
    trip_counts: Optional[Dict[int, int]] = None,
) -> ProfileResult:
    """Profile raw G13 machine code (a file path or bytes), as
    ``metal-profile --binary FILE [-f NAME] [--offset N]``.

    ``function_name`` only names the kernel in the report (default
    ``"kernel"``); ``offset`` is where the code starts in the input (even).
    ``trip_count`` is assumed for loops whose trip count is unknown (default:
    the CLI's, 16). ``all_findings`` keeps the suggestions that concern less
    than 1% of the estimate (``--all-findings``). ``trip_counts`` sets loops
    by header address (``{0x30: 1024}``: ``--trip-count 0x30=1024``).
    """
    return _result(
        _native.profile_raw_code(
            _input(path_or_bytes),
            function_name,
            int(offset),
            trip_count,
            bool(all_findings),
            trip_counts=trip_counts,
        )
    )


def profile_untimed(
    path_or_bytes: PathOrBytes,
    gpu: str,
    offset: int = 0,
) -> UntimedProfile:
    """Profile raw code of a GPU no timing model applies to (Apple9:
    ``gpu="g15g"``, ``"g16g"``, ``"g17p"`` …), as ``metal-profile --binary
    FILE --gpu GPU [--offset N]``: counts, framing, CFG and loops, memory
    instructions per loop, registers (a lower bound where operands are not
    decoded) and the wait fields; no cycle figure. Framing that stops and
    unknown encodings are ``RuntimeWarning``s. A G13/G14 ``gpu`` is refused
    (``ValueError``): use :func:`profile_binary`.
    """
    document, report, html, warnings = _native.profile_untimed_code(
        _input(path_or_bytes), str(gpu), int(offset)
    )
    _warn(warnings)
    return UntimedProfile(document, report, html)


def profile_archive(
    path: PathOrBytes,
    function_name: Optional[str] = None,
    *,
    trip_count: Optional[int] = None,
    gpu: Optional[str] = None,
    all_findings: bool = False,
    trip_counts: Optional[Dict[int, int]] = None,
) -> ProfileResult:
    """Profile one function of a serialized Metal binary archive (path or
    bytes), as ``metal-profile ARCHIVE [-f NAME] [--gpu GPU]``: the main part,
    its prolog summarised. ``function_name`` is the Metal name
    (``matmul_naive``) or the full symbol; it may be omitted when the archive
    holds one kernel. ``gpu`` (``"g13g"``, ``"g14g"``, any case) picks the
    slice of a multi-GPU archive; the default is the newest decodable one.
    ``all_findings`` keeps the suggestions under 1% of the estimate.
    """
    return _result(
        _native.profile_archive_input(
            _input(path),
            function_name,
            trip_count,
            gpu,
            bool(all_findings),
            trip_counts=trip_counts,
        )
    )


def list_functions(path: PathOrBytes) -> List[FunctionInfo]:
    """The shaders of a Metal binary archive (``metal-profile --list``)."""
    items, warns, _text = _native.archive_functions(_input(path))
    _warn(warns)
    return [FunctionInfo(d) for d in items]


def disassemble(
    data: PathOrBytes,
    offset: int = 0,
    *,
    base: int = 0,
    cryptic: bool = False,
    native: bool = False,
) -> str:
    """applegpu-identical listing of raw machine code (bytes or a file path)
    from byte ``offset`` (``metal-profile --binary F --disasm-only``).
    ``base`` is added to printed addresses; ``cryptic`` prints ``$r0`` for
    cached registers as applegpu does with ``APPLEGPU_CRYPTIC``; ``native``
    prints native syntax (``--syntax native``: encodings applegpu prints as
    another form, such as stack adjusts, under their own names)."""
    return _native.disassemble(
        _input(data), int(offset), int(base), bool(cryptic), bool(native)
    )


def decode(data: bytes, addr: int = 0) -> Instruction:
    """Decode the one instruction at the start of ``data``, printed at
    ``addr``. Raises ``ValueError`` when no G13 instruction form matches."""
    return Instruction._from_native(_native.decode(bytes(data), int(addr)))


def assemble(text: str) -> bytes:
    """Assemble applegpu-syntax text into machine code (``metal-profile
    asm``). Raises ``ValueError`` on a syntax error (``line L, column C:
    ...``)."""
    return _native.assemble(text)


def analyze(
    instructions: Union[Sequence[Instruction], str, bytes],
    *,
    trip_count: Optional[int] = None,
    kernel_name: Optional[str] = None,
    all_findings: bool = False,
    trip_counts: Optional[Dict[int, int]] = None,
) -> ProfileResult:
    """Run the full analysis on instructions from :func:`parse_disassembly`
    (or disassembly text, or raw code bytes).

    Every instruction needs its machine code: applegpu listings carry it in
    the hex column. Instructions parsed from text without bytes are
    assembled when the assembler can; otherwise ``ValueError`` names the
    first one.
    """
    if isinstance(instructions, (bytes, bytearray, memoryview)):
        return profile_binary(
            bytes(instructions),
            kernel_name,
            trip_count=trip_count,
            all_findings=all_findings,
            trip_counts=trip_counts,
        )
    if isinstance(instructions, str):
        instructions = parse_disassembly(instructions)
    words: List[Tuple[int, bytes]] = []
    for insn in instructions:
        if not isinstance(insn, Instruction):
            raise TypeError(
                f"analyze() takes Instructions from parse_disassembly(), got {type(insn).__name__}"
            )
        if insn.bytes is None:
            raise ValueError(
                f"instruction at {insn.addr:#x} ({insn.text!r}) has no machine code: "
                "give disassembly with the hex column (applegpu's listing) so it can be "
                "decoded, or text the assembler accepts"
            )
        words.append((insn.addr, insn.bytes))
    return _result(
        _native.profile_words(
            words,
            kernel_name,
            trip_count,
            bool(all_findings),
            trip_counts=trip_counts,
        )
    )


def format_report(
    result: ProfileResult,
    kernel_name: Optional[str] = "kernel",
    *,
    color: bool = False,
    show_disasm: bool = False,
) -> str:
    """The text report (the CLI's), with ``kernel_name`` in the header box.
    Pass ``kernel_name=None`` to keep the result's own name."""
    if not isinstance(result, ProfileResult):
        raise TypeError(f"format_report() takes a ProfileResult, got {type(result).__name__}")
    return result._native.text(kernel_name, bool(color), bool(show_disasm))


def occupancy_for_regs(half_regs: int) -> Tuple[int, float]:
    """``(max_threads, occupancy_pct)`` for a kernel allocating
    ``half_regs`` 16-bit half-registers (Mesa's table; 1024 threads = 100%).
    Beyond 256 half-registers: ``(0, 0.0)``."""
    return _native.occupancy_for_regs(int(half_regs))


# ── .metal source (macOS) ────────────────────────────────────────────────


def _targets(target) -> List[str]:
    if target is None:
        return []
    if isinstance(target, str):
        return [target]
    return [str(t) for t in target]


def _compile(
    source: str, is_path: bool, function_name: str, include_dirs, target=None, jit=False
) -> bytes:
    dirs = [os.fspath(d) for d in (include_dirs or [])]
    data, compiler_output, device, notes = _native.compile_metal(
        source, is_path, function_name, dirs, _targets(target), bool(jit)
    )
    if compiler_output.strip():
        _warnings.warn(compiler_output.rstrip(), RuntimeWarning, stacklevel=3)
    for note in notes:
        _warnings.warn(note, RuntimeWarning, stacklevel=3)
    return data


def _report_and_disasm(archive: bytes, function_name: str, gpu=None) -> Tuple[str, str]:
    result = profile_archive(archive, function_name, gpu=gpu)
    return format_report(result, None), result.disassembly


def profile_metal_file(
    path: Union[str, "os.PathLike[str]"],
    function_name: str,
    include_dirs: Optional[Sequence[str]] = None,
    *,
    target: Union[None, str, Sequence[str]] = None,
    gpu: Optional[str] = None,
    jit: bool = False,
) -> Tuple[str, str]:
    """Compile a ``.metal`` file to native code and profile it: returns
    ``(report, disassembly)``. As ``metal-profile FILE -f NAME [--target …]``:
    built offline with ``metal-tt`` for ``target`` (``"g14g"`` or a list; by
    default this Mac's GPU if decodable, else ``g14g``); ``gpu`` picks which
    built slice to profile; ``jit=True`` has the Metal driver build for this
    Mac's GPU instead. Needs Xcode's ``xcrun``; without it raises
    ``RuntimeError`` with the CLI's message."""
    archive = _compile(os.fspath(path), True, function_name, include_dirs, target, jit)
    return _report_and_disasm(archive, function_name, gpu)


def profile_metal_source(
    source: str,
    function_name: str,
    include_dirs: Optional[Sequence[str]] = None,
    *,
    target: Union[None, str, Sequence[str]] = None,
    gpu: Optional[str] = None,
    jit: bool = False,
) -> Tuple[str, str]:
    """As :func:`profile_metal_file` for Metal source text."""
    archive = _compile(source, False, function_name, include_dirs, target, jit)
    return _report_and_disasm(archive, function_name, gpu)


# ── many kernels: batch and diff ───────────────────────────────────────────


def _cli_json(args: List[str], ok_codes: Tuple[int, ...]) -> dict:
    import json

    code, out, err = run_cli(args)
    if code not in ok_codes:
        last = err.strip().splitlines()[-1] if err.strip() else f"exit code {code}"
        raise ValueError(last.replace("metal-profile: error: ", ""))
    return json.loads(out)


def profile_many(
    paths: Union[PathOrBytes, Sequence[Union[str, "os.PathLike[str]"]]],
    jobs: Optional[int] = None,
    *,
    trip_count: Optional[int] = None,
) -> dict:
    """Profile every kernel of many archives in parallel, as
    ``metal-profile batch PATH... --format json [--jobs N]``.

    ``paths`` are archives and directories (walked recursively; files are
    recognised by content). Returns the ``metal-profiler/1`` document as a
    dict: ``kernels`` (each with ``source`` and ``name``), ``errors``
    (``[{"source", "error"}]``: files that could not be profiled — they do
    not stop the batch and are not raised) and ``summary``. ``jobs``
    defaults to all cores; the result is the same for any ``jobs``.
    Raises ``ValueError`` for bad arguments.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    args = ["batch", *[os.fspath(p) for p in paths], "--format", "json"]
    if jobs is not None:
        args += ["--jobs", str(int(jobs))]
    if trip_count is not None:
        args += ["--trip-count", str(int(trip_count))]
    return _cli_json(args, (0, 1))


def diff(
    old: Union[str, "os.PathLike[str]", dict],
    new: Union[str, "os.PathLike[str]", dict],
    fail_on: Union[str, Sequence[str]] = (),
    *,
    jobs: Optional[int] = None,
) -> dict:
    """Compare two results, as ``metal-profile diff OLD NEW --format json``.

    ``old`` and ``new`` are paths (``metal-profiler/1`` JSON documents,
    archives or directories of archives) or documents returned by
    :func:`profile_many`. ``fail_on`` takes the CLI's gate specs
    (``"cycles:5%"``, ``"occupancy"``, ``"spills"``, ...). Returns the
    ``metal-profiler-diff/1`` document: ``kernels`` (``status``,
    ``old``/``new`` numbers), ``gates`` and ``tripped`` (True exactly when the
    command line would exit 3). Raises ``ValueError`` for bad input or specs.
    """
    import json
    import tempfile

    if isinstance(fail_on, str):
        fail_on = [fail_on]
    with tempfile.TemporaryDirectory(prefix="metal-profiler-diff-") as tmp:
        sides = []
        for label, side in (("old", old), ("new", new)):
            if isinstance(side, dict):
                p = os.path.join(tmp, f"{label}.json")
                with open(p, "w", encoding="utf-8") as f:
                    json.dump(side, f)
                sides.append(p)
            else:
                sides.append(os.fspath(side))
        args = ["diff", *sides, "--format", "json"]
        for spec in fail_on:
            args += ["--fail-on", spec]
        if jobs is not None:
            args += ["--jobs", str(int(jobs))]
        return _cli_json(args, (0, 3))


# ── the command line ──────────────────────────────────────────────────────


def run_cli(args: Sequence[str]) -> Tuple[int, str, str]:
    """Run ``metal-profile ARGS`` in-process and capture it:
    ``(exit_code, stdout, stderr)``, byte for byte what the binary prints
    when not writing to a terminal."""
    code, out, err = _native.run_cli(["metal-profile", *map(os.fspath, args)])
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
