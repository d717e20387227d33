"""Python in Python's terms (issue 29 item 8): errors name this package's
arguments and functions, arguments are checked as the CLI checks its flags,
a clean namespace and short reprs."""

import re

import pytest

import metal_profiler as mp
from conftest import REPO

EXAMPLES = REPO / "examples"

KERNELS = EXAMPLES / "kernels.archive"
SIMPLE_CALL = EXAMPLES / "simple_call.archive"
MATMUL_BIN = EXAMPLES / "matmul_naive.bin"

# a CLI flag (--offset, -f, --gpu ...) in a message
FLAG = re.compile(r"(^|[\s(`])--?[a-z]")


def _message(excinfo) -> str:
    m = str(excinfo.value)
    assert not FLAG.search(m), m
    return m


def test_not_an_archive_names_an_exported_function():
    with pytest.raises(ValueError) as e:
        mp.profile_archive(b"hello world")
    m = _message(e)
    for name in re.findall(r"([a-z_]+)\(\)", m):
        assert name in mp.__all__, m
    assert "profile_binary()" in m


def test_several_kernels_name_function_name():
    with pytest.raises(ValueError) as e:
        mp.profile_archive(KERNELS)
    assert "function_name=" in _message(e)


def test_offset_errors_name_offset():
    with pytest.raises(ValueError) as e:
        mp.profile_binary(MATMUL_BIN, offset=1)
    assert "offset" in _message(e)
    with pytest.raises(ValueError) as e:
        mp.profile_binary(MATMUL_BIN, offset=-2)
    assert "offset=-2 is negative" in _message(e)
    with pytest.raises(ValueError) as e:
        mp.profile_binary(bytes(64))
    assert "offset" in _message(e)


@pytest.mark.parametrize("n, reason", [(0, "at least 1"), (-1, "negative"), (2**32, "1 to 4294967295")])
def test_trip_count_is_checked_like_the_cli(n, reason):
    for call in (
        lambda: mp.profile_archive(KERNELS, "matmul_naive", trip_count=n),
        lambda: mp.profile_binary(MATMUL_BIN, trip_count=n),
    ):
        with pytest.raises(ValueError) as e:
            call()
        m = _message(e)
        assert "trip_count" in m and reason in m, m
    # the CLI refuses the same values
    code, _, err = mp.run_cli([str(KERNELS), "-f", "matmul_naive", "--trip-count", str(n)])
    assert code == 2, err


def test_namespace_is_the_public_api():
    names = dir(mp)
    assert names == sorted(mp.__all__ + ["__version__"])
    for leaked in ("List", "Optional", "os", "Union", "_native"):
        assert leaked not in names
    for n in mp.__all__:
        assert hasattr(mp, n), n


def test_reprs_are_short():
    r = mp.profile_archive(SIMPLE_CALL, "simple_call")
    shown = [repr(r)] + [repr(f) for f in r.functions] + [repr(c) for c in r.calls]
    shown += [repr(s) for s in r.suggestions] + [repr(f) for f in mp.list_functions(KERNELS)]
    shown += [repr(l) for l in mp.profile_archive(KERNELS, "matmul_naive").loops]
    for s in shown:
        assert len(s) <= 160, s
        assert "{" not in s, s
    f = r.functions[0]
    assert repr(f).startswith("Function(symbol="), repr(f)


# the keywords the CLI's options became (issue 37 item 3): each bad value is
# an exception of a fitting type whose message names the keyword, no flag
@pytest.mark.parametrize("call, kind, words", [
    (lambda: mp.profile_archive(KERNELS, "matmul_naive", trip_counts={0x10: 5}),
     ValueError, "trip_counts key 0x10: "),
    (lambda: mp.profile_archive(KERNELS, "matmul_naive", trip_counts={-1: 5}),
     ValueError, "trip_counts={-1: 5}: -1 is not a loop header address"),
    (lambda: mp.profile_archive(KERNELS, "matmul_naive", trip_counts={0x34: 0}),
     ValueError, "trip_counts={0x34: 0}: "),
    (lambda: mp.profile_archive(KERNELS, "matmul_naive", part="prolog"),
     ValueError, "use part='main'"),
    (lambda: mp.profile_binary(MATMUL_BIN, l1_hit_latency=-1), ValueError, "l1_hit_latency"),
    (lambda: mp.profile_binary(MATMUL_BIN, threadgroup=(64, 64, 1)), ValueError,
     "threadgroup='64x64x1': "),
    (lambda: mp.profile_binary(MATMUL_BIN, chip=3), TypeError, "chip= takes a str"),
    (lambda: mp.profile_binary(MATMUL_BIN, l1_hit_rate="x"), TypeError, "l1_hit_rate= takes a number"),
    (lambda: mp.profile_binary(MATMUL_BIN, trip_counts=[1]), TypeError, "trip_counts= takes a dict"),
    (lambda: mp.profile_many([KERNELS], chip="M9"), ValueError, "unknown chip 'M9'"),
    (lambda: mp.profile_many(["/nonexistent"]), FileNotFoundError, "/nonexistent"),
    (lambda: mp.diff("/nonexistent", KERNELS), FileNotFoundError, "/nonexistent"),
    (lambda: mp.diff(KERNELS, KERNELS, gpu="g15g"), ValueError, "no slice for GPU"),
])
def test_keyword_errors_speak_python(call, kind, words):
    with pytest.raises(kind) as e:
        call()
    assert words in _message(e)

