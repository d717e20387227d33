//! The report record (issue #20): facts the record states rather than
//! guesses, the hot-spot headline, and figures that add up.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_metal-profile"))
        .args(args)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .output()
        .expect("spawn metal-profile")
}

fn stdout(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    serde_json::from_str(&stdout(&a)).expect("JSON document")
}

const MATMUL: &str = "examples/matmul_naive.bin";

/// `--trip-count 16` is the default's value, given: the record says
/// "given" (whether the flag was given is threaded from the command line,
/// not guessed from the value); without the flag it says "default".
#[test]
fn trip_count_sixteen_given_is_reported_as_given() {
    let given = stdout(&["--binary", MATMUL, "--trip-count", "16"]);
    assert!(
        given.contains("unknown loop trip counts = 16 (given with --trip-count)"),
        "{given}"
    );
    assert!(
        given.contains("Trip count:       16 (given with --trip-count)"),
        "{given}"
    );
    assert!(!given.contains("(default"), "{given}");
    let dflt = stdout(&["--binary", MATMUL]);
    assert!(
        dflt.contains("unknown loop trip counts = 16 (default; set with --trip-count)"),
        "{dflt}"
    );
    for (args, src) in [
        (&["--binary", MATMUL, "--trip-count", "16"][..], "given"),
        (&["--binary", MATMUL][..], "default"),
    ] {
        let v = json(args);
        let k = &v["kernels"][0];
        assert_eq!(k["model"]["trip_count_source"], src, "{args:?}");
        for l in k["loops"].as_array().unwrap() {
            assert_eq!(l["trip_count_source"], src, "{args:?}");
        }
    }
}
