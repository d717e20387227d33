//! Test archives built around real G13 code (testdata/archives/real, see
//! its NOTE.md).
#![allow(dead_code)]

use agx_container::testutil::*;
use agx_container::{Stage, CPU_TYPE_APPLEGPU};

pub const HELPER: &[u8] = include_bytes!(
    "../../../../../testdata/archives/real/simple_call_compute_l__Z6helperPU9MTLdeviceKjj.bin"
);
pub const SIMPLE_CALL_MAIN: &[u8] =
    include_bytes!("../../../../../testdata/archives/real/simple_call_compute_shader.bin");
pub const TEXREAD_PROLOG: &[u8] =
    include_bytes!("../../../../../testdata/archives/real/texread_compute_shader_prolog.bin");
pub const TEXREAD_MAIN: &[u8] =
    include_bytes!("../../../../../testdata/archives/real/texread_compute_shader.bin");
/// Both end with `stop` + 16 bytes of `trap` padding, as dumped.
pub const VERTEX: &[u8] =
    include_bytes!("../../../../../testdata/archives/real/vertex_shader_4647326dc8.bin");
pub const FRAGMENT: &[u8] =
    include_bytes!("../../../../../testdata/archives/real/fragment_shader_21e1638a04.bin");

pub const HELPER_SYM: &str = "l__Z6helperPU9MTLdeviceKjj";

/// `__text` of marysaka's `simple_call`: helper at 0, main at 0x180 (the
/// offsets of the original listing), gaps trap-filled.
pub fn simple_call_text() -> (Vec<u8>, Vec<(String, u64)>) {
    place_text(&[
        (HELPER_SYM, 0, HELPER),
        ("_agc.main", 0x180, SIMPLE_CALL_MAIN),
    ])
}

/// Fat: AIR slice naming `simple_call` + G13G slice with the compute image.
pub fn simple_call_archive() -> Vec<u8> {
    let (text, syms) = simple_call_text();
    let image = gpu_image_stages(
        G13G,
        &[(Stage::Compute, code_image(&text, Some(&sym_refs(&syms))))],
    );
    fat(
        &[
            air_slice(&["simple_call"]),
            (CPU_TYPE_APPLEGPU, G13G, image),
        ],
        false,
    )
}

/// Fat: one G13G slice, prolog + main laid out like the A18 example
/// (constant_program at 0, main at 64).
pub fn texread_archive() -> Vec<u8> {
    let (text, syms) = layout_text(
        &[
            ("_agc.main.constant_program", TEXREAD_PROLOG),
            ("_agc.main", TEXREAD_MAIN),
        ],
        64,
    );
    build_test_archive(G13G, Stage::Compute, &text, &sym_refs(&syms))
}

/// Byte-swapped fat, G13S, one APPLEGPU image with `__vertex` and
/// `__fragment`, name-prefixed symbols (the symbol names are ours).
pub fn render_archive() -> Vec<u8> {
    let (vt, vs) = layout_text(&[("__tri_vertex_agc.main", VERTEX)], 16);
    let (ft, fs) = layout_text(&[("__tri_fragment_agc.main", FRAGMENT)], 16);
    let image = gpu_image_stages(
        G13S,
        &[
            (Stage::Vertex, code_image(&vt, Some(&sym_refs(&vs)))),
            (Stage::Fragment, code_image(&ft, Some(&sym_refs(&fs)))),
        ],
    );
    fat(&[(CPU_TYPE_APPLEGPU, G13S, image)], true)
}

/// The container's tests' own knowledge of what decodes: Mac parts of
/// generations 13 and 14 (what the profiler's GPU models decode; stated
/// here so that the container is tested alone).
pub fn decodes(r: &agx_container::GpuRow) -> bool {
    !r.is_phone() && matches!(r.generation, 13 | 14)
}

/// [`agx_container::read`] with [`decodes`].
pub fn read(bytes: &[u8]) -> Result<agx_container::Input, agx_container::ContainerError> {
    agx_container::read(bytes, decodes)
}

/// [`agx_container::ReadOptions`] with [`decodes`].
pub fn options(allow_other_gpus: bool, keep_undecodable: bool) -> agx_container::ReadOptions {
    agx_container::ReadOptions {
        allow_other_gpus,
        keep_undecodable,
        ..agx_container::ReadOptions::new(decodes)
    }
}

pub fn archive(bytes: &[u8]) -> agx_container::Archive {
    match read(bytes) {
        Ok(agx_container::Input::Archive(a)) => a,
        Ok(agx_container::Input::Raw(_)) => panic!("read as raw"),
        Err(e) => panic!("{e}"),
    }
}
