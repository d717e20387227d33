use std::path::{Path, PathBuf};

use metal_compile::{metal_commands, BuildMode, CompileRequest, Source, ToolCommand};

fn req() -> CompileRequest {
    let mut r = CompileRequest::new(Source::File(PathBuf::from("/src/k.metal")));
    r.functions = vec!["matmul".into()];
    r
}

fn strings(cmd: &ToolCommand) -> Vec<String> {
    let mut v = vec![cmd.program.to_string_lossy().into_owned()];
    v.extend(cmd.args_lossy());
    v
}

/// The command lines (program and arguments) that build `src` into `out`.
fn commands(r: &CompileRequest, src: &str, out: &str, mode: BuildMode) -> Vec<Vec<String>> {
    metal_commands(r, Path::new(src), Path::new(out), mode)
        .iter()
        .map(strings)
        .collect()
}

/// `xcrun -sdk macosx TOOL ARGS`.
fn xcrun(tool: &str, args: &[&str]) -> Vec<String> {
    ["xcrun", "-sdk", "macosx", tool]
        .iter()
        .chain(args)
        .map(|a| a.to_string())
        .collect()
}

#[test]
fn one_step_minimal() {
    let cmds = commands(
        &req(),
        "/src/k.metal",
        "/tmp/t/kernel.metallib",
        BuildMode::OneStep,
    );
    assert_eq!(cmds.len(), 1);
    assert_eq!(
        cmds[0],
        xcrun("metal", &["/src/k.metal", "-o", "/tmp/t/kernel.metallib"])
    );
}

#[test]
fn one_step_passes_std_includes_and_defines_in_order() {
    let mut r = req();
    r.std = Some("metal3.0".into());
    r.include_dirs = vec![PathBuf::from("inc"), PathBuf::from("/opt/my headers")];
    r.defines = vec!["TILE=16".into(), "-DUSE_HALF".into(), "".into()];
    let cmds = commands(&r, "k.metal", "out.metallib", BuildMode::OneStep);
    assert_eq!(
        cmds[0],
        xcrun(
            "metal",
            &[
                "-std=metal3.0",
                "-I",
                "inc",
                "-I",
                "/opt/my headers",
                "-DTILE=16",
                "-DUSE_HALF",
                "k.metal",
                "-o",
                "out.metallib"
            ]
        )
    );
}

#[test]
fn std_prefix_is_tolerated_and_blank_std_dropped() {
    let mut r = req();
    r.std = Some("-std=metal2.4".into());
    let a = commands(&r, "k.metal", "o.metallib", BuildMode::OneStep);
    assert!(a[0].contains(&"-std=metal2.4".to_string()));
    r.std = Some("  ".into());
    let b = commands(&r, "k.metal", "o.metallib", BuildMode::OneStep);
    assert!(!b[0].iter().any(|a| a.starts_with("-std")));
}

#[test]
fn two_step_compiles_to_air_then_links() {
    let mut r = req();
    r.defines = vec!["N=4".into()];
    r.include_dirs = vec![PathBuf::from("inc")];
    let cmds = commands(
        &r,
        "/src/k.metal",
        "/tmp/t/kernel.metallib",
        BuildMode::TwoStep,
    );
    assert_eq!(cmds.len(), 2);
    assert_eq!(
        cmds[0],
        xcrun(
            "metal",
            &[
                "-c",
                "-I",
                "inc",
                "-DN=4",
                "/src/k.metal",
                "-o",
                "/tmp/t/kernel.air"
            ]
        )
    );
    assert_eq!(
        cmds[1],
        xcrun(
            "metallib",
            &["/tmp/t/kernel.air", "-o", "/tmp/t/kernel.metallib"]
        )
    );
}

#[test]
fn display_quotes_words_with_spaces() {
    let cmd = ToolCommand::new("xcrun")
        .arg("-I")
        .arg("/opt/my headers")
        .arg("it's")
        .arg("-DX=1");
    assert_eq!(
        cmd.to_string(),
        r"xcrun -I '/opt/my headers' 'it'\''s' -DX=1"
    );
}

#[test]
fn to_command_carries_program_and_args() {
    let cmd = ToolCommand::new("xcrun").arg("-sdk").arg("macosx");
    let c = cmd.to_command();
    assert_eq!(c.get_program(), "xcrun");
    let args: Vec<_> = c.get_args().collect();
    assert_eq!(args, ["-sdk", "macosx"]);
}
