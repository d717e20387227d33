//! What the `metal-profile` CLI tests share: the repository root, running
//! the binary (colour off, from the repository root), its output as text,
//! scratch directories and the testdata they read. Each test file uses a
//! part (`mod common; use common::*;`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root (every crate lives at `crates/NAME`).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `metal-profile` with colour off (`NO_COLOR=1`), to be given arguments.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_metal-profile"));
    c.env("NO_COLOR", "1");
    c
}

/// Runs `metal-profile ARGS` in `dir`, `stdin` written to its standard
/// input (none: no input at all).
pub fn run_in(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    use std::io::Write;
    let mut child = bin()
        .args(args)
        .current_dir(dir)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn metal-profile");
    if let Some(data) = stdin {
        // a run that refuses early may close its input first
        let _ = child.stdin.take().unwrap().write_all(data);
    }
    child.wait_with_output().expect("wait for metal-profile")
}

/// Runs `metal-profile ARGS` from the repository root, no standard input.
pub fn run(args: &[&str]) -> Output {
    run_in(&repo(), args, None)
}

/// Runs `metal-profile ARGS` from the repository root with `input` on its
/// standard input.
pub fn run_stdin(args: &[&str], input: &[u8]) -> Output {
    run_in(&repo(), args, Some(input))
}

/// Standard output as text.
pub fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The JSON document `metal-profile ARGS --format json` prints; the run
/// must succeed.
pub fn json(args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let o = run(&a);
    assert!(o.status.success(), "{a:?}: {}", err(&o));
    serde_json::from_slice(&o.stdout).expect("a JSON document")
}

/// The exit code and the only line on stderr (asserted to be one line).
pub fn one_line(o: &Output) -> (Option<i32>, String) {
    let e = err(o);
    assert_eq!(e.lines().count(), 1, "one stderr line expected:\n{e}");
    (o.status.code(), e.trim_end().to_string())
}

/// A scratch directory, removed on drop.
pub struct Tmp(pub PathBuf);

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh scratch directory named by `tag` (unique in one test binary:
/// the process id tells the binaries apart).
pub fn tmp(tag: &str) -> Tmp {
    let d = std::env::temp_dir().join(format!("mp-test-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Tmp(d)
}

/// A scratch directory holding one file `name` with `bytes`, and its path.
pub fn write_tmp(name: &str, bytes: &[u8]) -> (Tmp, PathBuf) {
    let dir = tmp(&format!("file-{name}"));
    let p = dir.0.join(name);
    std::fs::write(&p, bytes).unwrap();
    (dir, p)
}

/// A file of testdata/archives/real (real Apple code, see its NOTE.md).
pub fn real(name: &str) -> Vec<u8> {
    let p = repo().join("testdata/archives/real").join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A path of the repository as an absolute string argument.
pub fn path(p: &str) -> String {
    repo().join(p).to_string_lossy().into_owned()
}

/// Standard output of `metal-profile ARGS` (from the repository root); the
/// run must succeed and print UTF-8.
pub fn ok_out(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", err(&o));
    String::from_utf8(o.stdout).expect("UTF-8 output")
}

/// The helper's symbol in marysaka's `simple_call` (testdata/archives/real).
pub const HELPER_SYM: &str = "l__Z6helperPU9MTLdeviceKjj";

/// A GPU image of CPU subtype `sub` holding the real `simple_call` compute
/// kernel: helper at 0, main at 0x180 in `__text` (the offsets of the
/// original listing).
pub fn simple_call_image(sub: u32) -> Vec<u8> {
    use agx_container::testutil::{code_image, gpu_image_stages, place_text, sym_refs};
    let helper = real("simple_call_compute_l__Z6helperPU9MTLdeviceKjj.bin");
    let main = real("simple_call_compute_shader.bin");
    let (text, syms) = place_text(&[(HELPER_SYM, 0, &helper), ("_agc.main", 0x180, &main)]);
    gpu_image_stages(
        sub,
        &[(
            agx_container::Stage::Compute,
            code_image(&text, Some(&sym_refs(&syms))),
        )],
    )
}

/// `simple_call` as an archive: an AIR slice naming the kernel and one
/// G13G image ([`simple_call_image`]).
pub fn simple_call_archive() -> Vec<u8> {
    use agx_container::testutil::{air_slice, fat, G13G};
    fat(
        &[
            air_slice(&["simple_call"]),
            (
                agx_container::CPU_TYPE_APPLEGPU,
                G13G,
                simple_call_image(G13G),
            ),
        ],
        false,
    )
}

/// Asserts that the run exited with `code` and said `needle` on standard
/// error (shown whole when not).
pub fn assert_fails(o: &Output, code: i32, needle: &str) {
    let e = err(o);
    assert_eq!(o.status.code(), Some(code), "{e}");
    assert!(e.contains(needle), "{e}");
}

/// Asserts that the run succeeded and printed `needle` on standard output
/// (shown whole when not).
pub fn assert_prints(o: &Output, needle: &str) {
    assert!(o.status.success(), "{}", err(o));
    assert!(out(o).contains(needle), "{}", out(o));
}

/// The `name` of each element of the JSON array `list`, in order.
pub fn names(list: &serde_json::Value) -> Vec<&str> {
    list.as_array()
        .expect("a JSON array")
        .iter()
        .map(|x| x["name"].as_str().expect("a name"))
        .collect()
}

/// Asserts that the run exited with `code` and said one line on standard
/// error; that line.
pub fn one_line_error(o: &Output, code: i32) -> String {
    let (c, line) = one_line(o);
    assert_eq!(c, Some(code), "{line}");
    line
}

/// Asserts that the run exited with `code` and said one line on standard
/// error, holding `needle`.
pub fn assert_one_line_error(o: &Output, code: i32, needle: &str) {
    let e = one_line_error(o, code);
    assert!(e.contains(needle), "{e}");
}

/// examples/apple9_loop.a9bin's kernel (9 instructions, 66 bytes, 1 loop).
pub fn apple9_example_kernel() -> Vec<u8> {
    std::fs::read(repo().join("examples/apple9_loop.a9bin")).unwrap()[0x40..].to_vec()
}

/// A G15G (M3) archive of `(metal name, code)` kernels (each `NAME_agc.main`).
pub fn g15_archive(kernels: &[(&str, Vec<u8>)]) -> Vec<u8> {
    use agx_container::testutil::{build_test_archive, layout_text, sym_refs, G15G};
    let named: Vec<(String, &[u8])> = kernels
        .iter()
        .map(|(n, c)| (format!("{n}_agc.main"), c.as_slice()))
        .collect();
    let refs: Vec<(&str, &[u8])> = named.iter().map(|(n, c)| (n.as_str(), *c)).collect();
    let (text, syms) = layout_text(&refs, 256);
    build_test_archive(G15G, agx_container::Stage::Compute, &text, &sym_refs(&syms))
}
