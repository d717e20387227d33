"""Python views of the Rust results: instructions, profiles, loops.

Nothing here computes: every number comes from the Rust analysis, through
the CLI's JSON document (``ProfileResult.to_dict()``), so the Python object
and ``metal-profile --format json`` agree by construction.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional


class Instruction:
    """One G13 instruction.

    ``addr`` (alias ``offset``, the seed's name), ``mnemonic``, ``operands``
    (printed operand strings; ``operands_text`` is them joined as applegpu
    prints them, the seed's ``operands``), ``bytes`` (machine code, ``None``
    when parsed from text without a hex column), ``hex`` (alias
    ``raw_bytes``), ``text`` (``mnemonic operands`` with applegpu's spacing),
    ``line`` (the whole listing line). When decoded from machine code
    (``decoded`` is true) also ``size``, ``defs``/``uses`` (registers written
    and read, implicit ones included), ``category`` and ``form``.
    """

    __slots__ = (
        "addr",
        "mnemonic",
        "operands",
        "bytes",
        "size",
        "defs",
        "uses",
        "category",
        "form",
        "decoded",
        "_text",
    )

    def __init__(
        self,
        addr: int,
        mnemonic: str,
        operands: Optional[List[str]] = None,
        bytes: Optional[bytes] = None,  # noqa: A002 - the seed's field name
        *,
        text: Optional[str] = None,
    ) -> None:
        self.addr = int(addr)
        self.mnemonic = mnemonic
        self.operands = list(operands or [])
        self.bytes = bytes
        self.size = len(bytes) if bytes is not None else None
        self.defs: List[str] = []
        self.uses: List[str] = []
        self.category: Optional[str] = None
        self.form: Optional[int] = None
        self.decoded = False
        self._text = text

    @classmethod
    def _from_native(cls, d: Dict[str, Any]) -> "Instruction":
        i = cls(d["addr"], d["mnemonic"], d["operands"], d["bytes"], text=d["asm"])
        i.size = d["size"]
        i.defs = list(d["defs"])
        i.uses = list(d["uses"])
        i.category = d["category"]
        i.form = d["form"]
        i.decoded = True
        return i

    @property
    def offset(self) -> int:
        return self.addr

    @property
    def hex(self) -> str:
        return self.bytes.hex() if self.bytes is not None else ""

    @property
    def raw_bytes(self) -> str:
        return self.hex

    @property
    def operands_text(self) -> str:
        return ", ".join(self.operands)

    @property
    def text(self) -> str:
        if self._text is not None:
            return self._text
        ops = self.operands_text
        return f"{self.mnemonic:<16} {ops}".rstrip() if ops else self.mnemonic

    @property
    def line(self) -> str:
        return f"{self.addr:4x}: {self.hex:<20} {self.mnemonic:<16} {self.operands_text}"

    def __repr__(self) -> str:
        return f"Instruction({self.addr:#x}: {self.text})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Instruction):
            return NotImplemented
        return (self.addr, self.mnemonic, self.operands, self.bytes) == (
            other.addr,
            other.mnemonic,
            other.operands,
            other.bytes,
        )

    def __hash__(self) -> int:
        return hash((self.addr, self.mnemonic, tuple(self.operands), self.bytes))


class _Record:
    """Attribute access over one JSON object of the report document; the
    raw dict is ``.data`` (and ``to_dict()``)."""

    __slots__ = ("data",)

    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data

    def __getattr__(self, name: str) -> Any:
        try:
            return self.data[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def to_dict(self) -> Dict[str, Any]:
        return dict(self.data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Record):
            return self.data == other.data
        return NotImplemented

    # the fields a repr names (a short line, not the whole dict: issue 29);
    # ``to_dict()`` has the rest
    _REPR: tuple = ()
    _HEX = ("at", "entry", "start", "end", "offset", "target", "text_offset", "file_offset")

    def __repr__(self) -> str:
        keys = [k for k in self._REPR if k in self.data] or [
            k for k, v in self.data.items() if isinstance(v, (str, int, float, bool))
        ][:3]
        parts = []
        for k in keys:
            v = self.data[k]
            if k in self._HEX and isinstance(v, int) and not isinstance(v, bool):
                parts.append(f"{k}={v:#x}")
            else:
                parts.append(f"{k}={v!r}")
        more = ", ..." if len(self.data) > len(keys) else ""
        return f"{type(self).__name__}({', '.join(parts)}{more})"


class Call(_Record):
    """One ``call`` site: the JSON ``calls[]`` entry (``at``, ``target``,
    ``symbol``, ``resolved``, ``cycles``, ``highest_half_index``,
    ``spills``, ``fills``, ``caller``, ``callee``, ``executions``,
    ``cycles_per_call``, ``recursive``)."""

    __slots__ = ()
    _REPR = ("at", "symbol", "cycles")


class Branch(_Record):
    """One branch classified by the static divergence analysis: the JSON
    ``functions[].branches[]`` entry (``at``, ``kind``: if/else/while/break/
    loop/skip/jump, ``uniform``, ``reason``, ``arms_cycles``)."""

    __slots__ = ()
    _REPR = ("at", "kind", "uniform")

    def __str__(self) -> str:
        u = "uniform" if self.data.get("uniform") else "divergent"
        return f"0x{self.data.get('at', 0):x} {self.data.get('kind')} {u}: {self.data.get('reason')}"


class Function(_Record):
    """One function of the kernel's program: the JSON ``functions[]`` entry
    (``entry``, ``symbol``, ``main``, ``instructions``,
    ``highest_half_index``, ``spills``, ``fills``, ``own_cycles``,
    ``total_cycles``, ``suggestions``, ``branches``, ``divergence`` ...)."""

    __slots__ = ()
    _REPR = ("symbol", "entry", "instructions", "total_cycles")

    @property
    def branches(self) -> List["Branch"]:
        """The function's branches, uniform or divergent with a reason."""
        return [Branch(d) for d in (self.data.get("branches") or [])]

    @property
    def divergence(self) -> Dict[str, Any]:
        """``if_uniform``, ``if_divergent``, ``loop_uniform``,
        ``loop_divergent``, ``uniform_loads``."""
        return dict(self.data.get("divergence") or {})

    @property
    def instructions_detail(self) -> List[Dict[str, Any]]:
        """A called function's rows, one per instruction (the JSON
        ``functions[].instructions_detail``, the rows of its annotated
        listing); empty for main, whose rows are the kernel's
        ``instructions_detail``."""
        return [dict(d) for d in (self.data.get("instructions_detail") or [])]


class Loop(_Record):
    """One natural loop: the JSON ``loops[]`` entry (``start``, ``end``,
    ``depth``, ``header``, ``trip_count``, ``cycles_per_iteration``,
    ``latency_bound_cycles``, ``bottleneck``, ``bound``, ``body`` ...) plus
    the seed's names: ``start_offset``, ``end_offset``, ``body_cycles_alu``,
    ``body_cycles_mem`` (the memory stall left exposed per iteration, the
    figure the report prints), ``body_cycles_total`` (cycles per iteration,
    the figure the kernel total uses), ``mem_loads``, ``mem_stores``,
    ``has_wait``. ``bound`` is ``{"by", "cycles", "components"}`` with
    ``cycles == cycles_per_iteration``."""

    __slots__ = ()
    _REPR = ("start", "end", "depth", "trip_count")

    def _body(self) -> Dict[str, Any]:
        return self.data.get("body") or {}

    @property
    def start_offset(self) -> int:
        return self.data["start"]

    @property
    def end_offset(self) -> int:
        return self.data["end"]

    @property
    def per_iteration_cycles(self) -> Optional[float]:
        return self.data.get("cycles_per_iteration")

    @property
    def body_cycles_total(self) -> Optional[float]:
        return self.data.get("cycles_per_iteration")

    @property
    def body_cycles_alu(self) -> Optional[float]:
        return self._body().get("alu_per_iter")

    @property
    def bound(self) -> Dict[str, Any]:
        return self.data.get("bound") or {}

    @property
    def body_cycles_mem(self) -> Optional[float]:
        body = self._body()
        return body.get("memory_stall", body.get("wait_stall"))

    @property
    def mem_loads(self) -> Optional[int]:
        return self._body().get("loads")

    @property
    def mem_stores(self) -> Optional[int]:
        return self._body().get("stores")

    @property
    def has_wait(self) -> bool:
        return bool(self._body().get("wait_stall"))


class Suggestion(_Record):
    """One suggestion: ``severity`` (high/medium/low), ``offset`` (the
    instruction it names), ``message``, ``rule``, ``figures``, ``fact`` (the
    fact about the code the rule rests on) and ``sites`` (every instruction
    the finding concerns); ``function`` names the called function it was
    found in (``None`` in main). ``str()`` is the report line (with the
    severity icon)."""

    __slots__ = ()
    _REPR = ("severity", "rule", "offset")

    _ICONS = {"high": "\U0001f534", "medium": "\U0001f7e1", "low": "\U0001f7e2"}

    @property
    def function(self) -> Optional[str]:
        """The called function the finding is in (its symbol, else its
        entry as ``0x...``); ``None`` for main's own findings."""
        return self.data.get("function")

    def __str__(self) -> str:
        icon = self._ICONS.get(self.data.get("severity", ""), "-")
        return f"{icon} {self.data.get('message', '')}"


class FunctionInfo(_Record):
    """One function of a Metal binary archive: ``stage``, ``part`` (main,
    prolog, helper), ``symbol``, ``name`` (the Metal name), ``size``,
    ``code_size``, ``text_offset``, ``file_offset``, ``gpu``,
    ``gpu_family``."""

    __slots__ = ()
    _REPR = ("name", "part", "gpu")


class ProfileResult:
    """The analysis of one kernel.

    Everything is read from the CLI's JSON document (``to_json()`` is
    byte-identical to ``metal-profile ... --format json`` for the same input
    and options). The seed's names are kept: ``occupancy_pct``,
    ``max_threads``, ``bottleneck``, ``bottleneck_reason``, ``loops``,
    ``total_instructions``, ``f32_cycles``/``f16_cycles``/``scib_cycles``/
    ``ic_cycles``, ``half_regs_used``, ``max_live_gprs``, ``max_reg``,
    ``uniform_regs_used``, ``instructions``; plus ``suggestions``,
    ``report`` (the text report) and ``disassembly`` (applegpu listing).
    Every figure is a field of the record (``kernel``): nothing is parsed
    from prose or from assembly text. In a notebook the result shows as
    the HTML report (``_repr_html_``: a fragment whose styles apply only
    inside it).
    """

    __slots__ = ("_native", "_doc", "_insns")

    def __init__(self) -> None:  # pragma: no cover - built by the module
        raise TypeError("ProfileResult objects come from analyze()/profile_*()")

    @classmethod
    def _from_native(cls, native: Any) -> "ProfileResult":
        self = object.__new__(cls)
        self._native = native
        self._doc = None
        self._insns = None
        return self

    # ── the document ──

    def to_json(self) -> str:
        """The CLI's ``--format json`` document (schema metal-profiler/1)."""
        return self._native.json()

    def to_html(self) -> str:
        """The CLI's ``--format html`` page: one self-contained HTML file
        (report, control-flow graph as SVG, annotated disassembly)."""
        return self._native.html()

    def to_dot(self) -> str:
        """The CLI's ``--format dot`` output: the CFG as a Graphviz digraph."""
        return self._native.dot()

    def to_dict(self) -> Dict[str, Any]:
        """``json.loads(self.to_json())`` (a fresh copy each call)."""
        return json.loads(self.to_json())

    @property
    def kernel(self) -> Dict[str, Any]:
        """The kernel's object in the document (``to_dict()["kernels"][0]``)."""
        if self._doc is None:
            self._doc = self.to_dict()
        return self._doc["kernels"][0]

    def _get(self, *path: str) -> Any:
        v: Any = self.kernel
        for p in path:
            if not isinstance(v, dict) or p not in v:
                return None
            v = v[p]
        return v

    # ── identity ──

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def gpu(self) -> Optional[str]:
        return self._native.gpu

    @property
    def warnings(self) -> List[str]:
        return list(self._native.warnings)

    # ── registers & occupancy ──

    @property
    def occupancy_pct(self) -> Optional[float]:
        return self._get("occupancy", "percent")

    @property
    def max_threads(self) -> Optional[int]:
        return self._get("occupancy", "threads")

    @property
    def registers(self) -> Dict[str, Any]:
        return self._get("registers") or {}

    @property
    def half_regs_used(self) -> Optional[int]:
        """Half-registers allocated (highest index + 1): what occupancy
        depends on. The seed reported twice its peak live GPR count here."""
        return self._get("registers", "allocated_half")

    @property
    def peak_live_half(self) -> Optional[int]:
        return self._get("registers", "peak_live_half")

    @property
    def max_live_gprs(self) -> Optional[int]:
        """32-bit GPRs the peak of live half-registers needs
        (``registers.peak_live_gprs``)."""
        return self._get("registers", "peak_live_gprs")

    @property
    def allocated_gprs(self) -> Optional[int]:
        """32-bit GPRs allocated (``registers.allocated_gprs``)."""
        return self._get("registers", "allocated_gprs")

    @property
    def max_reg(self) -> Optional[int]:
        """Number of the highest GPR touched (``registers.highest_gpr``)."""
        return self._get("registers", "highest_gpr")

    @property
    def uniform_regs_used(self) -> Optional[int]:
        """Uniform registers used, 32-bit (``registers.uniform_gprs``)."""
        return self._get("registers", "uniform_gprs")

    @property
    def spills(self) -> Optional[int]:
        return self._get("spills")

    @property
    def fills(self) -> Optional[int]:
        return self._get("fills")

    # ── timing ──

    @property
    def total_instructions(self) -> Optional[int]:
        return self._get("instructions")

    @property
    def cycles(self) -> Dict[str, Any]:
        return self._get("cycles") or {}

    @property
    def f32_cycles(self) -> Optional[float]:
        return self.cycles.get("f32")

    @property
    def f16_cycles(self) -> Optional[float]:
        return self.cycles.get("f16")

    @property
    def scib_cycles(self) -> Optional[float]:
        return self.cycles.get("scib")

    @property
    def ic_cycles(self) -> Optional[float]:
        return self.cycles.get("ic")

    @property
    def total_wait_cycles(self) -> Optional[float]:
        return self.cycles.get("mem")

    @property
    def total_cycles(self) -> Optional[float]:
        """Cost per SIMD-group, every branch arm charged: the sum of
        ``breakdown[].cycles``."""
        return self._get("total_cycles")

    @property
    def breakdown(self) -> List[Dict[str, Any]]:
        """Parts of ``total_cycles``: ``{"part": "straight_line" | "loop" |
        "call", "at", "cycles", "executions"}``."""
        return list(self._get("breakdown") or [])

    @property
    def paths(self) -> Dict[str, Any]:
        """Uniform-branch bounds ``{"shortest", "longest"}``."""
        return self._get("paths") or {}

    @property
    def mesa_estimate(self) -> Dict[str, Any]:
        return self._get("mesa_estimate") or {}

    @property
    def bottleneck(self) -> Optional[str]:
        """The kernel's bottleneck, as the report states it."""
        return self._get("bottleneck")

    @property
    def bottleneck_reason(self) -> str:
        """What bounds the kernel's dearest part, in words (the record's
        ``bottleneck_unit``, e.g. ``"device-memory (DRAM) bandwidth"``)."""
        return self._get("bottleneck_unit") or ""

    @property
    def bound_by(self) -> Optional[str]:
        """The bound component of the kernel's dearest part (``bound_by``:
        ``ic``, ``device_bandwidth``, ``call`` ...)."""
        return self._get("bound_by")

    @property
    def mix(self) -> Dict[str, Any]:
        """The instruction mix: ``{"by_unit": {unit: count}, "by_mnemonic":
        [{"mnemonic", "count"}, ...]}`` (most used first)."""
        return self._get("mix") or {}

    @property
    def straight_line(self) -> Dict[str, Any]:
        """The straight-line code outside loops (``instructions``,
        ``cycles``, ``bound`` ...)."""
        return self._get("straight_line") or {}

    @property
    def loops(self) -> List[Loop]:
        return [Loop(d) for d in (self._get("loops") or [])]

    @property
    def suggestions(self) -> List[Suggestion]:
        """Every function's suggestions: main's (JSON ``suggestions``), then
        each called function's (``functions[].suggestions``), those with
        :attr:`Suggestion.function` naming the function they were found in
        (``None`` for main's), as the text report lists them under Calls."""
        out = [Suggestion(d) for d in (self._get("suggestions") or [])]
        for f in (self._get("functions") or [])[1:]:
            name = f.get("symbol") or f"0x{f.get('entry', 0):x}"
            out.extend(Suggestion({**d, "function": name}) for d in f.get("suggestions") or [])
        return out

    @property
    def calls(self) -> List["Call"]:
        """Every call site of the kernel's program (JSON ``calls[]``: ``at``,
        ``target``, ``symbol``, ``resolved``, ``cycles``,
        ``highest_half_index``, ``spills``, ``fills`` ...)."""
        return [Call(d) for d in (self._get("calls") or [])]

    @property
    def functions(self) -> List["Function"]:
        """Main and every function it reaches through ``call``, each with its
        own figures (JSON ``functions[]``)."""
        return [Function(d) for d in (self._get("functions") or [])]

    @property
    def branches(self) -> List["Branch"]:
        """Main's branches, each uniform or divergent with its reason (JSON
        ``functions[0].branches``; callees' are on :attr:`functions`)."""
        f = self._get("functions") or []
        return [Branch(d) for d in ((f[0].get("branches") if f else None) or [])]

    @property
    def divergence(self) -> Dict[str, Any]:
        """Branch divergence counts over the program (JSON ``divergence``:
        ``if_uniform``, ``if_divergent``, ``loop_uniform``,
        ``loop_divergent``, and ``uniform_loads``: loads whose address is
        uniform)."""
        return dict(self._get("divergence") or {})

    @property
    def stack_kinds(self) -> Dict[int, str]:
        """What each stack access is for, by offset (JSON
        ``instructions_detail[].stack_kind``: ``spill``, ``fill``, ``save``,
        ``restore``, ``private_array``)."""
        rows = self._get("instructions_detail") or []
        return {d["offset"]: d["stack_kind"] for d in rows if d.get("stack_kind")}

    @property
    def uniform_address_loads(self) -> List[int]:
        """Offsets of main's loads whose address the divergence analysis
        proved uniform (JSON ``instructions_detail[].uniform_address``): one
        value for the whole SIMD-group, charged once per SIMD-group."""
        rows = self._get("instructions_detail") or []
        return [d["offset"] for d in rows if d.get("uniform_address")]

    @property
    def accesses(self) -> Dict[int, Dict[str, Any]]:
        """Main's memory instructions by offset, each with its access facts
        (JSON ``instructions_detail[].access``: ``space``, ``lane_pattern``,
        ``lane_stride``, ``run``, ``jump``, ``loop_stride``,
        ``bytes_per_lane``, ``lines_per_request``, ``reuse``, ``reason``;
        with a runtime stride also ``lane_stride_expr``/``loop_stride_expr``
        (``"32*u16"``), ``lines_per_request_if_wide`` and ``wide_from``;
        see docs/analysis.md, "Address analysis and access facts")."""
        rows = self._get("instructions_detail") or []
        return {d["offset"]: dict(d["access"]) for d in rows if d.get("access")}

    # ── code ──

    @property
    def instructions(self) -> List[Instruction]:
        if self._insns is None:
            self._insns = [Instruction._from_native(d) for d in self._native.instructions()]
        return list(self._insns)

    @property
    def disassembly(self) -> str:
        """The applegpu listing of the profiled code."""
        return self._native.listing

    @property
    def report(self) -> str:
        """The CLI's text report (no colour)."""
        return self._native.text(None, False, False)

    def __str__(self) -> str:
        return self.report

    def _repr_html_(self) -> str:
        """The HTML report as Jupyter/IPython show it: the body of
        ``to_html()`` as a fragment (one ``div``) whose styles apply only
        inside it, so the notebook around it keeps its own look."""
        return self._native.html_fragment()

    def __repr__(self) -> str:
        # one short line: the bottleneck sentence up to its first clause
        b = str(self.bottleneck)
        cut = min((i for i in (b.find(","), b.find(";")) if i >= 0), default=len(b))
        b = b[:cut] if cut <= 60 else b[:57] + "..."
        return (
            f"<ProfileResult {self.name!r}: {self.total_instructions} instructions, "
            f"occupancy {self.occupancy_pct}%, bottleneck {b!r}>"
        )


class UntimedProfile(_Record):
    """The profile of code no timing model applies to (Apple9: M3, M4,
    A18 Pro; ``metal-profile --binary FILE --gpu g16g``): one kernel record
    of the JSON document (``$defs/untimed_kernel`` in docs/schema.json) with
    attribute access to its fields (``instructions``, ``code_bytes``,
    ``framing``, ``cfg``, ``registers``, ``loops``, ``memory``, ``waits``,
    ``unknowns``, ``mix``, ``blocks``: main's CFG blocks, ``timing``);
    ``timing["model"]`` is ``None`` and
    no field holds a cycle figure. ``report`` is the text report, ``html``
    the HTML page, ``to_json()`` the whole document as the CLI prints it.
    """

    __slots__ = ("report", "html", "_document")
    _REPR = ("name", "gpu", "isa", "instructions", "code_bytes")

    def __init__(self, document: str, report: str, html: str) -> None:
        super().__init__(json.loads(document)["kernels"][0])
        self._document = document
        self.report = report
        self.html = html

    def to_json(self) -> str:
        return self._document

    def _repr_html_(self) -> str:
        return self.html
