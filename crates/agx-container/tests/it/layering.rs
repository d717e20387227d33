//! The container is the pipeline's first stage: it depends on no crate of
//! the workspace (docs/architecture.md), and outside it on `cpp_demangle`
//! alone. Which GPUs' code decodes is passed
//! in (`ReadOptions::decodes`), so a dependency on agx-isa or agx-analysis
//! creeping back is a failure here, not only a `cargo tree` to remember.

/// The `[dependencies]`-like tables of a Cargo.toml (`[dependencies]`,
/// `[target.….dependencies]`, `[build-dependencies]`), each entry's name.
fn normal_dependencies(toml: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_deps = false;
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            let header = line.trim_matches(['[', ']']);
            in_deps = header == "dependencies"
                || header == "build-dependencies"
                || (header.starts_with("target.") && header.ends_with(".dependencies"));
            continue;
        }
        if in_deps && !line.is_empty() && !line.starts_with('#') {
            if let Some((name, _)) = line.split_once('=') {
                names.push(name.trim().split('.').next().unwrap_or("").to_string());
            }
        }
    }
    names
}

#[test]
fn depends_on_no_workspace_crate() {
    let toml = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    let workspace =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml")).unwrap();
    let deps = normal_dependencies(&toml);
    for member in [
        "agx-isa",
        "agx-analysis",
        "agx-report",
        "metal-profiler",
        "metal-compile",
    ] {
        assert!(
            workspace.contains(&format!("\"crates/{member}\"")),
            "{member} is a member"
        );
        assert!(
            !deps.iter().any(|d| d == member),
            "agx-container depends on {member}: {deps:?}"
        );
    }
    // outside the workspace: only the C++ demangler of helper names
    // (names.rs; issue 37 asks for a maintained crate)
    assert_eq!(deps, ["cpp_demangle"], "agx-container's dependencies");
    // the parser sees a dependency where there is one
    assert_eq!(
        normal_dependencies(
            "[dependencies]\n# c\nagx-isa.workspace = true\n[dev-dependencies]\nproptest = \"1\"\n"
        ),
        ["agx-isa"]
    );
}
