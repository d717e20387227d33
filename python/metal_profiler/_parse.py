"""``parse_disassembly``: applegpu listing text back to instructions."""

from __future__ import annotations

import re
from typing import List, Optional

from . import _native
from ._model import Instruction

# `  addr: <hex>  mnemonic  operands`, also the seed's annotated lines
# (`│ │ a8: device_load [MEM 1cy] r6, ... ◀ memory`).
_LINE = re.compile(r"^[\s│|]*([0-9a-fA-F]+):\s*(.*?)\s*$")
_HEX = re.compile(r"^(?:[0-9a-fA-F]{2}){1,12}$")
_ANNOT = re.compile(r"\s*\[[^\]]*\]")
_MARK = re.compile(r"\s*◀.*$")


def _split_operands(ops: str) -> List[str]:
    ops = ops.strip()
    return [o.strip() for o in ops.split(", ")] if ops else []


def _assembled(addr: int, mnemonic: str, operands: List[str]) -> Optional[Instruction]:
    """The instruction assembled from its text, kept only when it decodes
    back (at `addr`) to the same text; None otherwise."""
    text = f"{mnemonic} {', '.join(operands)}".strip()
    try:
        code = _native.assemble(text)
        insn = Instruction._from_native(_native.decode(code, addr))
    except (ValueError, RuntimeError):
        return None
    if insn.mnemonic == mnemonic and insn.operands == operands:
        return insn
    return None


def parse_disassembly(text: str) -> List[Instruction]:
    """Parse applegpu disassembler output (the text the seed saved, the CLI's
    ``--disasm-only``) into :class:`Instruction` objects.

    Lines look like ``  addr: hex  mnemonic operands``. With the hex column
    the instruction is decoded from its bytes (fully typed: defs, uses,
    category...); without it, mnemonic and operands are taken from the text
    (and assembled when the assembler reproduces them exactly). Empty lines,
    ``<disassembly failed>`` and anything that is not an instruction line
    are skipped. Annotations of the seed's report (``[UNIT n cy]``, ``◀ ...``,
    loop bars) are ignored.
    """
    out: List[Instruction] = []
    for raw in text.splitlines():
        m = _LINE.match(raw)
        if not m:
            continue
        addr = int(m.group(1), 16)
        rest = _MARK.sub("", m.group(2))
        if not rest or "<disassembly failed>" in rest:
            continue
        tokens = rest.split(None, 1)
        code: Optional[bytes] = None
        # A hex column is followed by a mnemonic; a mnemonic that merely
        # looks like hex (`fadd32`) is followed by an operand ending in `,`.
        if (
            len(tokens) == 2
            and _HEX.match(tokens[0])
            and not tokens[1].split(None, 1)[0].endswith(",")
        ):
            code = bytes.fromhex(tokens[0])
            rest = tokens[1]
        rest = _ANNOT.sub("", rest, count=1).strip()
        parts = rest.split(None, 1)
        if not parts:
            continue
        mnemonic = parts[0]
        operands = _split_operands(parts[1] if len(parts) > 1 else "")
        if code is not None:
            try:
                out.append(Instruction._from_native(_native.decode(code, addr)))
                continue
            except ValueError:
                pass  # keep the text and bytes; analyze() reports it
            out.append(Instruction(addr, mnemonic, operands, code))
            continue
        insn = _assembled(addr, mnemonic, operands)
        out.append(insn if insn is not None else Instruction(addr, mnemonic, operands, None))
    return out
