//! The front end's modules depend one way (issue 29: no import circle
//! between `app`, `batch` and `diff`; docs/architecture.md "Front-end
//! layers"): `main` → `app` → `diff` → `batch` → `pipeline` → `cli` (the
//! option types) and the library crates. The test reads every `crate::…`
//! path in the code of each module (comments left aside) and fails on a
//! module that reaches one above it.

use std::collections::BTreeSet;
use std::path::Path;

/// Each module of src/ (its file, or its directory's files for a module
/// with submodules) and the modules of this crate it may use.
const LAYERS: &[(&str, &[&str])] = &[
    ("cli", &[]),
    ("pipeline", &["cli"]),
    ("batch", &["cli", "pipeline"]),
    ("diff", &["cli", "pipeline", "batch"]),
    ("app", &["cli", "pipeline", "batch", "diff"]),
];

/// The modules named by `crate::NAME` in the code (not the comments) of `text`.
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            // `crate::{a::{x, y}, b}`: each top-level name in the braces
            if name.is_empty() && after.starts_with('{') {
                let (mut depth, mut item) = (0, String::new());
                for c in after[1..].chars() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            used.extend(top_name(&item));
                            item.clear();
                        }
                        _ if depth == 0 => item.push(c),
                        _ => {}
                    }
                }
                used.extend(top_name(&item));
            } else if !name.is_empty() {
                used.insert(name);
            }
            rest = after;
        }
    }
    used
}

/// The first segment of a path in a `use` list (`pipeline::` → `pipeline`).
fn top_name(item: &str) -> Option<String> {
    let n = item.trim().split("::").next().unwrap_or("").trim();
    (!n.is_empty()).then(|| n.to_string())
}

/// The source files of module `m`: src/m.rs and everything under src/m/.
fn module_files(src: &Path, m: &str) -> Vec<std::path::PathBuf> {
    let mut files = vec![src.join(format!("{m}.rs"))];
    let dir = src.join(m);
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files
}

#[test]
fn crate_paths_reads_use_lines() {
    let text = "use crate::cli::{A, B};\nuse crate::{pipeline::{self, Error}, batch};\n// crate::app in a comment\nlet x = crate::diff::f(); // crate::app\n";
    let got: Vec<String> = crate_paths(text).into_iter().collect();
    assert_eq!(got, ["batch", "cli", "diff", "pipeline"]);
}

#[test]
fn front_end_modules_depend_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // every module of the crate has a layer (a new one must be placed)
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs");
    let declared: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';').to_string())
        .collect();
    let placed: BTreeSet<String> = LAYERS.iter().map(|(m, _)| m.to_string()).collect();
    assert_eq!(
        declared, placed,
        "modules of src/lib.rs vs the layers of this test"
    );
    let mut bad = Vec::new();
    for (m, allowed) in LAYERS {
        for file in module_files(&src, m) {
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            for used in crate_paths(&text) {
                if used != *m && !allowed.contains(&used.as_str()) {
                    bad.push(format!(
                        "{} uses crate::{used} (a module above `{m}`, or not in the layers)",
                        file.display()
                    ));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "import against the layers:\n{}",
        bad.join("\n")
    );
    // the binary runs the front end through `app` only
    let main = std::fs::read_to_string(src.join("main.rs")).expect("src/main.rs");
    for m in ["batch", "diff", "pipeline"] {
        assert!(
            !main.contains(&format!("metal_profiler::{m}")),
            "main.rs reaches {m} past app"
        );
    }
}
