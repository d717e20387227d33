"""`profile_many` and `diff` (issue 15): the batch document and the
comparison, as the command line produces them."""

import shutil

import pytest

import metal_profiler as mp
from conftest import DATA


@pytest.fixture()
def collection(tmp_path):
    d = tmp_path / "kernels"
    (d / "nested").mkdir(parents=True)
    shutil.copy(DATA / "kernels.archive", d / "kernels.archive")
    shutil.copy(DATA / "simple_call.archive", d / "nested" / "simple_call.archive")
    shutil.copy(DATA / "truncated.archive", d / "nested" / "truncated.archive")
    (d / "notes.txt").write_text("not an archive\n")
    return d


def test_profile_many_document(collection):
    doc = mp.profile_many([collection], jobs=2)
    assert doc["schema"] == "metal-profiler/1"
    names = sorted(k["name"] for k in doc["kernels"])
    assert names == ["mandelbrot", "matmul_naive", "simple_call"]
    for k in doc["kernels"]:
        assert k["source"].endswith(".archive")
        assert k["total_cycles"] > 0
    # the truncated archive is reported, not raised; the text file skipped
    assert [e["source"].endswith("truncated.archive") for e in doc["errors"]] == [True]
    assert doc["summary"]["skipped"] == 1
    # same result for any number of jobs
    assert mp.profile_many(collection, jobs=1) == doc


def test_profile_many_bad_arguments(collection):
    # in Python's terms (issue 37): the keyword, not the flag
    with pytest.raises(ValueError, match=r"^jobs=0: give a number of threads, 1 or more$"):
        mp.profile_many([collection], jobs=0)


def test_diff_gates(collection):
    old = mp.profile_many([collection])
    new = mp.profile_many([collection], trip_count=64)
    d = mp.diff(old, new, fail_on=["cycles:5%", "spills"])
    assert d["schema"] == "metal-profiler-diff/1"
    assert d["tripped"] is True
    gates = {g["spec"]: g for g in d["gates"]}
    assert gates["cycles:5%"]["tripped"] and "matmul_naive" in gates["cycles:5%"]["kernels"]
    assert not gates["spills"]["tripped"]
    same = mp.diff(old, old, "cycles")
    assert same["tripped"] is False
    assert same["summary"]["unchanged"] == 3
    # paths work as well as documents
    assert mp.diff(collection, collection)["summary"]["changed"] == 0
    with pytest.raises(ValueError, match="unknown metric"):
        mp.diff(old, new, "speed")
