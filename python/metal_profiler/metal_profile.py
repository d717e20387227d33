"""``python -m metal_profiler.metal_profile`` and the ``metal-profile``
console script: the Rust command line, run in-process.

Same arguments, same output, same exit codes as the ``metal-profile``
binary (including the seed's flags ``-f``, ``--source``, ``--binary``,
``--disasm-only``, ``--show-disasm``); see ``metal-profile --help``.
"""

from __future__ import annotations

import os
import sys
from typing import Optional, Sequence


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _write(stream, data: bytes) -> None:
    if not data:
        return
    buf = getattr(stream, "buffer", None)
    if buf is not None:
        stream.flush()
        buf.write(data)
        buf.flush()
    else:
        stream.write(data.decode("utf-8", "replace"))
        stream.flush()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``) and
    return its exit code (the console script exits with it)."""
    from . import _native

    args = list(sys.argv[1:] if argv is None else argv)
    code, out, err = _native.run_cli(
        ["metal-profile", *map(os.fspath, args)],
        _isatty(sys.stdout),
        _isatty(sys.stderr),
    )
    try:
        _write(sys.stdout, out)
    except BrokenPipeError:
        # like the binary: a closed pipe is not an error
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
    _write(sys.stderr, err)
    return code


if __name__ == "__main__":
    sys.exit(main())
