//! `--format html` rendered by a real browser: headless Chromium loads the
//! page from disk (no network), and the test checks that the screenshot is
//! not blank, that the DOM has one SVG box per basic block (the count the
//! JSON report gives), that the page's script ran, that every in-page link
//! has its target, and that the console stayed empty.
//!
//! Needs `chromium` (Debian package; `.ci/run` installs it). Without it the
//! test is skipped, except under `CI=true` where that is a failure.
//! `METAL_PROFILER_UPDATE_SCREENSHOT=1` copies the screenshot to
//! docs/report.png (the picture in the README).

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::shared_data;

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Whether a Chromium is found; when not, records the skip (a failure
/// under CI=true).
fn have_chromium() -> bool {
    let found = chromium().is_some();
    if !found {
        shared_data::skip("chromium is not installed (apt-get install chromium)");
    }
    found
}

fn profiler(args: &[&str]) -> Output {
    let o = run(args);
    assert!(o.status.success(), "metal-profile {args:?}: {}", err(&o));
    o
}

/// The flags every headless run takes (shared with the Python notebook
/// test).
fn headless_flags() -> Vec<String> {
    std::fs::read_to_string(repo().join("testdata/chromium-headless.flags"))
        .expect("testdata/chromium-headless.flags")
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Runs headless Chromium on `page` with `extra` arguments; kills it after
/// two minutes.
fn run_chromium(bin: &Path, dir: &Path, page: &Path, extra: &[String]) -> Output {
    // one profile directory per page and run: runs may go in parallel
    let stem = page.file_stem().map(|s| s.to_string_lossy().into_owned());
    let profile = dir.join(format!(
        "profile-{}-{}",
        stem.unwrap_or_default(),
        extra.len()
    ));
    let mut cmd = Command::new(bin);
    cmd.args(headless_flags())
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start chromium");
    let start = Instant::now();
    // stdout/stderr are read after exit; a page this size fits the pipes
    // only if drained, so drain them on threads
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut v).ok();
        v
    });
    let t2 = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut v).ok();
        v
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Output {
        status,
        stdout: t1.join().unwrap(),
        stderr: t2.join().unwrap(),
    }
}

/// Total basic blocks over the kernels of a JSON report.
fn json_blocks(args: &[&str]) -> usize {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let o = profiler(&a);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["kernels"]
        .as_array()
        .expect("kernels array")
        .iter()
        .map(|k| k["cfg"]["blocks"].as_u64().expect("cfg.blocks") as usize)
        .sum()
}

/// Loads the page for `args` in Chromium and checks it; returns the
/// screenshot path.
fn check_in_browser(tag: &str, args: &[&str], dir: &Path) -> PathBuf {
    let Some(bin) = chromium() else {
        unreachable!()
    };
    let page = dir.join(format!("{tag}.html"));
    let mut a = args.to_vec();
    let page_s = page.display().to_string();
    a.extend(["--format", "html", "-o", &page_s]);
    profiler(&a);
    let blocks = json_blocks(args);
    assert!(blocks > 0);

    // DOM after scripts ran, and the console
    let o = run_chromium(
        &bin,
        dir,
        &page,
        &[
            "--enable-logging=stderr".into(),
            "--v=0".into(),
            "--dump-dom".into(),
        ],
    );
    assert!(o.status.success(), "chromium --dump-dom failed");
    let dom = String::from_utf8_lossy(&o.stdout);
    let log = String::from_utf8_lossy(&o.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "{tag}: console output: {console:#?}");
    assert!(
        dom.contains("data-ready=\"1\""),
        "{tag}: the page's script did not run"
    );
    assert_eq!(
        dom.matches("<g class=\"blk\"").count(),
        blocks,
        "{tag}: one SVG box per basic block"
    );
    // every in-page link has its target
    for part in dom.split("href=\"#").skip(1) {
        let id = &part[..part.find('"').unwrap()];
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "{tag}: link to #{id} has no target"
        );
    }

    // screenshot: not blank
    let shot = dir.join(format!("{tag}.png"));
    let o = run_chromium(
        &bin,
        dir,
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,1600".into(),
        ],
    );
    assert!(o.status.success(), "chromium --screenshot failed");
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bpp = info.color_type.samples();
    let px = &buf[..info.buffer_size()];
    let mut colours = std::collections::HashSet::new();
    let first = &px[..bpp];
    let mut differ = 0usize;
    let n = px.len() / bpp;
    for c in px.chunks(bpp) {
        colours.insert(c[..3.min(bpp)].to_vec());
        if c != first {
            differ += 1;
        }
    }
    assert!(
        colours.len() > 50,
        "{tag}: screenshot looks blank ({} colours)",
        colours.len()
    );
    assert!(
        differ * 10 > n,
        "{tag}: screenshot is mostly one colour ({differ} of {n} pixels differ)"
    );
    shot
}

#[test]
fn html_report_renders_in_headless_chromium() {
    if !have_chromium() {
        return;
    }
    let tmp = tmp("one");
    let shot = check_in_browser(
        "conv2d",
        &[
            "--binary",
            "testdata/mesa/conv2d_kxk_nested/conv2d_kxk_nested.bin",
            "-f",
            "conv2d_kxk_nested",
        ],
        &tmp.0,
    );
    if std::env::var_os("METAL_PROFILER_UPDATE_SCREENSHOT").is_some() {
        std::fs::copy(&shot, repo().join("docs/report.png")).unwrap();
    }
}

#[test]
fn several_kernels_and_calls_render_in_headless_chromium() {
    if !have_chromium() {
        return;
    }
    let tmp = tmp("all");
    check_in_browser("all", &["examples/kernels.archive", "--all"], &tmp.0);
    // main + helper on one page: the call links to the helper's section
    check_in_browser(
        "call",
        &["examples/simple_call.archive", "--part", "all"],
        &tmp.0,
    );
}

/// The in-page checker of [`geometry`].
const GEOMETRY_JS: &str = include_str!("html_geometry.js");

/// Writes the page for `args`, or takes `page` as it is, adds the
/// geometry checker and returns what Chromium's layout of it measured.
fn geometry_of_page(bin: &Path, dir: &Path, tag: &str, html: &str) -> serde_json::Value {
    let page = dir.join(format!("{tag}-geometry.html"));
    assert!(html.contains("</body>"), "{tag}: page without </body>");
    let checked = html.replace("</body>", &format!("<script>{GEOMETRY_JS}</script></body>"));
    std::fs::write(&page, checked).unwrap();
    let o = run_chromium(
        bin,
        dir,
        &page,
        &["--window-size=1280,1600".into(), "--dump-dom".into()],
    );
    assert!(o.status.success(), "{tag}: chromium --dump-dom failed");
    let dom = String::from_utf8_lossy(&o.stdout);
    let start = dom
        .find("<pre id=\"geometry\">")
        .unwrap_or_else(|| panic!("{tag}: the geometry checker did not run"))
        + "<pre id=\"geometry\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{tag}: geometry JSON: {e}: {text}"))
}

/// The problems the checker found on one page, one line each; empty when
/// the layout is clean and every graph fills its panel.
fn geometry_problems(tag: &str, g: &serde_json::Value) -> Vec<String> {
    let mut bad = Vec::new();
    for kind in ["overlaps", "edge_hits", "clipped"] {
        for item in g[kind].as_array().expect(kind) {
            bad.push(format!("{tag}: {kind}: {}", item.as_str().unwrap_or("?")));
        }
    }
    let fills = g["fill"].as_array().expect("fill");
    assert!(!fills.is_empty(), "{tag}: no CFG on the page");
    for (i, f) in fills.iter().enumerate() {
        let v = |k: &str| f[k].as_f64().unwrap_or_else(|| panic!("{tag}: fill.{k}"));
        // the panel shows at least 80% of its width and height as graph
        // (a larger graph scrolls inside it: then the panel is full)
        let (w, h) = (v("svg_w").min(v("client_w")), v("svg_h").min(v("client_h")));
        if w < 0.8 * v("client_w") || h < 0.8 * v("client_h") {
            bad.push(format!(
                "{tag}: graph {i} fills {w:.0}x{h:.0} of its {:.0}x{:.0} panel",
                v("client_w"),
                v("client_h")
            ));
        }
    }
    bad
}

fn page_html(tag: &str, args: &[&str], dir: &Path) -> String {
    let page = dir.join(format!("{tag}.html"));
    let page_s = page.display().to_string();
    let mut a = args.to_vec();
    a.extend(["--format", "html", "-o", &page_s]);
    profiler(&a);
    std::fs::read_to_string(&page).unwrap()
}

/// Issue 37 item 6: in the browser's own layout, on the examples and on
/// every kernel of the repo's Mesa slice, no label overlaps another label
/// or a foreign block, no edge runs through a label, no block text leaves
/// its box, and each graph fills its panel.
#[test]
fn cfg_geometry_in_headless_chromium() {
    if !have_chromium() {
        return;
    }
    let bin = chromium().unwrap();
    let tmp = tmp("geometry");
    let dir = tmp.0.clone();
    let mut pages: Vec<(String, Vec<String>)> = vec![
        (
            "all".into(),
            vec!["examples/kernels.archive".into(), "--all".into()],
        ),
        (
            "call".into(),
            vec![
                "examples/simple_call.archive".into(),
                "--part".into(),
                "all".into(),
            ],
        ),
        (
            "tex".into(),
            vec!["examples/texread.archive".into(), "--all".into()],
        ),
    ];
    let mesa = repo().join("testdata/mesa");
    let mut names: Vec<String> = std::fs::read_dir(&mesa)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(
        names.len() >= 30,
        "testdata/mesa has {} kernels",
        names.len()
    );
    for n in &names {
        let bin_path = format!("testdata/mesa/{n}/{n}.bin");
        pages.push((
            n.clone(),
            vec!["--binary".into(), bin_path, "-f".into(), n.clone()],
        ));
    }
    // two pages at a time: the machine class has 2 cores
    let problems = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((tag, args)) = pages.get(i) else {
                    break;
                };
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let html = page_html(tag, &args, &dir);
                let g = geometry_of_page(&bin, &dir, tag, &html);
                problems.lock().unwrap().extend(geometry_problems(tag, &g));
            });
        }
    });
    let problems = problems.into_inner().unwrap();
    assert!(
        problems.is_empty(),
        "{} layout problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The checker is not blind: a loop label moved onto a block, a block's
/// text pushed out of its box, and a graph shrunk inside its panel are each
/// reported.
#[test]
fn cfg_geometry_check_catches_a_broken_layout() {
    if !have_chromium() {
        return;
    }
    let bin = chromium().unwrap();
    let tmp = tmp("geometry-broken");
    let html = page_html(
        "mm",
        &["examples/kernels.archive", "-f", "matmul_naive"],
        &tmp.0,
    );
    let clean = geometry_of_page(&bin, &tmp.0, "clean", &html);
    assert_eq!(geometry_problems("clean", &clean), Vec::<String>::new());
    // the loop label placed where block 1's first line is
    let b1 = html.find("id=\"k0-n1\"").expect("block 1");
    let tx = &html[b1..][html[b1..].find("<text x=\"").unwrap() + 9..];
    let (x, rest) = tx.split_at(tx.find('"').unwrap());
    let y = &rest[rest.find("y=\"").unwrap() + 3..];
    let y = &y[..y.find('"').unwrap()];
    let l = html.find("<text class=\"loop-label\"").expect("loop label");
    let l_end = l + html[l..].find('>').unwrap();
    let moved = format!(
        "{}<text class=\"loop-label\" x=\"{x}\" y=\"{y}\" fill=\"#3730a3\"{}",
        &html[..l],
        &html[l_end..]
    );
    let g = geometry_of_page(&bin, &tmp.0, "moved", &moved);
    let p = geometry_problems("moved", &g);
    assert!(
        p.iter().any(|l| l.contains("overlaps")),
        "moved label not caught: {p:?}"
    );
    // a block's text out of its box
    let pushed = html.replacen(&format!("<text x=\"{x}\""), "<text x=\"900\"", 1);
    let p = geometry_problems("pushed", &geometry_of_page(&bin, &tmp.0, "pushed", &pushed));
    assert!(
        p.iter().any(|l| l.contains("clipped")),
        "pushed text not caught: {p:?}"
    );
    // the graph drawn small inside a wide panel
    let small = html.replace(
        ".graph{overflow:auto;",
        ".graph{overflow:auto;min-width:1200px;min-height:900px;",
    );
    assert_ne!(
        small, html,
        "the page's .graph rule changed: update this test"
    );
    let p = geometry_problems("small", &geometry_of_page(&bin, &tmp.0, "small", &small));
    assert!(
        p.iter().any(|l| l.contains("fills")),
        "small graph not caught: {p:?}"
    );
}
