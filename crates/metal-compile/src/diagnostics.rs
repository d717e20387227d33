//! Clang-style diagnostics as printed by `metal`:
//!
//! ```text
//! kernel.metal:3:5: error: use of undeclared identifier 'x'
//!     x = 1;
//!     ^
//! 1 error generated.
//! ```
//!
//! The parsed form is for counting and for callers that want structure; users are always shown
//! the compiler's output verbatim.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    Fatal,
    Error,
    Warning,
    Note,
    Remark,
}

impl Severity {
    fn as_str(self) -> &'static str {
        match self {
            Severity::Fatal => "fatal error",
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Remark => "remark",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One diagnostic. `file`/`line`/`column` are absent for messages without a location
/// (`metal: error: no input files`); then `file` may hold the program name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub severity: Severity,
    pub message: String,
    /// The lines that followed it (source excerpt, caret, fix-it hints), verbatim.
    pub context: Vec<String>,
}

/// `: severity: ` after a location; without its leading `: ` the same
/// marker opens a message that has no location.
const MARKERS: [(&str, Severity); 5] = [
    (": fatal error: ", Severity::Fatal),
    (": error: ", Severity::Error),
    (": warning: ", Severity::Warning),
    (": note: ", Severity::Note),
    (": remark: ", Severity::Remark),
];

/// Parse compiler output into diagnostics. Lines that are not diagnostic headers are attached
/// to the preceding diagnostic as context; `N errors generated.` summaries and
/// `In file included from …` preambles are skipped.
pub fn parse_diagnostics(output: &str) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    for raw in output.lines() {
        let line = raw.trim_end_matches('\r');
        if is_summary(line) || line.starts_with("In file included from ") {
            continue;
        }
        if let Some(d) = parse_header(line) {
            out.push(d);
        } else if let Some(last) = out.last_mut() {
            if !line.trim().is_empty() {
                last.context.push(line.to_string());
            }
        }
    }
    out
}

fn is_summary(line: &str) -> bool {
    let l = line.trim();
    l.ends_with(" generated.")
        && l.split_whitespace()
            .next()
            .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
        && (l.contains(" error") || l.contains(" warning"))
}

fn parse_header(line: &str) -> Option<Diagnostic> {
    // `severity: message` with no location at all.
    for (marker, severity) in MARKERS {
        if let Some(message) = line.strip_prefix(&marker[": ".len()..]) {
            return Some(Diagnostic {
                file: None,
                line: None,
                column: None,
                severity,
                message: message.to_string(),
                context: Vec::new(),
            });
        }
    }
    // `location: severity: message`; take the earliest marker so messages that themselves
    // contain ": error: " stay intact.
    let (at, marker, severity) = MARKERS
        .iter()
        .filter_map(|(m, s)| line.find(m).map(|i| (i, *m, *s)))
        .min_by_key(|(i, _, _)| *i)?;
    let location = &line[..at];
    let message = &line[at + marker.len()..];
    if location.is_empty() || location.starts_with(char::is_whitespace) {
        return None;
    }
    let (file, line_no, column) = split_location(location);
    Some(Diagnostic {
        file: Some(file.to_string()),
        line: line_no,
        column,
        severity,
        message: message.to_string(),
        context: Vec::new(),
    })
}

/// `path:line:col`, `path:line` or just `path` (paths may contain ':').
fn split_location(loc: &str) -> (&str, Option<u32>, Option<u32>) {
    let num = |s: &str| -> Option<u32> {
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            s.parse().ok()
        } else {
            None
        }
    };
    if let Some((rest, last)) = loc.rsplit_once(':') {
        if let Some(last_n) = num(last) {
            if let Some((file, mid)) = rest.rsplit_once(':') {
                if let Some(mid_n) = num(mid) {
                    return (file, Some(mid_n), Some(last_n));
                }
            }
            return (rest, Some(last_n), None);
        }
    }
    (loc, None, None)
}

impl fmt::Display for Diagnostic {
    /// The clang form: `file:line:col: severity: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}:")?;
            if let Some(line) = self.line {
                write!(f, "{line}:")?;
                if let Some(col) = self.column {
                    write!(f, "{col}:")?;
                }
            }
            f.write_str(" ")?;
        }
        write!(f, "{}: {}", self.severity, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_forms() {
        assert_eq!(split_location("a.metal:3:5"), ("a.metal", Some(3), Some(5)));
        assert_eq!(split_location("a.metal:12"), ("a.metal", Some(12), None));
        assert_eq!(split_location("metal"), ("metal", None, None));
        assert_eq!(
            split_location("/tmp/x:y/k.metal:7:1"),
            ("/tmp/x:y/k.metal", Some(7), Some(1))
        );
    }

    #[test]
    fn summary_lines() {
        assert!(is_summary("1 error generated."));
        assert!(is_summary("2 warnings and 3 errors generated."));
        assert!(!is_summary("an error generated."));
    }
}
