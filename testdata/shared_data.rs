//! The one locator of the shared test data (`shared/`: the applegpu corpus,
//! Mesa-compiled kernels, real Apple kernels, reference tables), included by
//! every test that reads it (`#[path = "../../../testdata/shared_data.rs"]
//! mod shared_data;`).
//!
//! Where: `$METAL_PROFILER_SHARED` when set, else `../shared` beside the
//! repository root (a fresh CI clone has a copy there). When the data is
//! missing a test skips with a note, except under `CI=true`, where missing
//! data is a failure: CI must never pass by not testing.
//!
//! Every skip (shared data, Chromium, Graphviz missing) goes through
//! [`skip`]: a note on stderr and a line `TEST: reason` in
//! `target/skipped-tests.txt`, which `tools/test.sh` prints at the end (a
//! skipped test still reports "ok" to cargo's harness).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root (every crate lives at `crates/NAME`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shared directory, whether or not it exists.
pub fn shared_root() -> PathBuf {
    match std::env::var_os("METAL_PROFILER_SHARED") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => repo_root().join("../shared"),
    }
}

/// Whether missing data must fail (`CI=true`, as GitHub Actions sets it).
pub fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// `shared/<sub>` when present. Missing: `None` with a note on stderr, or a
/// panic under `CI=true`.
pub fn shared(sub: &str) -> Option<PathBuf> {
    let p = shared_root().join(sub);
    if p.exists() {
        return Some(p);
    }
    let msg = format!(
        "shared test data {} is missing (set METAL_PROFILER_SHARED or put shared/ beside the repository)",
        p.display()
    );
    if required() {
        panic!("{msg}; CI=true: missing data is a failure");
    }
    skip(&msg);
    None
}

/// Records that the running test skips its checks because of `reason`
/// (something missing on this machine): panics under `CI=true`, where
/// nothing may skip; else a note on stderr and a line in
/// [`skipped_list`] for `tools/test.sh` to print.
pub fn skip(reason: &str) {
    if required() {
        panic!("{reason}; CI=true: a test may not skip");
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("?")
        .rsplit("::")
        .next()
        .unwrap_or("?")
        .to_string();
    eprintln!("skipped: {reason}");
    let line = format!("{}::{test}: {reason}\n", env!("CARGO_CRATE_NAME"));
    let path = skipped_list();
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// The list of skipped tests: `target/skipped-tests.txt` (in
/// `$CARGO_TARGET_DIR` when set).
pub fn skipped_list() -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => repo_root().join("target"),
    };
    target.join("skipped-tests.txt")
}

/// The directories right below `dir` (a Mesa corpus: one per kernel),
/// sorted by path (a directory that cannot be read holds none).
pub fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

/// Every file below `dir` (recursively) whose name ends in `.EXT`, sorted
/// by path (a directory that cannot be read holds none).
pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    files_with_exts(dir, &[ext])
}

/// [`files_with_ext`] for names ending in any of `exts`.
pub fn files_with_exts(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for p in rd.flatten().map(|e| e.path()) {
            if p.is_dir() {
                walk(&p, exts, out);
            } else if p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)) {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, exts, &mut out);
    out.sort();
    out
}
