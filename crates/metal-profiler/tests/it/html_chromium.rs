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
    let profile = dir.join(format!("profile-{}", extra.len()));
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
