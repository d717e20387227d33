//! The offline path's pieces without any tool: target names, the default
//! target and its note, the pipeline script, the command lines, the time
//! limit of the system runner, and the whole sequence with an in-process
//! runner that writes each step's output (the CLI tests run the same path
//! through `testdata/fake-xcrun/xcrun`).

use std::cell::RefCell;
use std::io;
use std::path::{Path, PathBuf};

use metal_compile::{
    default_target, offline_commands, parse_targets, pipeline_script, CompileError, CompileRequest,
    MetalCompiler, OfflineCompiler, Source, SystemRunner, ToolCommand, ToolOutput, ToolRunner,
};

#[test]
fn targets_are_checked_and_normalised() {
    let t = parse_targets(&["g13g,APPLEGPU_G14G".into(), " g14g ".into(), "G16G".into()]).unwrap();
    assert_eq!(t, ["g13g", "g14g", "g16g"]);
    assert!(parse_targets(&[]).unwrap().is_empty());
    let e = parse_targets(&["m2".into()]).unwrap_err();
    assert!(matches!(e, CompileError::UnknownTarget { .. }));
    assert!(e.to_string().starts_with(
        "--target m2: not a known Apple GPU architecture; use one of: g13g, g13s, g13c"
    ));
}

#[test]
fn default_target_follows_the_host_gpu() {
    assert_eq!(default_target(Some("Apple M1 Max")), ("g13g".into(), None));
    assert_eq!(default_target(Some("Apple M2 Pro")), ("g14g".into(), None));
    let (t, note) = default_target(Some("Apple M4 Pro"));
    assert_eq!(t, "g14g");
    assert_eq!(
        note.unwrap(),
        "your GPU (Apple M4 Pro, G16) has no cycle model yet; profiling the same kernel compiled for M2 (G14G) (--target g16g profiles your GPU's own code: counts and structure, no cycles)"
    );
    // M5 (G17): its code is not decoded at all
    let (t, note) = default_target(Some("Apple M5"));
    assert_eq!(t, "g14g");
    assert_eq!(
        note.unwrap(),
        "your GPU (Apple M5, G17) is not decodable yet; profiling the same kernel compiled for M2 (G14G)"
    );
    let (t, note) = default_target(None);
    assert_eq!(t, "g14g");
    assert!(note
        .unwrap()
        .contains("cannot tell this machine's Apple GPU"));
    // an Intel Mac's brand string names no Apple GPU
    assert_eq!(
        default_target(Some("Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz")).0,
        "g14g"
    );
}

#[test]
fn pipeline_script_is_the_shortest_documented_form() {
    assert_eq!(
        pipeline_script(&["foo".into(), "we\"ird\\".into()]),
        "{\"pipelines\":{\"compute_pipelines\":[{\"compute_function\":\"foo\"},{\"compute_function\":\"we\\\"ird\\\\\"}]}}\n"
    );
}

#[test]
fn command_lines() {
    let mut req = CompileRequest::new(Source::File("k.metal".into()));
    req.std = Some("metal3.0".into());
    req.min_macos = Some("13.3".into());
    let cmds = offline_commands(
        &req,
        Path::new("k.metal"),
        Path::new("/t"),
        &["g13g".into(), "g14g".into()],
    );
    let lines: Vec<String> = cmds.iter().map(|c| c.to_string()).collect();
    assert_eq!(
        lines,
        [
            "xcrun -sdk macosx metal -c -std=metal3.0 -target air64-apple-macos13.3 k.metal -o /t/kernel.air",
            "xcrun -sdk macosx metallib /t/kernel.air -o /t/kernel.metallib",
            "xcrun -sdk macosx metal-tt -arch applegpu_g13g -arch applegpu_g14g -o /t/kernel.archive /t/kernel.metallib /t/pipelines.mtlp-json",
        ]
    );
}

#[cfg(unix)]
#[test]
fn system_runner_stops_a_tool_at_the_time_limit() {
    std::env::set_var(metal_compile::TIMEOUT_ENV, "1");
    let start = std::time::Instant::now();
    let e = SystemRunner
        .run(&ToolCommand::new("sleep").arg("20"))
        .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    assert!(start.elapsed().as_secs() < 10);
    // a quick tool is unaffected, its output kept
    let out = SystemRunner
        .run(
            &ToolCommand::new("sh")
                .arg("-c")
                .arg("echo out; echo err >&2; exit 3"),
        )
        .unwrap();
    assert_eq!(
        (out.status, out.stdout.as_str(), out.stderr.as_str()),
        (Some(3), "out\n", "err\n")
    );
    std::env::remove_var(metal_compile::TIMEOUT_ENV);
}

/// Writes each step's `-o` file (metal-tt: `archive`), records the calls.
struct StepRunner {
    archive: Vec<u8>,
    calls: RefCell<Vec<Vec<String>>>,
    script: RefCell<String>,
}

impl ToolRunner for StepRunner {
    fn run(&self, cmd: &ToolCommand) -> io::Result<ToolOutput> {
        let args = cmd.args_lossy();
        self.calls.borrow_mut().push(args.clone());
        let out = PathBuf::from(&args[args.iter().position(|a| a == "-o").unwrap() + 1]);
        if args[2] == "metal-tt" {
            *self.script.borrow_mut() = std::fs::read_to_string(args.last().unwrap()).unwrap();
            std::fs::write(out, &self.archive)?;
        } else {
            std::fs::write(out, b"x")?;
        }
        Ok(ToolOutput {
            status: Some(0),
            success: true,
            ..Default::default()
        })
    }
}

#[test]
fn the_sequence_returns_metal_tts_output_and_cleans_up() {
    use agx_container::testutil::*;
    let archive = build_test_archive(
        G13G,
        agx_container::Stage::Compute,
        &[0x88, 0],
        &[("_agc.main", 0)],
    );
    let parent = std::env::temp_dir().join(format!("mc-offline-{}", std::process::id()));
    std::fs::create_dir_all(&parent).unwrap();
    let runner = StepRunner {
        archive: archive.clone(),
        calls: RefCell::new(Vec::new()),
        script: RefCell::new(String::new()),
    };
    let c = OfflineCompiler::new(runner)
        .with_host(Some("Apple M1".into()))
        .with_temp_parent(&parent);
    let mut req = CompileRequest::new(Source::Text("kernel void k() {}".into()));
    req.functions = vec!["k".into()];
    let out = c.compile(&req).unwrap();
    assert_eq!(out.bytes, archive);
    assert_eq!(out.targets, ["g13g"], "the host's decodable GPU");
    assert!(out.notes.is_empty(), "{:?}", out.notes);
    assert_eq!(c.runner().calls.borrow().len(), 3);
    assert_eq!(
        *c.runner().script.borrow(),
        "{\"pipelines\":{\"compute_pipelines\":[{\"compute_function\":\"k\"}]}}\n"
    );
    // asked for G14G too: the output has no such slice, and says so
    req.targets = vec!["g13g".into(), "g14g".into()];
    let out = c.compile(&req).unwrap();
    assert_eq!(out.notes, ["metal-tt wrote no applegpu_g14g slice"]);
    assert_eq!(
        std::fs::read_dir(&parent).unwrap().count(),
        0,
        "temporary files left"
    );
    std::fs::remove_dir_all(&parent).unwrap();
}

#[test]
fn jit_on_an_undecodable_gpu_is_noted() {
    assert_eq!(metal_compile::jit_device_note("Apple M1 Pro"), None);
    assert_eq!(metal_compile::jit_device_note("Apple M2"), None);
    // M4: its own code is profiled, untimed
    let n = metal_compile::jit_device_note("Apple M4 Max").unwrap();
    assert!(
        n.starts_with("the driver built code for 'Apple M4 Max': its own Apple9 code, profiled without cycle figures"),
        "{n}"
    );
    assert!(n.ends_with("(--target g14g) for cycles"), "{n}");
    // M5: not decoded
    let n = metal_compile::jit_device_note("Apple M5").unwrap();
    assert!(
        n.starts_with(
            "the driver built code for 'Apple M5', whose GPU this profiler cannot decode"
        ),
        "{n}"
    );
    assert!(
        n.ends_with("drop --jit to compile offline for M2 (--target g14g)"),
        "{n}"
    );
}
