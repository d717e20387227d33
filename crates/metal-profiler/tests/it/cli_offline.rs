//! The offline front end end to end on any OS: `testdata/fake-xcrun/xcrun`
//! stands in for Apple's tools (first on PATH). It checks every command line
//! it receives (and fails the run on anything unexpected) and writes prepared
//! outputs; metal-tt's output is an archive built here around real G13 code.
//! Covers `kernel.metal -> archive -> report`, `export`, the default target,
//! pass-through flags, and every failure path: compiler errors, missing tools,
//! metal-tt errors (with the AIR-version fix), timeouts, missing or garbage
//! output, bad targets, and no `xcrun` at all.

use crate::common;
use agx_container::testutil::*;
use agx_container::CPU_TYPE_APPLEGPU;
use common::*;
use std::path::PathBuf;
use std::process::{Command, Output};

/// What metal-tt "writes": `simple_call` for G13G and G14G, with AIR.
fn prepared_archive() -> Vec<u8> {
    let img = simple_call_image;
    fat(
        &[
            air_slice(&["simple_call"]),
            (CPU_TYPE_APPLEGPU, G13G, img(G13G)),
            (CPU_TYPE_APPLEGPU, G14G, img(G14G)),
        ],
        false,
    )
}

/// A scratch directory (removed on drop) with the kernel source, the
/// prepared archive, the fake's log, and a private TMPDIR.
struct Env {
    dir: PathBuf,
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Env {
    fn new(name: &str) -> Env {
        let dir = std::env::temp_dir().join(format!("mp-offline-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        std::fs::write(
            dir.join("kernel.metal"),
            "kernel void simple_call(device uint *a [[buffer(0)]]) { a[0] = 1; }\n",
        )
        .unwrap();
        std::fs::write(dir.join("prepared.archive"), prepared_archive()).unwrap();
        Env { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_str().unwrap().to_string()
    }

    fn source(&self) -> String {
        self.path("kernel.metal")
    }

    /// Runs metal-profile with the fake first on PATH; `fail` picks a failure.
    fn run(&self, args: &[&str], fail: Option<&str>, timeout: Option<&str>) -> Output {
        let fake = repo().join("testdata/fake-xcrun");
        let path = format!(
            "{}:{}",
            fake.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut c = Command::new(env!("CARGO_BIN_EXE_metal-profile"));
        c.args(args)
            .env("NO_COLOR", "1")
            .env("PATH", path)
            .env("TMPDIR", self.path("tmp"))
            .env("FAKE_XCRUN_LOG", self.path("xcrun.log"))
            .env("FAKE_XCRUN_ARCHIVE", self.path("prepared.archive"))
            .env("FAKE_XCRUN_SCRIPT_COPY", self.path("script.mtlp-json"))
            .env_remove("FAKE_XCRUN_FAIL")
            .env_remove("METAL_PROFILE_TOOL_TIMEOUT");
        if let Some(f) = fail {
            c.env("FAKE_XCRUN_FAIL", f);
        }
        if let Some(t) = timeout {
            c.env("METAL_PROFILE_TOOL_TIMEOUT", t);
        }
        c.output().unwrap()
    }

    /// The fake's log with the run's temporary directory replaced by `$T`.
    fn log(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.path("xcrun.log")).unwrap_or_default();
        let tmp = self.path("tmp");
        text.lines()
            .map(|l| {
                let mut out = String::new();
                let mut rest = l;
                while let Some(i) = rest.find(&tmp) {
                    out.push_str(&rest[..i]);
                    out.push_str("$T");
                    let after = &rest[i + tmp.len()..];
                    // skip `/metal-compile-tt-<pid>-<nanos>-<n>`
                    let end = after[1..].find('/').map_or(after.len(), |k| k + 1);
                    rest = &after[end..];
                }
                out.push_str(rest);
                out.replace(&self.source(), "$SRC")
            })
            .collect()
    }

    /// Nothing left behind in the private TMPDIR.
    fn assert_clean(&self) {
        let left: Vec<_> = std::fs::read_dir(self.path("tmp"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

const TT: &str = "-sdk macosx metal-tt";

#[test]
fn metal_source_is_compiled_offline_and_profiled() {
    let env = Env::new("profile");
    let src = env.source();
    let o = env.run(
        &[&src, "-f", "simple_call", "--target", "g13g,G14G"],
        None,
        None,
    );
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(
        env.log(),
        [
            "-sdk macosx metal -c $SRC -o $T/kernel.air",
            "-sdk macosx metallib $T/kernel.air -o $T/kernel.metallib",
            &format!("{TT} -arch applegpu_g13g -arch applegpu_g14g -o $T/kernel.archive $T/kernel.metallib $T/pipelines.mtlp-json"),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(env.path("script.mtlp-json")).unwrap(),
        "{\"pipelines\":{\"compute_pipelines\":[{\"compute_function\":\"simple_call\"}]}}\n"
    );
    let text = out(&o);
    assert!(text.contains("metal-profiler: simple_call"), "{text}");
    assert!(text.contains("· GPU G14G (M2) ·"), "{text}");
    assert!(
        err(&o).contains("note: profiling the G14G (M2) slice"),
        "{}",
        err(&o)
    );
    env.assert_clean();

    // --gpu picks the G13 slice of the same build; JSON names it
    let o = env.run(
        &[
            &src,
            "-f",
            "simple_call",
            "--target",
            "g13g,g14g",
            "--gpu",
            "g13g",
            "--format",
            "json",
        ],
        None,
        None,
    );
    assert!(o.status.success(), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["kernels"][0]["gpu_name"], "G13G (M1)");
}

#[cfg(not(target_os = "macos"))]
#[test]
fn default_target_is_g14g_when_the_host_gpu_is_unknown() {
    let env = Env::new("default");
    let o = env.run(&[&env.source(), "-f", "simple_call"], None, None);
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        err(&o).contains(
            "note: cannot tell this machine's Apple GPU; profiling the kernel compiled for M2 (G14G)"
        ),
        "{}",
        err(&o)
    );
    let log = env.log();
    assert!(
        log[2].starts_with(&format!("{TT} -arch applegpu_g14g -o ")),
        "{log:?}"
    );
}

#[test]
fn export_writes_metal_tts_archive_and_flags_pass_through() {
    let env = Env::new("export");
    let dest = env.path("out.archive");
    let inc = env.path("include dir");
    let o = env.run(
        &[
            "export",
            &env.source(),
            "-f",
            "simple_call",
            "-f",
            "other",
            "--target",
            "applegpu_g13s",
            "--target",
            "g14d",
            "-I",
            &inc,
            "-D",
            "TILE=32",
            "--std",
            "metal3.1",
            "--min-macos",
            "14.0",
            "-o",
            &dest,
        ],
        None,
        None,
    );
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains(&format!("wrote {dest}")), "{}", err(&o));
    assert_eq!(
        std::fs::read(&dest).unwrap(),
        std::fs::read(env.path("prepared.archive")).unwrap()
    );
    let log = env.log();
    assert_eq!(
        log[0],
        format!(
            "-sdk macosx metal -c -std=metal3.1 -I {inc} -DTILE=32 -target air64-apple-macos14.0 $SRC -o $T/kernel.air"
        )
    );
    assert!(
        log[2].starts_with(&format!("{TT} -arch applegpu_g13s -arch applegpu_g14d -o ")),
        "{log:?}"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("script.mtlp-json")).unwrap(),
        "{\"pipelines\":{\"compute_pipelines\":[{\"compute_function\":\"simple_call\"},{\"compute_function\":\"other\"}]}}\n"
    );
    // the prepared archive has no G13S/G14D slice: said, not hidden
    assert!(
        err(&o).contains("note: metal-tt wrote no applegpu_g13s slice"),
        "{}",
        err(&o)
    );
    env.assert_clean();
    // and the exported archive profiles anywhere
    let o = env.run(&[&dest, "--list"], None, None);
    assert_prints(&o, "G14G (M2)                yes       *");
}

#[test]
fn source_text_is_compiled_offline() {
    let env = Env::new("text");
    let o = env.run(
        &[
            "--source",
            "kernel void simple_call(device uint *a) { a[0] = 1; }",
            "-f",
            "simple_call",
            "--target",
            "g14g",
        ],
        None,
        None,
    );
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(
        env.log()[0],
        "-sdk macosx metal -c $T/kernel.metal -o $T/kernel.air"
    );
    env.assert_clean();
}

/// One failing run: exit status, stderr, and the temporary files gone.
fn fails(env: &Env, args: &[&str], fail: Option<&str>, timeout: Option<&str>, code: i32) -> String {
    let o = env.run(args, fail, timeout);
    assert_eq!(o.status.code(), Some(code), "{fail:?}: {}", err(&o));
    assert!(out(&o).is_empty(), "{}", out(&o));
    env.assert_clean();
    err(&o)
}

#[test]
fn every_tool_failure_is_one_clear_line() {
    let env = Env::new("fail");
    let src = env.source();
    let args = [src.as_str(), "-f", "simple_call", "--target", "g14g"];
    let one_line = |e: &str| {
        assert_eq!(e.lines().count(), 1, "{e}");
        e.trim_end().to_string()
    };

    let e = one_line(&fails(&env, &args, Some("metal_missing"), None, 1));
    assert!(e.starts_with("metal-profile: error: cannot run `xcrun metal`: xcrun: error: unable to find utility \"metal\""), "{e}");
    assert!(
        e.contains("xcodebuild -downloadComponent MetalToolchain"),
        "{e}"
    );

    let e = one_line(&fails(&env, &args, Some("tt_missing"), None, 1));
    assert!(e.starts_with("metal-profile: error: cannot run `xcrun metal-tt`: xcrun: error: unable to find utility \"metal-tt\""), "{e}");
    assert!(
        e.contains("xcodebuild -downloadComponent MetalToolchain"),
        "{e}"
    );

    let e = one_line(&fails(&env, &args, Some("air_version"), None, 1));
    assert!(
        e.contains("`xcrun -sdk macosx metal-tt -arch applegpu_g14g -o "),
        "{e}"
    );
    assert!(
        e.contains("failed (exit status 1): error: image AIR version (2.7) is bigger than the target's AIR version (2.6); \
                    the library was built for a newer macOS than metal-tt targets: build it for an older one with `--min-macos 14.0`"),
        "{e}"
    );

    let e = one_line(&fails(&env, &args, Some("tt_error"), None, 1));
    assert!(e.contains("failed (exit status 1): metal-tt: error: unknown function 'nope' in pipeline script; check the -f kernel names and the --target architectures"), "{e}");

    let e = one_line(&fails(&env, &args, Some("no_output"), None, 1));
    assert!(
        e.contains("metal-tt")
            && e.contains("failed (exit status 0): it reported success but wrote no "),
        "{e}"
    );

    let e = one_line(&fails(&env, &args, Some("garbage_output"), None, 1));
    assert!(
        e.contains("it wrote 14 bytes that are not a Metal binary archive"),
        "{e}"
    );

    for (fail, tool) in [("timeout_metal", "metal -c"), ("timeout_tt", "metal-tt")] {
        let start = std::time::Instant::now();
        let e = one_line(&fails(&env, &args, Some(fail), Some("1"), 1));
        assert!(e.contains(&format!("`xcrun -sdk macosx {tool}")), "{e}");
        assert!(
            e.contains("did not finish within 1 s and was stopped"),
            "{e}"
        );
        assert!(e.contains("METAL_PROFILE_TOOL_TIMEOUT=SECONDS"), "{e}");
        // the fake sleeps 30 s: it was killed, not waited for
        assert!(start.elapsed().as_secs() < 20, "{fail}");
    }

    // the compiler's own diagnostics follow its one summary line, verbatim
    let e = fails(&env, &args, Some("metal_error"), None, 1);
    let lines: Vec<&str> = e.lines().collect();
    assert!(lines[0].starts_with("metal-profile: error: Metal compilation failed with 1 error (exit status 1): xcrun -sdk macosx metal -c "), "{e}");
    assert!(
        lines[1].ends_with("kernel.metal:3:5: error: use of undeclared identifier 'x'"),
        "{e}"
    );
}

#[test]
fn bad_requests_are_refused_before_any_tool_runs() {
    let env = Env::new("bad");
    let src = env.source();
    let e = fails(
        &env,
        &[&src, "-f", "k", "--target", "g13g,g99z"],
        None,
        None,
        1,
    );
    assert!(
        e.contains("--target g99z: not a known Apple GPU architecture; use one of: g13g, g13s"),
        "{e}"
    );
    let e = fails(&env, &[&src, "--all", "--target", "g14g"], None, None, 1);
    assert!(
        e.contains("--all needs the driver path (--jit, on a Mac)"),
        "{e}"
    );
    let e = fails(
        &env,
        &[&src, "-f", "k", "--jit", "--target", "g14g"],
        None,
        None,
        2,
    );
    assert!(e.contains("--jit") && e.contains("--target"), "{e}");
    assert!(env.log().is_empty(), "{:?}", env.log());
}

#[cfg(not(target_os = "macos"))]
#[test]
fn without_xcrun_linux_says_how_to_get_an_archive() {
    let env = Env::new("noxcrun");
    let o = Command::new(env!("CARGO_BIN_EXE_metal-profile"))
        .args([&env.source(), "-f", "simple_call"])
        .env("PATH", env.path("no-such-dir"))
        .output()
        .unwrap();
    assert_one_line_error(
        &o,
        1,
        "metal-profile export kernel.metal -f NAME -o kernel.archive",
    );
    // --jit is the driver path: macOS only
    let o = env.run(&[&env.source(), "-f", "simple_call", "--jit"], None, None);
    assert_fails(&o, 1, "compiling .metal needs macOS");
    assert!(env.log().is_empty());
}

/// Issue 28 item 3: `--target g15g` (an Apple9 GPU) builds that slice and
/// profiles it natively: the untimed profile of the kernel's own M3 code.
#[test]
fn apple9_target_is_profiled_natively() {
    let env = Env::new("apple9");
    let g15 = g15_archive(&[("simple_call", apple9_example_kernel())]);
    std::fs::write(env.path("prepared.archive"), g15).unwrap();
    let src = env.source();
    let o = env.run(&[&src, "-f", "simple_call", "--target", "g15g"], None, None);
    assert!(o.status.success(), "{}", err(&o));
    let log = env.log();
    assert!(
        log[2].starts_with(&format!("{TT} -arch applegpu_g15g -o ")),
        "{log:?}"
    );
    let t = out(&o);
    assert!(t.contains("Apple9"), "{t}");
    assert!(t.contains("instructions     9"), "{t}");
    assert!(t.contains("Loop 0  0x8–0x2e"), "{t}");
    // the same through --gpu, as JSON: the untimed record, no cycle figure
    let o = env.run(
        &[
            &src,
            "-f",
            "simple_call",
            "--target",
            "g13g,g15g",
            "--gpu",
            "g15g",
            "--format",
            "json",
        ],
        None,
        None,
    );
    assert!(o.status.success(), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let k = &v["kernels"][0];
    assert_eq!(k["instructions"], 9, "{k}");
    assert!(k["timing"]["model"].is_null(), "{k}");
    env.assert_clean();
}
