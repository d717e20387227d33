"""A profile shown in a notebook (issue 29, item 7): ``_repr_html_`` is a
fragment whose styles apply only inside it.

Two notebooks are built with nbformat: the same cells (a markdown heading
and text, a code cell, another heading), one whose code cell's output is
the profile as Jupyter stores it (``text/html``: ``_repr_html_()``), one
whose output is plain text. nbconvert turns each into its HTML page (the
``lab`` template: JupyterLab's own CSS), and headless Chromium renders
both: a DOM dump (a measuring script appended to the page writes the
computed styles and boxes into it) and a PNG screenshot. The report must
change nothing of the notebook around it: the page's body and the
notebook's headings and text keep the computed styles of the notebook
without the report, and the screenshot above the output is the same pixels.
Inside, the report's header table starts at the section's left edge with
its cells' text at their left (JupyterLab right-aligns output table
cells). The old whole-document repr failed each: its ``body`` rule took
the notebook's margin and font, ``*`` its box sizing, and the header table
was right-aligned.

Needs nbformat and nbconvert (``tools/test.sh`` installs them) and
Chromium (``chromium``; ``$CHROMIUM`` names another binary). Without them
the test is skipped, except under ``CI=true`` where that is a failure.
``METAL_PROFILER_NOTEBOOK_SHOTS=DIR`` keeps the pages and screenshots there.
"""

import importlib
import json
import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest

import metal_profiler as mp
from conftest import REPO

KERNELS = str(REPO / "examples" / "kernels.archive")
WIDTH, HEIGHT = 1200, 1800


def _missing(what: str):
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail(f"{what} is missing (under CI=true a missing tool fails)")
    pytest.skip(f"{what} is missing")


def _chromium() -> str:
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    _missing("Chromium (the Debian package chromium)")


# Runs in the page after nbconvert's: the computed styles of the
# notebook's own elements, the report's header table and where the
# output starts, written as JSON into <pre id="facts">.
MEASURE = """
(function(){
  function st(e, props){
    if(!e) return null;
    var c = getComputedStyle(e), o = {};
    props.forEach(function(p){ o[p] = c.getPropertyValue(p); });
    return o;
  }
  var text = ['font-size','font-family','font-weight','line-height','color','margin-top','margin-left'];
  var f = {};
  f.body = st(document.body, text.concat(['background-color','box-sizing']));
  f.headings = [].slice.call(document.querySelectorAll('.jp-MarkdownOutput h1, .jp-MarkdownOutput h2'))
    .map(function(e){ return [e.textContent.trim(), st(e, text)]; });
  f.paragraphs = [].slice.call(document.querySelectorAll('.jp-MarkdownOutput p'))
    .map(function(e){ return st(e, text); });
  f.prompt = st(document.querySelector('.jp-InputPrompt'), ['box-sizing','font-family','font-size']);
  var out = document.querySelector('.jp-OutputArea-output');
  f.output_top = out.getBoundingClientRect().top + window.scrollY;
  var t = document.querySelector('table.meta');
  if (t) {
    var sec = t.closest('section.kernel');
    var pad = parseFloat(getComputedStyle(sec).paddingLeft);
    var td = t.rows[0].cells[1], r = document.createRange();
    r.selectNodeContents(td);
    f.meta = {
      label: t.rows[0].cells[0].textContent,
      table_left: t.getBoundingClientRect().left,
      content_left: sec.getBoundingClientRect().left + pad,
      cell_left: td.getBoundingClientRect().left,
      cell_width: td.getBoundingClientRect().width,
      text_left: r.getBoundingClientRect().left,
      text_align: getComputedStyle(td).textAlign
    };
  }
  var pre = document.createElement('pre');
  pre.id = 'facts';
  pre.textContent = JSON.stringify(f);
  document.body.appendChild(pre);
})();
"""


def _notebook_page(html, path: Path):
    """The notebook as nbconvert's HTML page, with the measuring script."""
    nbformat, nbconvert = _import("nbformat"), _import("nbconvert")
    nb = nbformat.v4.new_notebook()
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells.append(nbformat.v4.new_markdown_cell("# A notebook\n\nSome text of the notebook."))
    cell = nbformat.v4.new_code_cell('r = mp.profile_archive(KERNELS, "matmul_naive")\nr')
    data = {"text/plain": "<ProfileResult matmul_naive>"}
    if html is not None:
        data["text/html"] = html
    cell.outputs = [nbformat.v4.new_output("execute_result", data=data, execution_count=1)]
    cell.execution_count = 1
    nb.cells.append(cell)
    nb.cells.append(nbformat.v4.new_markdown_cell("## After the profile\n\nMore text."))
    nbformat.validate(nb)
    page, _ = nbconvert.HTMLExporter(template_name="lab").from_notebook_node(nb)
    end = page.rindex("</body>")
    page = page[:end] + "<script>" + MEASURE + "</script>\n" + page[end:]
    path.write_text(page, encoding="utf-8")


def _import(module: str):
    try:
        return importlib.import_module(module)
    except ImportError:
        _missing(f"the Python package {module}")


def _headless_flags() -> list:
    """The flags every headless run takes (shared with the Rust HTML test)."""
    text = (REPO / "testdata" / "chromium-headless.flags").read_text()
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def _chrome(chromium: str, tmp: Path, page: Path, *extra: str) -> subprocess.CompletedProcess:
    profile = tempfile.mkdtemp(dir=tmp)
    cmd = [
        chromium,
        *_headless_flags(),
        f"--user-data-dir={profile}",
        f"--window-size={WIDTH},{HEIGHT}",
        *extra,
        page.as_uri(),
    ]
    r = subprocess.run(cmd, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"chromium {extra}: {r.stderr.decode(errors='replace')[-2000:]}"
    return r


def _facts(chromium: str, tmp: Path, page: Path) -> dict:
    dom = _chrome(chromium, tmp, page, "--dump-dom").stdout.decode()
    start = dom.index('<pre id="facts">') + len('<pre id="facts">')
    raw = dom[start : dom.index("</pre>", start)]
    for ent, ch in (("&quot;", '"'), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")):
        raw = raw.replace(ent, ch)
    return json.loads(raw)


def _png_rows(path: Path):
    """The rows of an 8-bit RGB/RGBA non-interlaced PNG (what Chromium
    writes) as lists of RGB tuples."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, head = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, colour, _, _, interlace = head
    assert depth == 8 and colour in (2, 6) and interlace == 0, head
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append([tuple(line[x * bpp : x * bpp + 3]) for x in range(w)])
        prev = line
    return rows


def test_repr_html_in_a_notebook_leaves_the_notebook_alone(tmp_path):
    chromium = _chromium()
    keep = os.environ.get("METAL_PROFILER_NOTEBOOK_SHOTS")
    out = Path(keep) if keep else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    r = mp.profile_archive(KERNELS, "matmul_naive")

    pages = {"report": r._repr_html_(), "plain": None}
    facts, shots = {}, {}
    for name, html in pages.items():
        page = out / f"notebook-{name}.html"
        _notebook_page(html, page)
        facts[name] = _facts(chromium, tmp_path, page)
        shot = out / f"notebook-{name}.png"
        _chrome(chromium, tmp_path, page, f"--screenshot={shot}")
        shots[name] = _png_rows(shot)

    rep, plain = facts["report"], facts["plain"]
    # the notebook around the report keeps its own look
    assert rep["body"] == plain["body"], "the page's body is restyled"
    assert [h[0] for h in rep["headings"]] == ["A notebook¶", "After the profile¶"]
    assert rep["headings"] == plain["headings"], "the notebook's headings are restyled"
    assert rep["paragraphs"] == plain["paragraphs"], "the notebook's text is restyled"
    assert rep["prompt"] == plain["prompt"], "the cell prompt is restyled"

    # the report's header table at the section's left edge, its text at
    # the left of its cells (not right-aligned as JupyterLab's tables)
    m = rep["meta"]
    assert m["label"] == "GPU"
    assert abs(m["table_left"] - m["content_left"]) < 1, m
    assert m["text_align"] in ("left", "start"), m
    assert m["text_left"] - m["cell_left"] < 4 < m["cell_width"] / 4, m

    # the pixels: the notebook above the output are the same in both
    # screenshots; the report draws something below (not blank)
    top = int(min(rep["output_top"], plain["output_top"]))
    assert top > 100, rep["output_top"]
    a, b = shots["report"], shots["plain"]
    assert len(a) == len(b) == HEIGHT and len(a[0]) == WIDTH
    same = all(a[y] == b[y] for y in range(top))
    assert same, "the notebook above the report is drawn differently"
    below = {px for row in a[top : top + 400] for px in row}
    assert len(below) > 50, f"the report looks blank ({len(below)} colours)"
    # the report's dark page header starts at the output's left edge
    dark = [x for x, px in enumerate(a[top + 20]) if max(px) < 60]
    assert dark, "no dark report header under the output's top"
