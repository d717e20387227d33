//! One name per thing (issue 37 item 2): no internal placeholder (`TODO`)
//! in any view of the examples, one display name per function in every
//! view (the record's `functions[].display_name`, never the mangled
//! symbol), and one address format (`0x…`) in the annotated listings.

use crate::cli_contract::validate;
use crate::common::*;
use serde_json::Value;

/// Every kernel view of the examples: (what, arguments).
fn example_runs() -> Vec<(String, Vec<&'static str>)> {
    let inputs: [&[&str]; 4] = [
        &["examples/kernels.archive", "--all"],
        &[
            "examples/simple_call.archive",
            "-f",
            "simple_call",
            "--part",
            "all",
        ],
        &["examples/texread.archive", "-f", "texread", "--part", "all"],
        &["--binary", "examples/matmul_naive.bin"],
    ];
    let mut runs = Vec::new();
    for input in inputs {
        for view in [
            &["--format", "text"][..],
            &["--format", "html"],
            &["--format", "dot"],
            &["--format", "json"],
            &["--show-disasm"],
            &["--disasm-only", "--syntax", "native"],
        ] {
            if view[0] == "--format" && view[1] == "dot" && input.contains(&"--all") {
                continue;
            }
            let args: Vec<&str> = input.iter().chain(view).copied().collect();
            runs.push((args.join(" "), args));
        }
    }
    runs
}

#[test]
fn no_placeholder_reaches_any_view_of_the_examples() {
    for (what, args) in example_runs() {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{what}: {}", err(&o));
        let text = out(&o);
        assert!(!text.is_empty(), "{what}");
        assert!(!text.contains("TODO"), "{what} prints TODO:\n{text}");
    }
}

#[test]
fn one_display_name_per_function_in_every_view() {
    let args = ["examples/simple_call.archive", "-f", "simple_call"];
    let doc: Value =
        serde_json::from_str(&ok_out(&[&args[..], &["--format", "json"]].concat())).unwrap();
    validate(&doc);
    let k = &doc["kernels"][0];
    let helper = k["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["main"] == false)
        .expect("the helper");
    let symbol = helper["symbol"].as_str().unwrap();
    // demangled: the Metal source's name
    assert_eq!(symbol, "l__Z6helperPU9MTLdeviceKjj");
    let name = helper["display_name"].as_str().unwrap();
    assert_eq!(name, "helper");
    assert_eq!(k["functions"][0]["display_name"], "simple_call");
    assert_eq!(k["calls"][0]["display_name"], name);
    for view in [
        &["--format", "text"][..],
        &["--format", "html"],
        &["--format", "dot"],
        &["--part", "all"],
        &["--part", "all", "--format", "html"],
    ] {
        let text = ok_out(&[&args[..], view].concat());
        let what = view.join(" ");
        assert!(
            !text.contains(symbol),
            "{what}: the mangled symbol is shown"
        );
        assert!(
            !text.contains("function at 0x"),
            "{what}: an address for a name"
        );
        assert!(text.contains(name), "{what}: {name} missing");
    }
    // the helper profiled as its own part names itself, not its address
    let all = ok_out(&[&args[..], &["--part", "all"]].concat());
    assert!(
        all.contains("metal-profiler: helper (called function)"),
        "{all}"
    );
    assert!(all.contains("call at 0x96 to helper"), "{all}");
    let page = ok_out(&[&args[..], &["--part", "all", "--format", "html"]].concat());
    assert!(
        page.contains("<title>metal-profiler: 1 kernel, 1 called function</title>"),
        "the page title counts kernels and helpers apart"
    );
}

#[test]
fn listings_print_addresses_as_0x() {
    let args = [
        "examples/simple_call.archive",
        "-f",
        "simple_call",
        "--part",
        "all",
    ];
    let text = ok_out(&args);
    let mut rows = 0;
    for l in text
        .lines()
        .filter(|l| l.contains("cy/op] ") && !l.contains("[UNIT"))
    {
        let addr = l.trim_start_matches([' ', '│']).split(':').next().unwrap();
        assert!(addr.starts_with("0x"), "{l}");
        rows += 1;
    }
    // the helper's listing in its own part, then main's and the helper's again
    assert!(rows > 100, "{rows} listing rows");
    let page = ok_out(&[&args[..], &["--format", "html"]].concat());
    let cells: Vec<&str> = page
        .split("<td class=\"addr\">")
        .skip(1)
        .map(|c| c.split("</td>").next().unwrap().trim())
        .collect();
    assert!(cells.len() > 50);
    assert!(cells.iter().all(|c| c.starts_with("0x")), "{cells:?}");
}
