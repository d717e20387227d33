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

    # The CLI's options are keyword arguments (``--threadgroup 16x16x1``,
    # ``--chip "M1 Max"``, ``--trip-count 0x34=1024``, ``--gpu g16g``)
    result = profile_archive("kernel.archive", "my_kernel",
                             threadgroup=(16, 16, 1), chip="M1 Max",
                             trip_counts={0x34: 1024})
    m4 = profile_binary("apple9.bin", gpu="g16g")   # Apple9: UntimedProfile

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
are checked with the CLI's limits (``trip_count=0`` or ``-1``: ``ValueError``;
``gpu="g99"``: ``ValueError: unknown GPU 'g99'; known: ...``; a keyword of
the wrong type: ``TypeError``):
``FileNotFoundError`` (and other ``OSError``) for unreadable files,
``ValueError`` for bad input (not G13 code, unknown function, truncated
archive...), ``RuntimeError`` for compiling ``.metal`` source where Metal is
unavailable or the compiler fails.
"""

from __future__ import annotations

import errno
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
    "chips",
    "decode",
    "diff",
    "disassemble",
    "format_report",
    "gpus",
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


Threadgroup = Union[str, Tuple[int, ...], Sequence[int]]


def _threadgroup(shape: Optional[Threadgroup]) -> Optional[str]:
    """``threadgroup=`` as the CLI's ``--threadgroup WxHxD``: a tuple of 1
    to 3 ints (``(16, 16, 1)``) or the CLI's text (``"16x16x1"``)."""
    if shape is None or isinstance(shape, str):
        return shape
    if (
        isinstance(shape, (tuple, list))
        and 1 <= len(shape) <= 3
        and all(isinstance(n, int) and not isinstance(n, bool) for n in shape)
    ):
        return "x".join(str(n) for n in shape)
    raise TypeError(
        "threadgroup= takes a tuple of 1 to 3 ints such as (16, 16, 1) "
        f"or a string such as \"16x16x1\", got {shape!r}"
    )


def _text(name: str, value) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{name}= takes a str, got {type(value).__name__}")


def _options(
    trip_count=None,
    trip_counts=None,
    all_findings=False,
    threadgroup=None,
    chip=None,
    l1_hit_rate=None,
    l1_hit_latency=None,
    l1_miss_latency=None,
) -> dict:
    """The model options of a profile (the CLI's ``--trip-count``,
    ``--threadgroup``, ``--chip``, ``--l1-*``, ``--all-findings``) for the
    native side, which checks them with the CLI's limits."""
    return {
        "trip_count": trip_count,
        "trip_counts": trip_counts,
        "all_findings": bool(all_findings),
        "threadgroup": _threadgroup(threadgroup),
        "chip": _text("chip", chip),
        "l1_hit_rate": l1_hit_rate,
        "l1_hit_latency": l1_hit_latency,
        "l1_miss_latency": l1_miss_latency,
    }


def _timed(gpu: Optional[str]) -> bool:
    """Whether a timing model profiles ``gpu``'s code (no ``gpu``: yes).
    ``ValueError: unknown GPU 'g99'; known: ...`` for a name no GPU model
    knows."""
    if gpu is None:
        return True
    return _native.gpu_timed(_text("gpu", gpu))


def _untimed(native_result) -> UntimedProfile:
    document, report, html, warnings = native_result
    _warn(warnings)
    return UntimedProfile(document, report, html)


def _warn(messages: Iterable[str]) -> None:
    for m in messages:
        # in Python's terms, as the errors ("pick another with gpu=")
        _warnings.warn(_native.python_terms(m), RuntimeWarning, stacklevel=3)


def _result(native) -> ProfileResult:
    _warn(native.warnings)
    return ProfileResult._from_native(native)


# ── profiling ──────────────────────────────────────────────────────────────


def profile_binary(
    path_or_bytes: PathOrBytes,
    function_name: Optional[str] = None,
    offset: int = 0,
    *,
    base: int = 0,
    gpu: Optional[str] = None,
    trip_count: Optional[int] = None,
    trip_counts: Optional[Dict[int, int]] = None,
    all_findings: bool = False,
    threadgroup: Optional[Threadgroup] = None,
    chip: Optional[str] = None,
    l1_hit_rate: Optional[float] = None,
    l1_hit_latency: Optional[float] = None,
    l1_miss_latency: Optional[float] = None,
) -> Union[ProfileResult, UntimedProfile]:
    """Profile raw machine code (a file path or bytes), as ``metal-profile
    --binary FILE [-f NAME] [--offset N] [--base B] [--gpu GPU] ...``; every
    keyword is the CLI flag of that name with its default.

    ``function_name`` only names the kernel in the report (default
    ``"kernel"``); ``offset`` is where the code starts in the input (even);
    ``base`` the address of its first byte. ``gpu`` is the GPU the code is
    for (``"g13g"``, any case; default the M1 model): for a GPU with no
    timing model (Apple9: ``"g15g"``, ``"g16g"``, ``"g17p"``) the result is
    an :class:`UntimedProfile` (counts and structure, no cycle figure), as
    the CLI's. ``trip_count`` is assumed for loops whose trip count is
    unknown (default 16); ``trip_counts`` sets loops by header address
    (``{0x30: 1024}``: ``--trip-count 0x30=1024``). ``threadgroup`` is the
    shape the access patterns lay lanes over (``(16, 16, 1)`` or
    ``"16x16x1"``; default: the shape recorded beside the file, else
    32x1x1); ``chip`` the chip whose DRAM bandwidth bounds device memory
    (``"M1 Max"``; :func:`chips` lists them); ``l1_hit_rate``,
    ``l1_hit_latency``, ``l1_miss_latency`` override the timing model's
    device-load assumptions. ``all_findings`` keeps the suggestions that
    concern less than 1% of the estimate.
    """
    opts = _options(
        trip_count, trip_counts, all_findings, threadgroup, chip,
        l1_hit_rate, l1_hit_latency, l1_miss_latency,
    )
    data = _input(path_or_bytes)
    if not _timed(gpu):
        return _untimed(
            _native.profile_untimed_code(data, gpu, int(offset), int(base), opts)
        )
    return _result(
        _native.profile_raw_code(
            data, _text("function_name", function_name), int(offset), int(base), gpu, opts
        )
    )


def profile_untimed(
    path_or_bytes: PathOrBytes,
    gpu: str,
    offset: int = 0,
    *,
    base: int = 0,
    trip_count: Optional[int] = None,
    trip_counts: Optional[Dict[int, int]] = None,
    all_findings: bool = False,
    threadgroup: Optional[Threadgroup] = None,
    chip: Optional[str] = None,
    l1_hit_rate: Optional[float] = None,
    l1_hit_latency: Optional[float] = None,
    l1_miss_latency: Optional[float] = None,
) -> Union[ProfileResult, UntimedProfile]:
    """The former name of ``profile_binary(path_or_bytes, offset=offset,
    gpu=gpu, ...)`` (kept as an alias): for Apple9 code (``gpu="g15g"``,
    ``"g16g"``, ``"g17p"`` …) the :class:`UntimedProfile` of ``metal-profile
    --binary FILE --gpu GPU``: counts, framing, CFG and loops, memory
    instructions per loop, registers (a lower bound where operands are not
    decoded) and the wait fields; no cycle figure. Framing that stops and
    unknown encodings are ``RuntimeWarning``s. A GPU with a timing model
    (``"g13g"``) gets its timed :class:`ProfileResult`, as the CLI's.
    """
    return profile_binary(
        path_or_bytes, None, offset, base=base, gpu=_text("gpu", gpu),
        trip_count=trip_count, trip_counts=trip_counts, all_findings=all_findings,
        threadgroup=threadgroup, chip=chip, l1_hit_rate=l1_hit_rate,
        l1_hit_latency=l1_hit_latency, l1_miss_latency=l1_miss_latency,
    )


def profile_archive(
    path: PathOrBytes,
    function_name: Optional[str] = None,
    *,
    gpu: Optional[str] = None,
    part: str = "main",
    trip_count: Optional[int] = None,
    trip_counts: Optional[Dict[int, int]] = None,
    all_findings: bool = False,
    threadgroup: Optional[Threadgroup] = None,
    chip: Optional[str] = None,
    l1_hit_rate: Optional[float] = None,
    l1_hit_latency: Optional[float] = None,
    l1_miss_latency: Optional[float] = None,
) -> Union[ProfileResult, UntimedProfile]:
    """Profile one function of a serialized Metal binary archive (path or
    bytes), as ``metal-profile ARCHIVE [-f NAME] [--gpu GPU] [--part P]
    ...``; every keyword is the CLI flag of that name with its default.
    ``function_name`` is the Metal name (``matmul_naive``) or the full
    symbol; it may be omitted when the archive holds one kernel. ``gpu``
    (``"g13g"``, ``"g14g"``, any case) picks the slice of a multi-GPU
    archive (default: the newest decodable one); the slice of a GPU with no
    timing model (``"g15g"``) gives an :class:`UntimedProfile`. ``part`` is
    ``"main"`` (the kernel body, its prolog summarised) or ``"prolog"``.
    The model options are :func:`profile_binary`'s.
    """
    opts = _options(
        trip_count, trip_counts, all_findings, threadgroup, chip,
        l1_hit_rate, l1_hit_latency, l1_miss_latency,
    )
    data = _input(path)
    name = _text("function_name", function_name)
    part = _text("part", part)
    if not _timed(gpu):
        return _untimed(_native.profile_untimed_archive(data, gpu, name, part, opts))
    return _result(_native.profile_archive_input(data, name, gpu, part, opts))


def list_functions(path: PathOrBytes, *, gpu: Optional[str] = None) -> List[FunctionInfo]:
    """The shaders of a Metal binary archive (``metal-profile --list``):
    of the slice ``gpu`` names (``--gpu``), by default the one the profile
    functions choose."""
    if gpu is not None:
        _timed(gpu)
    items, warns, _listing = _native.archive_functions(_input(path), gpu)
    _warn(warns)
    return [FunctionInfo(d) for d in items]


def disassemble(
    data: PathOrBytes,
    offset: int = 0,
    *,
    base: int = 0,
    cryptic: bool = False,
    native: bool = False,
    gpu: Optional[str] = None,
) -> str:
    """applegpu-identical listing of raw machine code (bytes or a file path)
    from byte ``offset`` (``metal-profile --binary F --disasm-only``).
    ``base`` is added to printed addresses; ``cryptic`` prints ``$r0`` for
    cached registers as applegpu does with ``APPLEGPU_CRYPTIC``; ``native``
    prints native syntax (``--syntax native``: encodings applegpu prints as
    another form, such as stack adjusts, under their own names). ``gpu``
    (``--gpu``): the GPU the code is for; Apple9 code (``"g16g"``) is
    listed with that family's decoder."""
    if gpu is not None:
        _timed(gpu)
    return _native.disassemble(
        _input(data), int(offset), int(base), bool(cryptic), bool(native), gpu
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
    threadgroup: Optional[Threadgroup] = None,
    chip: Optional[str] = None,
    l1_hit_rate: Optional[float] = None,
    l1_hit_latency: Optional[float] = None,
    l1_miss_latency: Optional[float] = None,
) -> ProfileResult:
    """Run the full analysis on instructions from :func:`parse_disassembly`
    (or disassembly text, or raw code bytes).

    Every instruction needs its machine code: applegpu listings carry it in
    the hex column. Instructions parsed from text without bytes are
    assembled when the assembler can; otherwise ``ValueError`` names the
    first one. The options are :func:`profile_binary`'s.
    """
    opts = _options(
        trip_count, trip_counts, all_findings, threadgroup, chip,
        l1_hit_rate, l1_hit_latency, l1_miss_latency,
    )
    if isinstance(instructions, (bytes, bytearray, memoryview)):
        return _result(
            _native.profile_raw_code(bytes(instructions), kernel_name, 0, 0, None, opts)
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
        _native.profile_words(words, _text("kernel_name", kernel_name), opts)
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
    source: str, is_path: bool, function_name: str, include_dirs, target=None, jit=False,
    defines=None, std=None, min_macos=None, keep_archive=None,
) -> bytes:
    dirs = [os.fspath(d) for d in (include_dirs or [])]
    if isinstance(defines, str):
        defines = [defines]
    flags = {
        "defines": [str(d) for d in (defines or [])],
        "std": _text("std", std),
        "min_macos": _text("min_macos", min_macos),
        "keep_archive": None if keep_archive is None else os.fspath(keep_archive),
    }
    data, compiler_output, device, notes = _native.compile_metal(
        source, is_path, function_name, dirs, _targets(target), bool(jit), flags
    )
    if compiler_output.strip():
        _warnings.warn(compiler_output.rstrip(), RuntimeWarning, stacklevel=3)
    for note in notes:
        _warnings.warn(note, RuntimeWarning, stacklevel=3)
    return data


def _report_and_disasm(archive: bytes, function_name: str, **options) -> Tuple[str, str]:
    result = profile_archive(archive, function_name, **options)
    if isinstance(result, UntimedProfile):
        return result.report, ""
    return format_report(result, None), result.disassembly


def profile_metal_file(
    path: Union[str, "os.PathLike[str]"],
    function_name: str,
    include_dirs: Optional[Sequence[str]] = None,
    *,
    target: Union[None, str, Sequence[str]] = None,
    gpu: Optional[str] = None,
    jit: bool = False,
    defines: Union[None, str, Sequence[str]] = None,
    std: Optional[str] = None,
    min_macos: Optional[str] = None,
    keep_archive: Union[None, str, "os.PathLike[str]"] = None,
    part: str = "main",
    trip_count: Optional[int] = None,
    trip_counts: Optional[Dict[int, int]] = None,
    all_findings: bool = False,
    threadgroup: Optional[Threadgroup] = None,
    chip: Optional[str] = None,
    l1_hit_rate: Optional[float] = None,
    l1_hit_latency: Optional[float] = None,
    l1_miss_latency: Optional[float] = None,
) -> Tuple[str, str]:
    """Compile a ``.metal`` file to native code and profile it: returns
    ``(report, disassembly)``. As ``metal-profile FILE -f NAME [--target …]``:
    built offline with ``metal-tt`` for ``target`` (``"g14g"`` or a list; by
    default this Mac's GPU if decodable, else ``g14g``); ``gpu`` picks which
    built slice to profile; ``jit=True`` has the Metal driver build for this
    Mac's GPU instead. ``defines`` (``-D``: ``"N=4"`` or a list), ``std``
    (``--std``), ``min_macos`` (``--min-macos``) and ``keep_archive``
    (``--keep-archive``: also save the built archive there) are the CLI's
    compile flags; ``part`` and the model options are
    :func:`profile_archive`'s. Needs Xcode's ``xcrun``; without it raises
    ``RuntimeError`` with the CLI's message."""
    archive = _compile(
        os.fspath(path), True, function_name, include_dirs, target, jit,
        defines, std, min_macos, keep_archive,
    )
    return _report_and_disasm(
        archive, function_name, gpu=gpu, part=part, trip_count=trip_count,
        trip_counts=trip_counts, all_findings=all_findings, threadgroup=threadgroup,
        chip=chip, l1_hit_rate=l1_hit_rate, l1_hit_latency=l1_hit_latency,
        l1_miss_latency=l1_miss_latency,
    )


def profile_metal_source(
    source: str,
    function_name: str,
    include_dirs: Optional[Sequence[str]] = None,
    *,
    target: Union[None, str, Sequence[str]] = None,
    gpu: Optional[str] = None,
    jit: bool = False,
    defines: Union[None, str, Sequence[str]] = None,
    std: Optional[str] = None,
    min_macos: Optional[str] = None,
    keep_archive: Union[None, str, "os.PathLike[str]"] = None,
    part: str = "main",
    trip_count: Optional[int] = None,
    trip_counts: Optional[Dict[int, int]] = None,
    all_findings: bool = False,
    threadgroup: Optional[Threadgroup] = None,
    chip: Optional[str] = None,
    l1_hit_rate: Optional[float] = None,
    l1_hit_latency: Optional[float] = None,
    l1_miss_latency: Optional[float] = None,
) -> Tuple[str, str]:
    """As :func:`profile_metal_file` for Metal source text."""
    archive = _compile(
        source, False, function_name, include_dirs, target, jit,
        defines, std, min_macos, keep_archive,
    )
    return _report_and_disasm(
        archive, function_name, gpu=gpu, part=part, trip_count=trip_count,
        trip_counts=trip_counts, all_findings=all_findings, threadgroup=threadgroup,
        chip=chip, l1_hit_rate=l1_hit_rate, l1_hit_latency=l1_hit_latency,
        l1_miss_latency=l1_miss_latency,
    )


# ── many kernels: batch and diff ───────────────────────────────────────────


def _cli_json(args: List[str], ok_codes: Tuple[int, ...]) -> dict:
    """The JSON document ``metal-profile ARGS`` prints; its error (one line)
    as a ``ValueError`` in Python's terms; exit 4 (encodings the G13 tables
    do not know: the document is written) as ``RuntimeWarning``s."""
    import json

    code, out, err = run_cli(args)
    lines = [l for l in err.strip().splitlines() if l.strip()]
    if code not in ok_codes + (4,) or not out.strip():
        last = lines[-1] if lines else f"exit code {code}"
        raise ValueError(_native.python_terms(last.replace("metal-profile: error: ", "")))
    _warn(lines if code == 4 else [])
    return json.loads(out)


def _existing(path: Union[str, "os.PathLike[str]"]) -> str:
    """``path`` for the command line; ``FileNotFoundError`` when it does not
    exist (the CLI's exit 1, as the profile functions raise it)."""
    p = os.fspath(path)
    if not os.path.exists(p):
        raise FileNotFoundError(errno.ENOENT, "no such file or directory", p)
    return p


def _model_argv(opts: dict, gpu: Optional[str]) -> List[str]:
    """The CLI's flags for checked model options (:func:`_options`)."""
    _native.check_options(opts)
    argv: List[str] = []
    if opts["trip_count"] is not None:
        argv += ["--trip-count", str(opts["trip_count"])]
    for header, n in (opts["trip_counts"] or {}).items():
        argv += ["--trip-count", f"{header:#x}={n}"]
    for key in ("threadgroup", "chip", "l1_hit_rate", "l1_hit_latency", "l1_miss_latency"):
        if opts[key] is not None:
            argv += ["--" + key.replace("_", "-"), str(opts[key])]
    if gpu is not None:
        _timed(gpu)
        argv += ["--gpu", gpu]
    return argv


def _jobs(jobs: Optional[int]) -> List[str]:
    if jobs is None:
        return []
    if isinstance(jobs, bool) or not isinstance(jobs, int):
        raise TypeError(f"jobs= takes an int, got {type(jobs).__name__}")
    if jobs < 1:
        raise ValueError(f"jobs={jobs}: give a number of threads, 1 or more")
    return ["--jobs", str(jobs)]


def profile_many(
    paths: Union[PathOrBytes, Sequence[Union[str, "os.PathLike[str]"]]],
    jobs: Optional[int] = None,
    *,
    gpu: Optional[str] = None,
    trip_count: Optional[int] = None,
    trip_counts: Optional[Dict[int, int]] = None,
    threadgroup: Optional[Threadgroup] = None,
    chip: Optional[str] = None,
    l1_hit_rate: Optional[float] = None,
    l1_hit_latency: Optional[float] = None,
    l1_miss_latency: Optional[float] = None,
) -> dict:
    """Profile every kernel of many archives in parallel, as
    ``metal-profile batch PATH... --format json [--jobs N] [--gpu GPU] ...``.

    ``paths`` are archives and directories (walked recursively; files are
    recognised by content). Returns the ``metal-profiler/1`` document as a
    dict: ``kernels`` (each with ``source`` and ``name``), ``errors``
    (``[{"source", "error"}]``: files that could not be profiled — they do
    not stop the batch and are not raised) and ``summary``. ``jobs``
    defaults to all cores; the result is the same for any ``jobs``. ``gpu``
    picks each archive's slice; the model options are
    :func:`profile_binary`'s. Raises ``ValueError`` for bad arguments.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    opts = _options(
        trip_count, trip_counts, False, threadgroup, chip,
        l1_hit_rate, l1_hit_latency, l1_miss_latency,
    )
    args = ["batch", *[_existing(p) for p in paths], "--format", "json"]
    args += _jobs(jobs) + _model_argv(opts, gpu)
    return _cli_json(args, (0, 1))


def diff(
    old: Union[str, "os.PathLike[str]", dict],
    new: Union[str, "os.PathLike[str]", dict],
    fail_on: Union[str, Sequence[str]] = (),
    *,
    jobs: Optional[int] = None,
    gpu: Optional[str] = None,
) -> dict:
    """Compare two results, as ``metal-profile diff OLD NEW --format json``.

    ``old`` and ``new`` are paths (``metal-profiler/1`` JSON documents,
    archives or directories of archives) or documents returned by
    :func:`profile_many`. ``fail_on`` takes the CLI's gate specs
    (``"cycles:5%"``, ``"occupancy"``, ``"spills"``, ...). ``gpu`` picks
    each archive's slice (``--gpu``). Returns the
    ``metal-profiler-diff/1`` document: ``kernels`` (``status``,
    ``old``/``new`` numbers), ``gates`` and ``tripped`` (True exactly when the
    command line would exit 3). Raises ``ValueError`` for bad input or specs
    (``fail_on='bogus': unknown metric ...``).
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
                sides.append(_existing(side))
        args = ["diff", *sides, "--format", "json"]
        for spec in fail_on:
            args += ["--fail-on", _text("fail_on", spec)]
        args += _jobs(jobs)
        if gpu is not None:
            _timed(gpu)
            args += ["--gpu", gpu]
        return _cli_json(args, (0, 3))


def chips() -> List[str]:
    """The chips ``chip=`` takes (the CLI's ``--chip``; from the GPU
    models), e.g. ``["M1", "M1 Pro", "M1 Max", "M1 Ultra"]``."""
    return list(_native.chips())


def gpus() -> Dict[str, bool]:
    """The GPUs ``gpu=`` takes (from the GPU models), each with whether a
    timing model profiles its code (``True``: a :class:`ProfileResult`) or
    the untimed profile does (``False``: an :class:`UntimedProfile`)."""
    return dict(_native.gpus())


# ── the command line ──────────────────────────────────────────────────────


def run_cli(args: Sequence[str]) -> Tuple[int, str, str]:
    """Run ``metal-profile ARGS`` in-process and capture it:
    ``(exit_code, stdout, stderr)``, byte for byte what the binary prints
    when not writing to a terminal."""
    code, out, err = _native.run_cli(["metal-profile", *map(os.fspath, args)])
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
