//! Graphviz for the DOT tests of every crate (one copy, included by each
//! test binary as `mod graphviz;` next to `mod shared_data;`): whether `dot`
//! is installed, and `dot -T<format>` of a DOT text.
#![allow(dead_code)]

use std::process::{Command, Stdio};

/// Whether Graphviz's `dot` runs here; when not, records the skip
/// ([`crate::shared_data::skip`]: a failure under `CI=true`).
pub fn have_dot() -> bool {
    let ok = Command::new("dot")
        .arg("-V")
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        crate::shared_data::skip("Graphviz `dot` is not installed (apt-get install graphviz)");
    }
    ok
}

/// `dot -T<format>` of `text`: its standard output; dot must succeed
/// and say nothing on its standard error.
pub fn graphviz(format: &str, text: &str) -> Vec<u8> {
    use std::io::Write;
    let mut child = Command::new("dot")
        .arg(format!("-T{format}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run dot");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && err.trim().is_empty(),
        "dot said {err}\n{text}"
    );
    o.stdout
}
