use metal_compile::{parse_diagnostics, Diagnostic, Severity};

const OUTPUT: &str = "\
In file included from /src/k.metal:2:
/src/common.h:4:9: warning: unused variable 'z' [-Wunused-variable]
    int z = 0;
        ^
/src/k.metal:10:5: error: use of undeclared identifier 'x'
    x = a[gid];
    ^
/src/k.metal:12:18: error: no matching function for call to 'foo'
    float y = foo(1);
              ^~~
/src/k.metal:3:7: note: candidate function not viable: requires 2 arguments, but 1 was provided
float foo(float a, float b);
      ^
1 warning and 2 errors generated.
";

#[test]
fn parses_locations_severities_and_context() {
    let d = parse_diagnostics(OUTPUT);
    assert_eq!(d.len(), 4);
    assert_eq!(
        d[0],
        Diagnostic {
            file: Some("/src/common.h".into()),
            line: Some(4),
            column: Some(9),
            severity: Severity::Warning,
            message: "unused variable 'z' [-Wunused-variable]".into(),
            context: vec!["    int z = 0;".into(), "        ^".into()],
        }
    );
    assert_eq!(d[1].severity, Severity::Error);
    assert_eq!(d[1].file.as_deref(), Some("/src/k.metal"));
    assert_eq!((d[1].line, d[1].column), (Some(10), Some(5)));
    assert_eq!(d[1].message, "use of undeclared identifier 'x'");
    assert_eq!(d[2].context, ["    float y = foo(1);", "              ^~~"]);
    assert_eq!(d[3].severity, Severity::Note);
    assert_eq!(
        d[3].context.len(),
        2,
        "the summary line is not context: {:?}",
        d[3].context
    );
}

#[test]
fn display_round_trips_the_header_line() {
    let d = parse_diagnostics("/src/k.metal:10:5: error: use of undeclared identifier 'x'\n");
    assert_eq!(
        d[0].to_string(),
        "/src/k.metal:10:5: error: use of undeclared identifier 'x'"
    );
}

#[test]
fn fatal_errors_and_locationless_messages() {
    let out = "\
k.metal:1:10: fatal error: 'missing.h' file not found
#include \"missing.h\"
         ^~~~~~~~~~~
metal: error: no such file or directory: 'nope.metal'
error: cannot specify -o when generating multiple output files
";
    let d = parse_diagnostics(out);
    assert_eq!(d.len(), 3);
    assert_eq!(d[0].severity, Severity::Fatal);
    assert_eq!(d[0].message, "'missing.h' file not found");
    assert_eq!(d[0].context.len(), 2);
    assert_eq!(d[1].file.as_deref(), Some("metal"));
    assert_eq!((d[1].line, d[1].column), (None, None));
    assert_eq!(d[1].severity, Severity::Error);
    assert_eq!(d[2].file, None);
    assert_eq!(
        d[2].message,
        "cannot specify -o when generating multiple output files"
    );
}

#[test]
fn line_without_column_and_message_containing_marker() {
    let d = parse_diagnostics("k.metal:7: error: expected ';': error: nested\n");
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].line, d[0].column), (Some(7), None));
    assert_eq!(d[0].message, "expected ';': error: nested");
}

#[test]
fn xcrun_and_crlf_output() {
    let d = parse_diagnostics(
        "xcrun: error: unable to find utility \"metal\", not a developer tool or in PATH\r\n",
    );
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].file.as_deref(), Some("xcrun"));
    assert!(d[0].message.ends_with("in PATH"));
}

#[test]
fn nothing_to_parse() {
    assert!(parse_diagnostics("").is_empty());
    assert!(parse_diagnostics("some banner\n  ^\n").is_empty());
}
