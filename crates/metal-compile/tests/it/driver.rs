//! The compile sequence with a fake compiler and a fake harvester: what runs, what comes back,
//! and that the temporary directory is gone afterwards on every path.

use std::cell::RefCell;
use std::io;
use std::path::{Path, PathBuf};

use metal_compile::{
    ArchiveHarvester, BuildMode, CompileError, CompileRequest, FunctionSelection, MetalCompiler,
    Source, TempDir, ToolCommand, ToolOutput, ToolRunner, XcrunCompiler, SOURCE_TEXT_LABEL,
};

const KERNEL: &str = "kernel void k(device float *a [[buffer(0)]]) { a[0] = 1; }\n";

/// What the fake compiler should do.
#[derive(Clone)]
enum Behaviour {
    Ok { stderr: String },
    Fail { stderr: String, code: i32 },
    SpawnError(io::ErrorKind),
    SucceedWithoutOutput,
}

struct FakeRunner {
    behaviour: Behaviour,
    calls: RefCell<Vec<Vec<String>>>,
    /// The source text seen by the compiler (read while the temp file still exists).
    seen_source: RefCell<Option<String>>,
}

impl FakeRunner {
    fn new(behaviour: Behaviour) -> Self {
        FakeRunner {
            behaviour,
            calls: RefCell::new(Vec::new()),
            seen_source: RefCell::new(None),
        }
    }
}

impl ToolRunner for FakeRunner {
    fn run(&self, cmd: &ToolCommand) -> io::Result<ToolOutput> {
        let args = cmd.args_lossy();
        self.calls.borrow_mut().push(args.clone());
        if let Some(src) = args.iter().find(|a| a.ends_with(".metal")) {
            *self.seen_source.borrow_mut() = std::fs::read_to_string(src).ok();
        }
        let out = args
            .iter()
            .position(|a| a == "-o")
            .map(|i| PathBuf::from(&args[i + 1]));
        match &self.behaviour {
            Behaviour::Ok { stderr } => {
                if args[2] == "metallib" {
                    // The link step reads the .air written by the compile step.
                    assert!(Path::new(&args[3]).is_file(), "missing {}", args[3]);
                }
                std::fs::write(out.unwrap(), b"MTLB-fake").unwrap();
                Ok(ToolOutput {
                    status: Some(0),
                    success: true,
                    stdout: String::new(),
                    stderr: stderr.clone(),
                })
            }
            Behaviour::Fail { stderr, code } => Ok(ToolOutput {
                status: Some(*code),
                success: false,
                stdout: String::new(),
                stderr: stderr.clone(),
            }),
            Behaviour::SpawnError(kind) => Err(io::Error::from(*kind)),
            Behaviour::SucceedWithoutOutput => Ok(ToolOutput {
                status: Some(0),
                success: true,
                ..ToolOutput::default()
            }),
        }
    }
}

enum HarvestBehaviour {
    Ok,
    Fail,
    Panic,
}

struct FakeHarvester(HarvestBehaviour);

impl ArchiveHarvester for FakeHarvester {
    fn harvest(
        &self,
        metallib: &Path,
        selection: &FunctionSelection,
        archive_out: &Path,
    ) -> Result<(String, Vec<String>), CompileError> {
        assert_eq!(std::fs::read(metallib).unwrap(), b"MTLB-fake");
        match self.0 {
            HarvestBehaviour::Ok => {
                std::fs::write(archive_out, b"\xcb\xfe\xba\xbefake-archive").unwrap();
                let names = match selection {
                    FunctionSelection::Named(n) => n.clone(),
                    FunctionSelection::AllKernels => vec!["a".into(), "b".into()],
                };
                Ok(("Apple M1 Pro".into(), names))
            }
            HarvestBehaviour::Fail => Err(CompileError::FunctionNotFound {
                name: "nope".into(),
                available: vec!["k".into()],
            }),
            HarvestBehaviour::Panic => panic!("harvester exploded"),
        }
    }
}

/// A private parent for the compiler's temp dirs, so leftovers can be counted.
struct Sandbox {
    root: TempDir,
}

impl Sandbox {
    fn new() -> Self {
        Sandbox {
            root: TempDir::new("mc-test").unwrap(),
        }
    }
    fn temps(&self) -> PathBuf {
        let p = self.root.join("temps");
        std::fs::create_dir_all(&p).unwrap();
        p
    }
    fn leftovers(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.root.join("temps"))
            .map(|rd| rd.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default()
    }
    fn source_file(&self) -> PathBuf {
        let p = self.root.join("k.metal");
        std::fs::write(&p, KERNEL).unwrap();
        p
    }
}

fn file_request(sb: &Sandbox) -> CompileRequest {
    let mut r = CompileRequest::new(Source::File(sb.source_file()));
    r.functions = vec!["k".into()];
    r
}

fn compiler(
    sb: &Sandbox,
    b: Behaviour,
    h: HarvestBehaviour,
) -> XcrunCompiler<FakeRunner, FakeHarvester> {
    XcrunCompiler::new(FakeRunner::new(b), FakeHarvester(h)).with_temp_parent(sb.temps())
}

/// The error of compiling [`file_request`] with these fakes.
fn compile_error(sb: &Sandbox, b: Behaviour, h: HarvestBehaviour) -> CompileError {
    compiler(sb, b, h).compile(&file_request(sb)).unwrap_err()
}

fn ok() -> Behaviour {
    Behaviour::Ok {
        stderr: String::new(),
    }
}

#[test]
fn success_returns_archive_and_cleans_up() {
    let sb = Sandbox::new();
    let c = compiler(&sb, ok(), HarvestBehaviour::Ok);
    let req = file_request(&sb);
    let got = c.compile(&req).unwrap();
    assert_eq!(got.bytes, b"\xcb\xfe\xba\xbefake-archive");
    assert_eq!(got.device_name, "Apple M1 Pro");
    assert_eq!(got.functions, ["k"]);
    assert_eq!(got.kept_at, None);
    assert_eq!(got.compiler_output, "");
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());

    let calls = c_calls(&c);
    assert_eq!(calls.len(), 1);
    assert_eq!(&calls[0][..3], ["-sdk", "macosx", "metal"]);
    assert_eq!(calls[0][3], sb.source_file().to_string_lossy());
}

fn c_calls(c: &XcrunCompiler<FakeRunner, FakeHarvester>) -> Vec<Vec<String>> {
    c.runner().calls.borrow().clone()
}

#[test]
fn keep_archive_writes_the_file() {
    let sb = Sandbox::new();
    let c = compiler(&sb, ok(), HarvestBehaviour::Ok);
    let mut req = file_request(&sb);
    let keep = sb.root.join("saved.archive");
    req.keep_archive = Some(keep.clone());
    let got = c.compile(&req).unwrap();
    assert_eq!(got.kept_at.as_deref(), Some(keep.as_path()));
    assert_eq!(std::fs::read(&keep).unwrap(), got.bytes);
    assert!(sb.leftovers().is_empty());
}

#[test]
fn keep_archive_to_bad_path_fails_and_cleans_up() {
    let sb = Sandbox::new();
    let c = compiler(&sb, ok(), HarvestBehaviour::Ok);
    let mut req = file_request(&sb);
    req.keep_archive = Some(sb.root.join("no/such/dir/x.archive"));
    let err = c.compile(&req).unwrap_err();
    assert!(matches!(err, CompileError::Io { .. }), "{err}");
    assert!(err.to_string().contains("x.archive"));
    assert!(sb.leftovers().is_empty());
}

#[test]
fn source_text_is_written_to_a_temp_file_then_removed() {
    let sb = Sandbox::new();
    let c = compiler(&sb, ok(), HarvestBehaviour::Ok);
    let mut req = CompileRequest::new(Source::Text(KERNEL.into()));
    req.all = true;
    let got = c.compile(&req).unwrap();
    assert_eq!(got.functions, ["a", "b"]);
    assert_eq!(c.runner().seen_source.borrow().as_deref(), Some(KERNEL));
    let calls = c_calls(&c);
    let src = PathBuf::from(&calls[0][3]);
    assert_eq!(src.file_name().unwrap(), "kernel.metal");
    assert!(src.starts_with(sb.temps()));
    assert!(!src.exists());
    assert!(sb.leftovers().is_empty());
}

#[test]
fn two_step_mode_runs_compile_then_link_and_cleans_up() {
    let sb = Sandbox::new();
    let c = compiler(&sb, ok(), HarvestBehaviour::Ok).with_mode(BuildMode::TwoStep);
    c.compile(&file_request(&sb)).unwrap();
    let calls = c_calls(&c);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0][2..4], ["metal", "-c"]);
    assert!(calls[0].last().unwrap().ends_with("kernel.air"));
    assert_eq!(calls[1][2], "metallib");
    assert!(sb.leftovers().is_empty());
}

#[test]
fn warnings_on_success_are_returned_verbatim() {
    let sb = Sandbox::new();
    let warn =
        "/x/k.metal:1:5: warning: unused variable 'q'\n    int q;\n    ^\n1 warning generated.\n";
    let c = compiler(
        &sb,
        Behaviour::Ok {
            stderr: warn.into(),
        },
        HarvestBehaviour::Ok,
    );
    let got = c.compile(&file_request(&sb)).unwrap();
    assert_eq!(got.compiler_output, warn);
}

const FAILURE: &str = "\
{SRC}:1:57: error: use of undeclared identifier 'b'
kernel void k(device float *a [[buffer(0)]]) { a[0] = b; }
                                                        ^
1 error generated.
";

#[test]
fn compiler_failure_shows_diagnostics_verbatim_and_cleans_up() {
    let sb = Sandbox::new();
    let src = sb.source_file();
    let stderr = FAILURE.replace("{SRC}", &src.to_string_lossy());
    let err = compile_error(
        &sb,
        Behaviour::Fail {
            stderr: stderr.clone(),
            code: 1,
        },
        HarvestBehaviour::Ok,
    );
    let CompileError::CompilerFailed {
        status,
        diagnostics,
        output,
        command,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*status, Some(1));
    assert_eq!(output, &stderr);
    assert!(command.starts_with("xcrun -sdk macosx metal "));
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].line, Some(1));
    assert_eq!(err.diagnostics().len(), 1);

    let text = err.to_string();
    let mut lines = text.lines();
    let first = lines.next().unwrap();
    assert!(
        first.starts_with("Metal compilation failed with 1 error (exit status 1): xcrun"),
        "{first}"
    );
    assert_eq!(lines.collect::<Vec<_>>().join("\n"), stderr.trim_end());
    assert!(sb.leftovers().is_empty());
}

#[test]
fn compiler_failure_for_source_text_names_source_not_the_temp_file() {
    let sb = Sandbox::new();
    // The fake compiler reports the path it was given, like `metal` does.
    struct EchoPathFail(FakeRunner);
    impl ToolRunner for EchoPathFail {
        fn run(&self, cmd: &ToolCommand) -> io::Result<ToolOutput> {
            let src = cmd.args_lossy()[3].clone();
            self.0.run(cmd)?;
            Ok(ToolOutput {
                status: Some(1),
                success: false,
                stdout: String::new(),
                stderr: FAILURE.replace("{SRC}", &src),
            })
        }
    }
    let c = XcrunCompiler::new(
        EchoPathFail(FakeRunner::new(Behaviour::SucceedWithoutOutput)),
        FakeHarvester(HarvestBehaviour::Ok),
    )
    .with_temp_parent(sb.temps());
    let mut req = CompileRequest::new(Source::Text(KERNEL.into()));
    req.functions = vec!["k".into()];
    let err = c.compile(&req).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "\n{SOURCE_TEXT_LABEL}:1:57: error: use of undeclared identifier 'b'"
        )),
        "{text}"
    );
    assert_eq!(
        err.diagnostics()[0].file.as_deref(),
        Some(SOURCE_TEXT_LABEL)
    );
    assert!(sb.leftovers().is_empty());
}

#[test]
fn harvester_failure_cleans_up() {
    let sb = Sandbox::new();
    let err = compile_error(&sb, ok(), HarvestBehaviour::Fail);
    assert_eq!(
        err.to_string(),
        "function `nope` not found in the compiled library (available: k)"
    );
    assert!(sb.leftovers().is_empty());
}

#[test]
fn harvester_panic_still_cleans_up() {
    let sb = Sandbox::new();
    let req = file_request(&sb);
    let temps = sb.temps();
    let r = std::panic::catch_unwind(move || {
        let c = XcrunCompiler::new(
            FakeRunner::new(ok()),
            FakeHarvester(HarvestBehaviour::Panic),
        )
        .with_temp_parent(temps);
        let _ = c.compile(&req);
    });
    assert!(r.is_err());
    assert!(sb.leftovers().is_empty());
}

#[test]
fn missing_metallib_after_success_is_an_error_and_cleans_up() {
    let sb = Sandbox::new();
    let err = compile_error(&sb, Behaviour::SucceedWithoutOutput, HarvestBehaviour::Ok);
    assert!(err.to_string().contains("wrote no"), "{err}");
    assert!(sb.leftovers().is_empty());
}

#[test]
fn xcrun_missing_is_tool_not_found() {
    let sb = Sandbox::new();
    let err = compile_error(
        &sb,
        Behaviour::SpawnError(io::ErrorKind::NotFound),
        HarvestBehaviour::Ok,
    );
    assert!(matches!(err, CompileError::ToolNotFound { .. }));
    let text = err.to_string();
    assert!(
        text.starts_with("cannot run `xcrun metal`: not found"),
        "{text}"
    );
    assert!(text.contains("xcode-select --install"));
    assert!(sb.leftovers().is_empty());
}

/// `metal` missing from the toolchain, as xcrun says it and as Xcode 26
/// without the Metal Toolchain component says it: `ToolNotFound`, one line
/// naming the component to install.
#[test]
fn metal_missing_from_toolchain_is_tool_not_found() {
    for (stderr, code, says) in [
        (
            "xcrun: error: unable to find utility \"metal\", not a developer tool or in PATH\n",
            72,
            "unable to find utility \"metal\"",
        ),
        (
            "error: error: cannot execute tool 'metal' due to missing Metal Toolchain; \
             use: xcodebuild -downloadComponent MetalToolchain\n",
            1,
            "xcodebuild -downloadComponent MetalToolchain",
        ),
    ] {
        let sb = Sandbox::new();
        let stderr = stderr.into();
        let err = compile_error(&sb, Behaviour::Fail { stderr, code }, HarvestBehaviour::Ok);
        let text = err.to_string();
        assert!(matches!(err, CompileError::ToolNotFound { .. }), "{text}");
        assert!(text.contains(says), "{text}");
        assert!(text.contains("MetalToolchain"), "{text}");
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(sb.leftovers().is_empty());
    }
}

#[test]
fn missing_source_file() {
    let sb = Sandbox::new();
    let c = compiler(&sb, ok(), HarvestBehaviour::Ok);
    let mut req = CompileRequest::new(Source::File(sb.root.join("absent.metal")));
    req.functions = vec!["k".into()];
    let err = c.compile(&req).unwrap_err();
    assert!(matches!(err, CompileError::SourceNotFound(_)));
    assert!(err.to_string().starts_with("Metal source not found: "));
    assert!(c_calls(&c).is_empty());
    assert!(sb.leftovers().is_empty());
}

#[test]
fn function_selection_rules() {
    let sb = Sandbox::new();
    let c = compiler(&sb, ok(), HarvestBehaviour::Ok);
    let mut req = CompileRequest::new(Source::File(sb.source_file()));
    let err = c.compile(&req).unwrap_err();
    assert!(matches!(err, CompileError::NoFunctionsRequested));
    assert_eq!(
        err.to_string(),
        "no kernel function selected: pass -f NAME (repeatable) or --all"
    );

    req.functions = vec!["a".into(), " ".into()];
    assert!(matches!(
        c.compile(&req).unwrap_err(),
        CompileError::InvalidRequest(_)
    ));

    req.functions = vec!["b".into(), "a".into(), "b".into()];
    assert_eq!(c.compile(&req).unwrap().functions, ["b", "a"]);

    req.all = true;
    assert_eq!(c.compile(&req).unwrap().functions, ["a", "b"]);
    assert!(sb.leftovers().is_empty());
}

#[test]
fn flags_reach_the_compiler() {
    let sb = Sandbox::new();
    let c = compiler(&sb, ok(), HarvestBehaviour::Ok);
    let mut req = file_request(&sb);
    req.include_dirs = vec![PathBuf::from("inc")];
    req.defines = vec!["TILE=8".into()];
    req.std = Some("metal3.1".into());
    c.compile(&req).unwrap();
    let calls = c_calls(&c);
    assert_eq!(calls[0][3..7], ["-std=metal3.1", "-I", "inc", "-DTILE=8"]);
}

/// The real process runner on a machine without `xcrun` (Linux CI): the spawn failure becomes
/// a clear error, and nothing is left behind.
#[cfg(not(target_os = "macos"))]
#[test]
fn system_runner_without_xcrun() {
    use metal_compile::SystemRunner;
    if std::process::Command::new("xcrun")
        .arg("--version")
        .output()
        .is_ok()
    {
        return; // someone installed an xcrun look-alike; nothing to check
    }
    let sb = Sandbox::new();
    let c = XcrunCompiler::new(SystemRunner, FakeHarvester(HarvestBehaviour::Ok))
        .with_temp_parent(sb.temps());
    let err = c.compile(&file_request(&sb)).unwrap_err();
    assert!(matches!(err, CompileError::ToolNotFound { .. }), "{err}");
    assert!(sb.leftovers().is_empty());
}
