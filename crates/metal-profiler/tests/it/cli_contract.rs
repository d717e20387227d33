//! The command line's contract (issue #13): the positional input must be a
//! Metal binary archive (anything else exits 1 with one line saying what it
//! is), a flag that cannot apply is a usage error (exit 2) naming the
//! conflict, `--list`/`--explain-model` have JSON forms, and every example
//! line of `--help` and README.md runs.

use crate::common;
use common::*;
use std::path::Path;
use std::process::Output;

/// Asserts exit 1 and exactly one stderr line containing every `want`.
fn refused(o: &Output, wants: &[&str]) {
    let e = err(o);
    assert_eq!(o.status.code(), Some(1), "stderr: {e}");
    assert!(o.stdout.is_empty(), "no report for bad input: {}", out(o));
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    for w in wants {
        assert!(e.contains(w), "missing {w:?} in: {e}");
    }
}

const HINT: &str = "for raw machine code use --binary FILE";

fn bad_inputs() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let archive = std::fs::read(repo().join("examples/kernels.archive")).unwrap();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0".to_vec();
    let random: Vec<u8> = (0..256u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let readme = std::fs::read(repo().join("README.md")).unwrap();
    vec![
        ("picture.png", png, "a PNG image"),
        ("random.bin", random, "unknown magic 0x"),
        ("README.md", readme, "text starting \"# metal-profiler\""),
        ("empty.archive", Vec::new(), "the input is empty"),
        (
            "cut1.archive",
            archive[..1].to_vec(),
            "only 1 byte, too short",
        ),
        (
            "cut2.archive",
            archive[..2].to_vec(),
            "only 2 bytes, too short",
        ),
        (
            "cut3.archive",
            archive[..3].to_vec(),
            "only 3 bytes, too short",
        ),
        // held out from the issue's list
        (
            "photo.jpg",
            b"\xff\xd8\xff\xe0\0\x10JFIF\0".to_vec(),
            "a JPEG image",
        ),
        (
            "code.gz",
            b"\x1f\x8b\x08\0\0\0\0\0".to_vec(),
            "gzip-compressed data",
        ),
        (
            "a.out",
            b"\x7fELF\x02\x01\x01\0".to_vec(),
            "an ELF executable",
        ),
        (
            "kernel.air",
            b"BC\xc0\xde\x35\x14\0\0".to_vec(),
            "LLVM bitcode",
        ),
        (
            "lib.metallib",
            b"MTLB\x01\x80\x02\0\0\0\0\0\0\0\0\0".to_vec(),
            "AIR bitcode only",
        ),
        (
            "loop.s",
            b"   0: 8800   stop\n".to_vec(),
            "a disassembly listing? assemble it with `metal-profile asm`",
        ),
        (
            "k.src",
            b"#include <metal_stdlib>\nkernel void k() {}\n".to_vec(),
            "name it .metal",
        ),
    ]
}

#[test]
fn bad_positional_inputs_are_refused_naming_what_they_are() {
    let t = tmp("bad");
    for (name, bytes, what) in bad_inputs() {
        let p = t.0.join(name);
        std::fs::write(&p, &bytes).unwrap();
        let o = run(&[p.to_str().unwrap()]);
        refused(&o, &[name, "is not a Metal binary archive", what, HINT]);
        // -f must not give garbage a report either
        let o = run(&[p.to_str().unwrap(), "-f", "matmul_naive"]);
        refused(&o, &[what, HINT]);
        // the same bytes on stdin
        let o = run_in(&repo(), &["-"], Some(&bytes));
        refused(&o, &["<stdin> is not a Metal binary archive", what, HINT]);
    }
}

#[test]
fn raw_code_and_real_kernels_are_refused_positionally_and_accepted_with_binary() {
    // every real kernel of the repo's testdata: raw code, so not an archive
    let mut n = 0;
    for dir in ["testdata/archives/real", "testdata/mesa/cf_mandelbrot"] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "bin") {
                let o = run(&[p.to_str().unwrap()]);
                refused(
                    &o,
                    &["is not a Metal binary archive: unknown magic 0x", HINT],
                );
                let o = run(&["--binary", p.to_str().unwrap(), "--disasm-only"]);
                assert_eq!(o.status.code(), Some(0), "{}", err(&o));
                n += 1;
            }
        }
    }
    assert!(n >= 6, "only {n} kernels checked");
    let o = run(&["examples/matmul_naive.bin", "-f", "matmul_naive"]);
    refused(
        &o,
        &[
            "examples/matmul_naive.bin is not a Metal binary archive",
            HINT,
        ],
    );
    let bytes = std::fs::read(repo().join("examples/matmul_naive.bin")).unwrap();
    let o = run_in(
        &repo(),
        &["--binary", "-", "-f", "matmul_naive"],
        Some(&bytes),
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains("matmul_naive"));
    // an archive on stdin works
    let arch = std::fs::read(repo().join("examples/kernels.archive")).unwrap();
    let o = run_in(&repo(), &["-", "--list"], Some(&arch));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains("mandelbrot_agc.main"));
}

#[test]
fn flag_conflicts_are_usage_errors_naming_the_conflict() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &[
                "--binary",
                "examples/matmul_naive.bin",
                "--disasm-only",
                "--format",
                "json",
            ],
            &["--disasm-only", "no JSON form"],
        ),
        (
            &[
                "examples/kernels.archive",
                "-f",
                "mandelbrot",
                "--disasm-only",
                "--format",
                "json",
            ],
            &["--disasm-only", "no JSON form"],
        ),
        (
            &[
                "--binary",
                "examples/matmul_naive.bin",
                "--show-disasm",
                "--format",
                "json",
            ],
            &["--show-disasm", "--format json"],
        ),
        (
            &[
                "--binary",
                "examples/matmul_naive.bin",
                "--show-disasm",
                "--disasm-only",
            ],
            &["--disasm-only", "--show-disasm"],
        ),
        (
            &["--binary", "examples/matmul_naive.bin", "--all"],
            &["--all", "--binary"],
        ),
        (
            &["examples/kernels.archive", "--all", "-f", "mandelbrot"],
            &["--all", "-f"],
        ),
        (
            &["examples/kernels.archive", "--all", "--part", "prolog"],
            &["--all", "--part"],
        ),
        (
            &["examples/kernels.archive", "--explain-model"],
            &["--explain-model", "reads no input"],
        ),
        (
            &["--binary", "examples/matmul_naive.bin", "--explain-model"],
            &["--explain-model", "reads no input"],
        ),
        (
            &["--explain-model", "--list"],
            &["--explain-model", "--list"],
        ),
        (
            &["--explain-model", "--l1-hit-rate", "0.9"],
            &["--explain-model", "--l1-hit-rate"],
        ),
        (
            &["examples/kernels.archive", "--list", "-f", "mandelbrot"],
            &["--list", "-f"],
        ),
        (
            &["examples/kernels.archive", "--list", "--disasm-only"],
            &["--list", "--disasm-only"],
        ),
        (
            &["--binary", "examples/matmul_naive.bin", "--list"],
            &["--list", "--binary"],
        ),
        (
            &["--binary", "examples/matmul_naive.bin", "--part", "all"],
            &["--part", "--binary"],
        ),
        (
            &[
                "examples/kernels.archive",
                "-f",
                "mandelbrot",
                "--offset",
                "8",
            ],
            &["--offset/--base", "--binary"],
        ),
        (
            &[
                "examples/kernels.archive",
                "-f",
                "mandelbrot",
                "--base",
                "0x100",
            ],
            &["--offset/--base", "--binary"],
        ),
        (
            &[
                "--binary",
                "examples/matmul_naive.bin",
                "--disasm-only",
                "--l1-hit-latency",
                "50",
            ],
            &["--l1-hit-latency", "--disasm-only"],
        ),
        (
            &["examples/kernels.archive", "-f", "mandelbrot", "-D", "N=4"],
            &["-D", "not compiled"],
        ),
        (
            &[
                "--binary",
                "examples/matmul_naive.bin",
                "--keep-archive",
                "x.archive",
            ],
            &["--keep-archive", "not compiled"],
        ),
    ];
    for (args, wants) in cases {
        let o = run(args);
        let e = err(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        for w in *wants {
            assert!(e.contains(w), "{args:?}: missing {w:?} in {e}");
        }
    }
}

/// Validates a CLI JSON document against docs/schema.json.
pub(crate) fn validate(doc: &serde_json::Value) {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("docs/schema.json")).unwrap())
            .unwrap();
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn list_and_explain_model_have_json_documents() {
    let o = run(&["examples/kernels.archive", "--list", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).expect("--list JSON");
    assert_eq!(v["schema"], "metal-profiler/1");
    validate(&v);
    assert_eq!(names(&v["functions"]), ["matmul_naive", "mandelbrot"]);
    assert_eq!(v["functions"][1]["part"], "main");
    assert_eq!(v["functions"][1]["gpu"], "G13G");

    let o = run(&["examples/texread.archive", "--list", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["functions"][0]["part"], "prolog");

    let o = run(&["--explain-model", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).expect("--explain-model JSON");
    assert_eq!(v["schema"], "metal-profiler/1");
    validate(&v);
    // a profile document still validates, and a list document is not a profile
    let o = run(&[
        "examples/kernels.archive",
        "-f",
        "mandelbrot",
        "--format",
        "json",
    ]);
    validate(&serde_json::from_str(&out(&o)).unwrap());
    let entries = v["model"]["entries"].as_array().unwrap();
    // the same rows as the text form, each with a source
    let text = out(&run(&["--explain-model"]));
    assert!(entries.len() > 20);
    for e in entries {
        let key = e["key"].as_str().unwrap();
        assert!(text.contains(key), "{key} missing from the text form");
        assert!(!e["source"].as_str().unwrap().is_empty());
    }
    assert!(entries.iter().any(|e| e["assumption"] == true));
    assert_eq!(v["model"]["memory_parameters"][0]["name"], "l1_hit_latency");
}

/// Splits an example line into arguments (no quoting is used in examples).
fn example_args(line: &str) -> Option<Vec<String>> {
    let line = line.split(" #").next().unwrap().trim();
    let line = line.trim_end_matches("(macOS)").trim();
    let rest = if let Some(r) = line.strip_prefix("metal-profile ") {
        r
    } else if line.starts_with("cargo run") {
        line.split_once(" -- ")?.1
    } else {
        return None;
    };
    Some(rest.split_whitespace().map(str::to_string).collect())
}

fn check_examples(source: &str, lines: Vec<String>) -> usize {
    let t = tmp(source);
    // run where `examples/` resolves but outputs (asm -o) land in a temp dir
    #[cfg(unix)]
    std::os::unix::fs::symlink(repo().join("examples"), t.0.join("examples")).unwrap();
    let mut n = 0;
    for line in lines {
        let Some(args) = example_args(&line) else {
            continue;
        };
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run_in(&t.0, &argv, None);
        let mac_only = argv.iter().any(|a| a.ends_with(".metal") || *a == "export");
        if mac_only && !cfg!(target_os = "macos") {
            assert_eq!(o.status.code(), Some(1), "{source}: {line}: {}", err(&o));
            assert!(err(&o).contains("macOS"), "{source}: {line}: {}", err(&o));
        } else {
            assert_eq!(o.status.code(), Some(0), "{source}: {line}: {}", err(&o));
            assert!(!o.stdout.is_empty() || !o.stderr.is_empty(), "{line}");
        }
        n += 1;
    }
    n
}

#[test]
fn every_help_example_runs() {
    let o = run(&["--help"]);
    let help = out(&o);
    let lines: Vec<String> = help
        .split_once("Examples")
        .expect("--help has examples")
        .1
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect();
    let n = check_examples("help", lines);
    assert!(n >= 6, "only {n} --help examples");
}

#[test]
fn every_readme_example_runs() {
    let mut lines = Vec::new();
    for file in ["README.md", "examples/README.md"] {
        let readme = std::fs::read_to_string(repo().join(file)).unwrap();
        let mut in_sh = false;
        for l in readme.lines() {
            if l.starts_with("```") {
                in_sh = l == "```sh";
                continue;
            }
            if in_sh {
                lines.push(l.to_string());
            }
        }
    }
    let before = git_status();
    let n = check_examples("readme", lines);
    assert!(n >= 14, "only {n} README examples");
    // nothing left in the repository by the README's lines (issue 29)
    assert_eq!(git_status(), before, "README lines changed the repository");
}

/// `git status --porcelain` of the repository, or `None` outside a git
/// checkout (a source tarball).
fn git_status() -> Option<String> {
    let o = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(repo())
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn asm_round_trip_keeps_stack_adjusts_in_native_syntax_and_warns_in_applegpu_syntax() {
    let t = tmp("asm");
    let listing = |syntax: &str| {
        let o = run(&[
            "examples/simple_call.archive",
            "-f",
            "simple_call",
            "--part",
            "all",
            "--disasm-only",
            "--syntax",
            syntax,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        out(&o)
    };
    let spills = |bin: &Path| {
        let o = run(&["--binary", bin.to_str().unwrap(), "--format", "json"]);
        let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
        v["kernels"][0]["spills"].as_u64().unwrap()
    };
    let insn_lines = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.starts_with(';') && !l.trim().is_empty())
            .map(str::to_string)
            .collect()
    };
    // native: the three stack adjusts print as themselves and come back
    let native = listing("native");
    assert_eq!(native.matches("stack_adjust").count(), 3, "{native}");
    let src = t.0.join("native.s");
    std::fs::write(&src, &native).unwrap();
    let bin = t.0.join("native.bin");
    let o = run(&[
        "asm",
        src.to_str().unwrap(),
        "--syntax",
        "native",
        "-o",
        bin.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(!err(&o).contains("warning"), "{}", err(&o));
    let o = run(&[
        "--binary",
        bin.to_str().unwrap(),
        "--disasm-only",
        "--syntax",
        "native",
    ]);
    assert_eq!(insn_lines(&out(&o)), insn_lines(&native), "native fixpoint");
    let native_spills = spills(&bin);

    // applegpu syntax: assembled as stack_store (a spill), with a warning per
    // ambiguous line naming what was chosen
    let applegpu = listing("default");
    let src = t.0.join("applegpu.s");
    std::fs::write(&src, &applegpu).unwrap();
    let bin2 = t.0.join("applegpu.bin");
    let o = run(&["asm", src.to_str().unwrap(), "-o", bin2.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let e = err(&o);
    let adjust_lines: Vec<usize> = applegpu
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("stack_store      i8, 1, 2, 0,"))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(adjust_lines.len(), 3);
    for n in adjust_lines {
        assert!(
            e.contains(&format!("warning: line {n}: `stack_store i8, 1, 2, 0,"))
                && e.contains("stack_adjust 0, 1, 2, 0, 0,")
                && e.contains("assembled as stack_store"),
            "line {n}: {e}"
        );
    }
    assert!(
        spills(&bin2) > native_spills,
        "applegpu text turns adjusts into spills: {} vs {native_spills}",
        spills(&bin2)
    );
}

#[test]
fn json_gives_native_text_where_it_differs() {
    let o = run(&[
        "examples/simple_call.archive",
        "-f",
        "simple_call",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    validate(&v);
    let detail = v["kernels"][0]["instructions_detail"].as_array().unwrap();
    let native: Vec<(&str, &str)> = detail
        .iter()
        .filter_map(|d| Some((d["text"].as_str()?, d.get("native")?.as_str()?)))
        .collect();
    // main's stack adjust at 0x18e: applegpu's text and the native one
    assert_eq!(
        native,
        [(
            "stack_store      i8, 1, 2, 0, 8, 0",
            "stack_adjust     0, 1, 2, 0, 0, 8"
        )]
    );
}

/// The README's `--syntax cryptic` example shows a kernel where cryptic
/// text differs from the default (issue 21 item 7).
#[test]
fn readme_cryptic_example_differs_from_the_default() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("metal-profile ") && l.contains("--syntax cryptic"))
        .expect("a --syntax cryptic example");
    let args = example_args(line).unwrap();
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let cryptic = run(&argv);
    assert_eq!(cryptic.status.code(), Some(0), "{}", err(&cryptic));
    let plain: Vec<&str> = argv
        .iter()
        .copied()
        .filter(|a| *a != "--syntax" && *a != "cryptic")
        .collect();
    let default = run(&plain);
    assert_eq!(default.status.code(), Some(0), "{}", err(&default));
    assert_ne!(
        out(&cryptic),
        out(&default),
        "{line}: same text as the default"
    );
}

/// Every `--help` (the main command's and each subcommand's, long and
/// short) speaks to users: none of the project's history words (issue 37).
#[test]
fn help_has_no_project_history_words() {
    let main = out(&run(&["--help"]));
    let commands: Vec<String> = main
        .split_once("Commands:")
        .expect("--help lists its subcommands")
        .1
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.iter().any(|c| c == "batch"), "{commands:?}");
    assert!(commands.iter().any(|c| c == "diff"), "{commands:?}");
    let mut helps = vec![
        ("--help".to_string(), main),
        ("-h".into(), out(&run(&["-h"]))),
    ];
    for c in &commands {
        for flag in ["--help", "-h"] {
            let o = run(&[c.as_str(), flag]);
            assert_eq!(o.status.code(), Some(0), "{c} {flag}: {}", err(&o));
            helps.push((format!("{c} {flag}"), out(&o)));
        }
    }
    for (what, text) in &helps {
        let lower = text.to_lowercase();
        for word in ["seed", "issue", "session", "legacy", "todo", "for now"] {
            assert!(!lower.contains(word), "`{what}` says {word:?}:\n{text}");
        }
    }
}

/// The output a README quotes is what the tool prints (issue 37): a
/// ```` ```text output ```` block after a ```` ```sh ```` block (prose
/// between, no other block) quotes the output of that block's last
/// command; each quoted line (runs of
/// spaces collapsed; `…` alone elides lines) must be part of one line the
/// command prints (stdout, then stderr), in the quoted order. The test
/// reads the READMEs: updating a README is all a changed output needs.
#[test]
fn readme_quoted_output_is_what_the_tool_prints() {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut quotes = 0;
    for file in ["README.md", "examples/README.md"] {
        let text = std::fs::read_to_string(repo().join(file)).unwrap();
        let mut lines = text.lines();
        // the last command of the latest ```sh block, until another block
        let mut last_cmd: Option<String> = None;
        while let Some(l) = lines.next() {
            if l == "```sh" {
                let block: Vec<&str> = lines
                    .by_ref()
                    .take_while(|l| !l.starts_with("```"))
                    .collect();
                last_cmd = block
                    .iter()
                    .rev()
                    .find(|l| example_args(l).is_some())
                    .map(|l| l.to_string());
                continue;
            }
            if l == "```text output" {
                let quoted: Vec<&str> = lines
                    .by_ref()
                    .take_while(|l| !l.starts_with("```"))
                    .collect();
                let cmd = last_cmd.take().unwrap_or_else(|| {
                    panic!("{file}: a quoted output with no command just before it")
                });
                let args = example_args(&cmd).unwrap();
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                let o = run(&argv);
                assert!(
                    matches!(o.status.code(), Some(0) | Some(3)),
                    "{file}: {cmd}: {}",
                    err(&o)
                );
                let printed = format!("{}{}", out(&o), err(&o));
                let printed: Vec<String> = printed.lines().map(squash).collect();
                let mut at = 0;
                for q in quoted
                    .iter()
                    .map(|q| squash(q))
                    .filter(|q| !q.is_empty() && q != "…")
                {
                    match printed[at..].iter().position(|p| p.contains(&q)) {
                        // (two quoted parts of one long line may match it)
                        Some(k) => at += k,
                        None => panic!(
                            "{file}: `{cmd}` does not print (in this order) the quoted line\n  {q}\nit prints:\n{}",
                            printed.join("\n")
                        ),
                    }
                }
                quotes += 1;
                continue;
            }
            if l.starts_with("```") {
                // another kind of block: quotes after it quote nothing
                lines
                    .by_ref()
                    .take_while(|l| !l.starts_with("```"))
                    .for_each(drop);
                last_cmd = None;
            }
        }
    }
    assert!(quotes >= 4, "only {quotes} quoted outputs in the READMEs");
}
