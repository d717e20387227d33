//! Writes the Metal binary archives the Python tests read
//! (`python/tests/data/*.archive`), built around real G13 machine code from
//! the repository's testdata with `agx_container::testutil`.
//!
//! Run from the repository root:
//! `cargo run -p metal-profiler-py --example make_test_archives`
//! (see `python/tests/data/NOTE.md` for what each archive holds).

use agx_container::testutil::*;
use agx_container::{Stage, CPU_TYPE_APPLEGPU};
use std::path::Path;

fn read(path: &str) -> Vec<u8> {
    std::fs::read(path)
        .unwrap_or_else(|e| panic!("cannot read {path}: {e}; run from the repo root"))
}

/// Writes to `path` a G13G compute archive of `funcs` (symbol, code) laid
/// out in `__text` at `align`-byte boundaries.
fn laid_out_archive(path: impl AsRef<Path>, funcs: &[(&str, &[u8])], align: usize) {
    let (text, syms) = layout_text(funcs, align);
    let archive = build_test_archive(G13G, Stage::Compute, &text, &sym_refs(&syms));
    let path = path.as_ref();
    std::fs::write(path, archive).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn main() {
    let out = Path::new("python/tests/data");
    std::fs::create_dir_all(out).expect("create python/tests/data");
    let real = "testdata/archives/real";

    // simple_call: helper at 0, main at 0x180 (marysaka's listing), AIR slice
    // naming the kernel, G13G code slice.
    let helper = read(&format!(
        "{real}/simple_call_compute_l__Z6helperPU9MTLdeviceKjj.bin"
    ));
    let main = read(&format!("{real}/simple_call_compute_shader.bin"));
    let (text, syms) = place_text(&[
        ("l__Z6helperPU9MTLdeviceKjj", 0, helper.as_slice()),
        ("_agc.main", 0x180, main.as_slice()),
    ]);
    let image = gpu_image_stages(
        G13G,
        &[(Stage::Compute, code_image(&text, Some(&sym_refs(&syms))))],
    );
    let simple_call = fat(
        &[
            air_slice(&["simple_call"]),
            (CPU_TYPE_APPLEGPU, G13G, image),
        ],
        false,
    );
    std::fs::write(out.join("simple_call.archive"), &simple_call).expect("write");

    // texread: prolog (constant program) at 0, main at 64.
    let prolog = read(&format!("{real}/texread_compute_shader_prolog.bin"));
    let tmain = read(&format!("{real}/texread_compute_shader.bin"));
    laid_out_archive(
        out.join("texread.archive"),
        &[
            ("_agc.main.constant_program", &prolog),
            ("_agc.main", &tmain),
        ],
        64,
    );

    // The shipped example with a prolog (`examples/texread.archive`): the same
    // code, symbols prefixed with the kernel name as Metal names them, so
    // `metal-profile examples/texread.archive -f texread --part prolog` works.
    laid_out_archive(
        "examples/texread.archive",
        &[
            ("_texread_agc.main.constant_program", &prolog),
            ("_texread_agc.main", &tmain),
        ],
        64,
    );

    // Two Mesa-compiled kernels in one archive, named by symbol prefix the
    // way Metal names them: matmul_naive (a loop with loads) and mandelbrot.
    let mm = read("testdata/mesa/matmul_naive_16x16/matmul_naive_16x16.bin");
    let mb = read("testdata/mesa/cf_mandelbrot/cf_mandelbrot.bin");
    laid_out_archive(
        out.join("kernels.archive"),
        &[("matmul_naive_agc.main", &mm), ("mandelbrot_agc.main", &mb)],
        256,
    );

    // A truncated archive (first half of simple_call) for error tests.
    std::fs::write(
        out.join("truncated.archive"),
        &simple_call[..simple_call.len() / 2],
    )
    .expect("write");

    // Apple9 (M3) code in a G15G slice: the prolog and main of
    // examples/apple9_loop.a9bin (main at 0x40), for `profile_archive(...,
    // gpu="g15g")` (the untimed profile; as cli_apple9.rs builds it).
    let a9 = read("examples/apple9_loop.a9bin");
    let apple9 = build_test_archive(
        G15G,
        Stage::Compute,
        &a9,
        &[("_agc.main.constant_program", 0), ("_agc.main", 0x40)],
    );
    std::fs::write(out.join("apple9.archive"), apple9).expect("write");
    println!("wrote {}", out.display());
}
