//! The GPU seam (issue #20 item 3): one GPU model and one chip, chosen by
//! the front end from the slice's GPU and `--chip`, named by every view.

use crate::common;
use common::*;

fn views(extra: &[&str]) -> (String, String, serde_json::Value) {
    let base = [
        "examples/kernels.archive",
        "-f",
        "matmul_naive",
        "--color",
        "never",
    ];
    let with = |fmt: &str| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        a.extend_from_slice(&["--format", fmt]);
        ok_out(&a)
    };
    let json = serde_json::from_str(&with("json")).unwrap();
    (with("text"), with("html"), json)
}

#[test]
fn the_chip_given_is_named_in_text_html_and_json() {
    let (text, html, json) = views(&["--chip", "M1-Max"]);
    let header = text.lines().nth(3).unwrap();
    assert!(
        header.contains("timing model G13 (Apple M1 family) · chip M1 Max"),
        "{header}"
    );
    assert!(
        html.contains("<tr><td>Chip</td><td>M1 Max</td></tr>"),
        "html"
    );
    assert!(html.contains("<tr><td>Timing model</td><td>G13 (Apple M1 family)</td></tr>"));
    let m = &json["kernels"][0]["model"];
    assert_eq!(m["chip"], "M1 Max");
    assert_eq!(m["gpu"], "G13 (Apple M1 family)");
    // the chip's memory parameters are the ones used: M1 Max DRAM 400 GB/s
    // over 32 cores at 1.296 GHz
    let dram = m["mem"]["dram_bytes_per_cycle_per_core"].as_f64().unwrap();
    assert!((dram - 400.0 / (32.0 * 1.296)).abs() < 1e-9, "{dram}");
}

#[test]
fn the_default_chip_is_named_too() {
    let (text, html, json) = views(&[]);
    let header = text.lines().nth(3).unwrap();
    assert!(header.contains("· chip M1 ·"), "{header}");
    assert!(html.contains("<tr><td>Chip</td><td>M1</td></tr>"));
    assert_eq!(json["kernels"][0]["model"]["chip"], "M1");
    let dram = json["kernels"][0]["model"]["mem"]["dram_bytes_per_cycle_per_core"]
        .as_f64()
        .unwrap();
    assert!((dram - 68.25 / (8.0 * 1.278)).abs() < 1e-9, "{dram}");
}

/// The timing note comes from the chosen model (`GpuModel::timing_note`):
/// none for code of a generation its table was measured on, a note for G14
/// code (the same instruction set, timed with the G13 table).
#[test]
fn the_timing_note_says_which_generation_the_table_was_measured_on() {
    let note = |gpu: &str| {
        json(&["--binary", "examples/matmul_naive.bin", "--gpu", gpu])["kernels"][0]["timing_note"]
            .clone()
    };
    assert_eq!(note("g13g"), serde_json::Value::Null);
    assert_eq!(
        note("g14s"),
        "timed with the G13 table measured on M1: this GPU runs the same instruction set, its own timings were not measured"
    );
}
