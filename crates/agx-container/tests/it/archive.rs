use crate::common;

use agx_container::testutil::*;
use agx_container::{
    read_with, trim_trap_padding, Archive, ContainerError, Input, Part, ReadOptions, SliceKind,
    Stage, CPU_TYPE_AIR64, CPU_TYPE_AMDGPU, CPU_TYPE_APPLEGPU,
};
use common::*;

#[test]
fn simple_call_function_list() {
    let a = archive(&simple_call_archive());
    assert!(!a.thin);
    assert_eq!(a.slices.len(), 2);
    assert_eq!(
        a.slices[0].kind,
        SliceKind::Air {
            names: vec!["simple_call".into()]
        }
    );
    assert_eq!(a.functions.len(), 2, "{:#?}", a.functions);
    let h = &a.functions[0];
    assert_eq!(h.stage, Stage::Compute);
    assert_eq!(h.symbol, HELPER_SYM);
    assert_eq!(h.name, "helper");
    assert_eq!(h.part, Part::Helper);
    assert_eq!((h.text_offset, h.size, h.code_size), (0, 0x180, 0x124));
    let m = &a.functions[1];
    assert_eq!(m.symbol, "_agc.main");
    assert_eq!(m.name, "simple_call", "named from the AIR slice");
    assert_eq!(m.part, Part::Main);
    assert_eq!((m.text_offset, m.size, m.code_size), (0x180, 0x50, 0x4c));
    let gpu = m.gpu.unwrap();
    assert_eq!(
        (gpu.name, gpu.family, gpu.is_g13, gpu.cpusubtype),
        ("G13G", "M1", true, 322)
    );
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
}

#[test]
fn function_code_equals_original_bytes() {
    let bytes = simple_call_archive();
    let a = archive(&bytes);
    assert_eq!(a.function_code(&a.functions[0]), HELPER);
    assert_eq!(a.function_code(&a.functions[1]), SIMPLE_CALL_MAIN);
    // file_offset points at the same bytes in the input file.
    for f in &a.functions {
        let at = f.file_offset as usize;
        assert_eq!(&bytes[at..at + f.code_size as usize], a.function_code(f));
    }
    let (text, _) = simple_call_text();
    assert_eq!(a.code(&a.functions[1]), &text[..]);
    assert_eq!(a.function_bytes(&a.functions[1]).len(), 0x50);
}

#[test]
fn call_target_resolves_to_helper() {
    let a = archive(&simple_call_archive());
    let main = a.select(None).unwrap();
    let text = a.code(main);
    // `call` (10 c0 imm32, PC-relative) at main+0x36: "call 0x-180" when
    // main is disassembled at 0 (applegpu listing).
    let at = (main.text_offset + 0x36) as usize;
    assert_eq!(&text[at..at + 2], &[0x10, 0xc0]);
    let imm = i32::from_le_bytes(text[at + 2..at + 6].try_into().unwrap());
    let target = (at as i64 + i64::from(imm)) as u64;
    assert_eq!(target, 0);
    assert_eq!(a.symbol_at(main, target), Some(HELPER_SYM));
    assert_eq!(a.function_at(main, target).unwrap().name, "helper");
    assert_eq!(a.symbol_at(main, 0x10), None);
}

#[test]
fn selection_by_metal_name_symbol_and_stage() {
    let a = archive(&simple_call_archive());
    let main = &a.functions[1];
    let helper = &a.functions[0];
    assert_eq!(a.select(None).unwrap(), main);
    assert_eq!(a.select(Some("simple_call")).unwrap(), main);
    assert_eq!(a.select(Some("_agc.main")).unwrap(), main);
    assert_eq!(a.select(Some("compute:simple_call")).unwrap(), main);
    assert_eq!(a.select(Some("helper")).unwrap(), helper);
    assert_eq!(a.select(Some(HELPER_SYM)).unwrap(), helper);
    assert!(a.select(Some("vertex:simple_call")).is_err());
}

#[test]
fn missing_function_lists_available_names() {
    let a = archive(&simple_call_archive());
    let e = a.select(Some("matmul_naive")).unwrap_err();
    assert_eq!(
        e,
        ContainerError::NoSuchFunction {
            requested: "matmul_naive".into(),
            available: vec![
                "helper (l__Z6helperPU9MTLdeviceKjj)".into(),
                "simple_call (_agc.main)".into()
            ],
        }
    );
    assert_eq!(
        e.to_string(),
        "archive: no function named `matmul_naive`; available: helper (l__Z6helperPU9MTLdeviceKjj), simple_call (_agc.main)"
    );
}

#[test]
fn prolog_and_main() {
    let a = archive(&texread_archive());
    assert_eq!(a.functions.len(), 2);
    let p = &a.functions[0];
    assert_eq!(p.part, Part::Prolog);
    assert_eq!(p.name, "main", "no AIR slice: unnamed kernel");
    assert_eq!((p.text_offset, p.size, p.code_size), (0, 64, 18));
    let m = &a.functions[1];
    assert_eq!(
        (m.part, m.text_offset, m.size, m.code_size),
        (Part::Main, 64, 64, 40)
    );
    assert_eq!(a.function_code(p), TEXREAD_PROLOG);
    assert_eq!(a.function_code(m), TEXREAD_MAIN);
    assert_eq!(a.select(None).unwrap(), m);
    assert_eq!(a.select(Some("main")).unwrap(), m, "main wins over prolog");
    assert_eq!(a.select(Some("_agc.main.constant_program")).unwrap(), p);
    assert_eq!(a.prolog_of(m), Some(p));
    assert_eq!(a.main_of(p), Some(m));
}

#[test]
fn render_pipeline_byte_swapped_prefixed_symbols() {
    let a = archive(&render_archive());
    assert_eq!(a.functions.len(), 2, "{:#?}", a.functions);
    let v = &a.functions[0];
    let f = &a.functions[1];
    assert_eq!(
        (v.stage, v.name.as_str(), v.part),
        (Stage::Vertex, "tri_vertex", Part::Main)
    );
    assert_eq!(
        (f.stage, f.name.as_str(), f.part),
        (Stage::Fragment, "tri_fragment", Part::Main)
    );
    assert_eq!(v.gpu.unwrap().name, "G13S");
    assert_eq!(a.images.len(), 2);
    assert_ne!(v.image, f.image);
    // Trap padding: the dumps end with stop + 16 bytes of 0x0008.
    assert_eq!((f.size, f.code_size), (64, 34));
    assert_eq!(a.function_code(f), &FRAGMENT[..34]);
    assert_eq!((v.size, v.code_size), (112, 94));
    assert_eq!(a.function_code(v), &VERTEX[..94]);
    assert_eq!(a.select(Some("tri_fragment")).unwrap(), f);
    assert_eq!(a.select(Some("__tri_vertex_agc.main")).unwrap(), v);
    let e = a.select(None).unwrap_err();
    assert!(matches!(
        e,
        ContainerError::Ambiguous {
            requested: None,
            ..
        }
    ));
    assert!(
        e.to_string()
            .contains("vertex:tri_vertex (__tri_vertex_agc.main)"),
        "{e}"
    );
}

#[test]
fn thin_macho() {
    let (text, syms) = simple_call_text();
    let bytes = gpu_image_stages(
        G13G,
        &[(Stage::Compute, code_image(&text, Some(&sym_refs(&syms))))],
    );
    let a = archive(&bytes);
    assert!(a.thin);
    assert_eq!(a.functions.len(), 2);
    assert_eq!(a.functions[1].name, "main");
    assert_eq!(a.function_code(&a.functions[1]), SIMPLE_CALL_MAIN);
}

#[test]
fn thin_nested_image_alone_is_read_as_compute() {
    let (text, syms) = simple_call_text();
    let a = archive(&code_image(&text, Some(&sym_refs(&syms))));
    assert_eq!(a.functions.len(), 2);
    assert_eq!(a.functions[0].stage, Stage::Compute);
    assert_warns(&a, "no __compute");
}

#[test]
fn image_without_symtab_is_one_main() {
    let (text, _) = simple_call_text();
    let image = gpu_image_stages(G13G, &[(Stage::Compute, code_image(&text, None))]);
    let a = archive(&fat(&[(CPU_TYPE_APPLEGPU, G13G, image)], false));
    assert_eq!(a.functions.len(), 1);
    let f = &a.functions[0];
    assert_eq!(
        (f.part, f.name.as_str(), f.text_offset),
        (Part::Main, "main", 0)
    );
    assert_eq!(f.size, text.len() as u64);
    assert_eq!(
        f.code_size, 0x1cc,
        "trailing traps after the main's stop trimmed"
    );
    assert!(!a.images[0].has_symbols);
    assert_warns(&a, "no LC_SYMTAB");
    assert_eq!(a.select(None).unwrap(), f);
}

#[test]
fn air_only_is_an_error() {
    let msg =
        "archive: this archive holds AIR bitcode only; build it for a device to get native code";
    let e = read(&fat(&[air_slice(&["k"])], false)).unwrap_err();
    assert_eq!(e, ContainerError::AirOnly);
    assert!(e.to_string().starts_with(msg), "{e}");
    // A bare metallib, and a thin Mach-O with cputype AIR64 (tinygrad #14005).
    assert_eq!(
        read(&metallib(&["k"])).unwrap_err(),
        ContainerError::AirOnly
    );
    let mut w = MachOWriter::new(CPU_TYPE_AIR64, 1);
    w.section("__TEXT", "__text", metallib(&["k"]));
    assert_eq!(read(&w.build()).unwrap_err(), ContainerError::AirOnly);
}

#[test]
fn undecodable_slice_is_an_error() {
    let (text, syms) = simple_call_text();
    let bytes = build_test_archive(G16P, Stage::Compute, &text, &sym_refs(&syms));
    let e = read(&bytes).unwrap_err();
    assert!(matches!(e, ContainerError::UnsupportedGpu { gpu, .. } if gpu.name == "G16P"));
    assert!(
        e.to_string().contains(
            "native code for GPU G16P (iPhone/iPad SoC) only: decoding supports G13 (M1) and G14 (M2) code; \
             get a decodable slice on any Mac with `metal-profile export KERNEL.metal -f NAME --target g14g -o out.archive`"
        ),
        "{e}"
    );
    // With allow_other_gpus it is read, with a warning.
    let opts = options(true, false);
    let Input::Archive(a) = read_with(&bytes, &opts).unwrap() else {
        panic!()
    };
    assert_eq!(a.functions.len(), 2);
    assert!(a.slices[0].decoded && !a.slices[0].decodes && !a.slices[0].decodable());
    assert_eq!(a.functions[0].gpu.unwrap().name, "G16P");
    assert!(
        a.warnings[0].contains("G16P (iPhone/iPad SoC)"),
        "{:?}",
        a.warnings
    );
    // keep_undecodable: the slices are listed, choose_slice explains.
    let opts = options(false, true);
    let Input::Archive(a) = read_with(&bytes, &opts).unwrap() else {
        panic!()
    };
    assert!(a.functions.is_empty());
    assert_eq!(a.slices.len(), 1);
    assert!(!a.slices[0].decoded);
    let e = a.choose_slice(Some("G16P")).unwrap_err();
    assert!(
        e.to_string()
            .contains("this archive has no decodable slice: get a decodable slice on any Mac"),
        "{e}"
    );
    assert!(matches!(
        a.choose_slice(None).unwrap_err(),
        ContainerError::UnsupportedGpu { .. }
    ));
    // Unknown subtype.
    let e = read(&build_test_archive(999, Stage::Compute, &text, &[])).unwrap_err();
    assert!(e.to_string().contains("APPLEGPU cpusubtype 999"), "{e}");
}

/// An archive as `metal-tt -arch applegpu_g13g -arch applegpu_g14g -arch
/// applegpu_g13s -arch applegpu_g15g` would give: the same kernel in four
/// slices, plus AIR.
fn multi_slice_archive() -> Vec<u8> {
    let (text, syms) = simple_call_text();
    let img = |sub| {
        gpu_image_stages(
            sub,
            &[(Stage::Compute, code_image(&text, Some(&sym_refs(&syms))))],
        )
    };
    fat(
        &[
            air_slice(&["simple_call"]),
            (CPU_TYPE_APPLEGPU, G13G, img(G13G)),
            (CPU_TYPE_APPLEGPU, G14G, img(G14G)),
            (CPU_TYPE_APPLEGPU, G13S, img(G13S)),
            (CPU_TYPE_APPLEGPU, G15G, img(G15G)),
        ],
        false,
    )
}

#[test]
fn g13_and_g14_slices_are_read_and_the_newest_is_chosen() {
    let a = archive(&multi_slice_archive());
    // three decodable slices, two functions each; G15G is listed, not read
    assert_eq!(a.functions.len(), 6);
    assert_eq!(a.slices.len(), 5);
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    let decoded: Vec<(bool, Option<&str>)> = a
        .slices
        .iter()
        .map(|s| (s.decodable(), s.gpu().map(|g| g.name)))
        .collect();
    assert_eq!(
        decoded,
        [
            (false, None),
            (true, Some("G13G")),
            (true, Some("G14G")),
            (true, Some("G13S")),
            (false, Some("G15G"))
        ]
    );
    // default: the newest decodable
    assert_eq!(a.choose_slice(None).unwrap(), 2);
    // by name, any case, with or without applegpu_
    assert_eq!(a.choose_slice(Some("g13g")).unwrap(), 1);
    assert_eq!(a.choose_slice(Some("APPLEGPU_G13S")).unwrap(), 3);
    assert_eq!(a.choose_slice(Some("G14g")).unwrap(), 2);
    let e = a.choose_slice(Some("g15g")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "archive: the G15G (M3) slice cannot be decoded (decoding supports G13 (M1) and G14 (M2) code); \
         decodable slices here: G13G (M1), G14G (M2), G13S (M1) (pick one with --gpu)"
    );
    let e = a.choose_slice(Some("g16g")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "archive: no slice for GPU `g16g` in this archive; it holds: G13G (M1), G14G (M2), G13S (M1), G15G (M3)"
    );
    // one slice's view: same code, same names, only the GPU differs
    let g14 = a.only_slice(2);
    let g13 = a.only_slice(1);
    assert_eq!(g14.functions.len(), 2);
    let (f14, f13) = (g14.select(None).unwrap(), g13.select(None).unwrap());
    assert_eq!(f14.gpu.unwrap().describe(), "G14G (M2)");
    assert_eq!(f13.gpu.unwrap().describe(), "G13G (M1)");
    assert_eq!(f14.name, "simple_call");
    assert_eq!(g14.function_code(f14), g13.function_code(f13));
    assert_eq!(
        g14.symbol_at(f14, 0),
        Some("l__Z6helperPU9MTLdeviceKjj"),
        "images renumbered"
    );
}

/// Which slices are read, chosen and named in refusals is the caller's
/// predicate, not the container's: a caller decoding M3 (G15) code only.
#[test]
fn what_decodes_is_the_callers_predicate() {
    fn g15(r: &agx_container::GpuRow) -> bool {
        r.generation == 15 && !r.is_phone()
    }
    let opts = ReadOptions {
        keep_undecodable: true,
        ..ReadOptions::new(g15)
    };
    let Input::Archive(a) = read_with(&multi_slice_archive(), &opts).unwrap() else {
        panic!()
    };
    let decodes: Vec<bool> = a.slices.iter().map(|s| s.decodable()).collect();
    assert_eq!(decodes, [false, false, false, false, true]);
    assert_eq!(a.functions.len(), 2, "the G15G slice only is read");
    assert_eq!(a.supported.0, [15]);
    assert_eq!(a.choose_slice(None).unwrap(), 4);
    let e = a.choose_slice(Some("g14g")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "archive: the G14G (M2) slice cannot be decoded (decoding supports G15 (M3) code); \
         decodable slices here: G15G (M3) (pick one with --gpu)"
    );
    // reading the others anyway: the warning names what decodes
    let opts = ReadOptions {
        allow_other_gpus: true,
        ..ReadOptions::new(g15)
    };
    let Input::Archive(a) = read_with(&multi_slice_archive(), &opts).unwrap() else {
        panic!()
    };
    assert_eq!(a.functions.len(), 8);
    assert!(
        a.warnings[0]
            .ends_with("native code for GPU G13G (M1): decoding supports G15 only; read anyway"),
        "{:?}",
        a.warnings
    );
    // nothing decodes: every APPLEGPU slice is listed, none read
    let e = agx_container::read(&multi_slice_archive(), |_| false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "archive: native code for GPU G13G (M1) only: decoding supports no GPU code; \
         get a decodable slice on any Mac with `metal-profile export KERNEL.metal -f NAME --target g14g -o out.archive`"
    );
}

#[test]
fn other_gpu_vendors_are_not_native_code() {
    let e = read(&fat(&[(CPU_TYPE_AMDGPU, 0, vec![0; 64])], false)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "archive: no Apple GPU machine code in this file (it holds an AMDGPU slice); get a decodable slice on any Mac with `metal-profile export KERNEL.metal -f NAME --target g14g -o out.archive`"
    );
}

#[test]
fn raw_dumps() {
    for raw in [&[][..], &[0x88, 0x00], SIMPLE_CALL_MAIN, HELPER] {
        assert_eq!(read(raw).unwrap(), Input::Raw(raw.to_vec()));
    }
}

#[test]
fn malformed_inputs_name_offset_and_expectation() {
    // Load command running past the load-command area.
    let good = texread_archive();
    let slice_off = u32::from_be_bytes(good[16..20].try_into().unwrap()) as usize;
    let mut bad = good.clone();
    // cmdsize of the first load command of the APPLEGPU image := 0x1000.
    bad[slice_off + 36..slice_off + 40].copy_from_slice(&0x1000u32.to_le_bytes());
    let e = read(&bad).unwrap_err();
    let s = e.to_string();
    assert!(
        s.starts_with(&format!("archive: at offset {:#x}: Mach-O load command 0 runs past the end of the load commands (cmdsize 4096,", slice_off + 32)),
        "{s}"
    );

    // A fat header with more records than fit; a slice past the end of the
    // file (big-endian fields of the fat header and of its first record).
    for (field, value, prefix) in [
        (
            4..8,
            1000u32,
            "archive: at offset 0x4: the fat header lists 1000 slices",
        ),
        (
            20..24,
            0x10_0000,
            "archive: at offset 0x8: fat record 0 (APPLEGPU) places its slice",
        ),
    ] {
        let mut bad = good.clone();
        bad[field].copy_from_slice(&value.to_be_bytes());
        let s = read(&bad).unwrap_err().to_string();
        assert!(s.starts_with(prefix), "{s}");
    }

    // Truncated file: every error is one line.
    for n in [9, 30, 60, 200, good.len() - 1] {
        if let Err(e) = read(&good[..n]) {
            assert!(!e.to_string().contains('\n'));
        }
    }
    assert!(matches!(read(&good[..3]).unwrap(), Input::Raw(_)));
}

#[test]
fn trap_trimming() {
    assert_eq!(trim_trap_padding(&[0x88, 0x00, 0x08, 0x00, 0x08, 0x00]), 2);
    assert_eq!(trim_trap_padding(&[0x14, 0x02, 0x08, 0x00]), 2, "after ret");
    // A longer instruction ending in 08 00 is left alone.
    assert_eq!(trim_trap_padding(&[0x62, 0x00, 0x08, 0x00]), 4);
    assert_eq!(trim_trap_padding(&[0x08, 0x00]), 2);
    assert_eq!(trim_trap_padding(&[0x88, 0x00, 0x08]), 3);
    assert_eq!(trim_trap_padding(&[]), 0);
}

#[test]
fn metallib_section_names_an_unprefixed_kernel() {
    let (text, syms) = layout_text(
        &[
            ("_agc.main.constant_program", TEXREAD_PROLOG),
            ("_agc.main", TEXREAD_MAIN),
        ],
        16,
    );
    let image = gpu_image(
        G13G,
        &[
            ("__compute", code_image(&text, Some(&sym_refs(&syms)))),
            ("__metallib", metallib(&["texread"])),
        ],
    );
    let a = archive(&fat(&[(CPU_TYPE_APPLEGPU, G13G, image)], false));
    assert_eq!(a.functions[0].name, "texread");
    assert_eq!(a.functions[1].name, "texread");
    assert_eq!(a.select(Some("texread")).unwrap().part, Part::Main);
}

#[test]
fn aliases_ltmp_and_out_of_range_symbols() {
    let (text, _) = simple_call_text();
    let syms = [
        ("ltmp0", 0),
        (HELPER_SYM, 0),
        ("l_alias", 0),
        ("_agc.main", 0x180),
        ("_far", 0x10_0000),
    ];
    let a = archive(&build_test_archive(G13G, Stage::Compute, &text, &syms));
    let got: Vec<(&str, u64, u64)> = a
        .functions
        .iter()
        .map(|f| (f.symbol.as_str(), f.text_offset, f.size))
        .collect();
    assert_eq!(
        got,
        vec![
            (HELPER_SYM, 0, 0x180),
            ("l_alias", 0, 0x180),
            ("_agc.main", 0x180, 0x50)
        ]
    );
    assert_warns(&a, "_far");
}

#[test]
fn first_symbol_not_at_zero_warns() {
    let (text, _) = simple_call_text();
    let a = archive(&build_test_archive(
        G13G,
        Stage::Compute,
        &text,
        &[("_agc.main", 0x180)],
    ));
    assert_eq!(a.functions.len(), 1);
    assert!(a
        .warnings
        .iter()
        .any(|w| w.contains("precede the first symbol")));
}

#[test]
fn nested_image_errors_name_absolute_offsets() {
    let good = texread_archive();
    // The nested Mach-O is the second `cf fa ed fe` in the file.
    let nested = good
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == [0xcf, 0xfa, 0xed, 0xfe])
        .nth(1)
        .unwrap()
        .0;
    // Its LC_SYMTAB follows the header (32) and one segment with one
    // section (72 + 80); nsyms is at +12.
    let at = nested + 32 + 72 + 80 + 12;
    let mut bad = good.clone();
    bad[at..at + 4].copy_from_slice(&0x0fff_ffffu32.to_le_bytes());
    let s = read(&bad).unwrap_err().to_string();
    assert!(
        s.contains("the symbol table (268435455 nlist_64 entries")
            && s.contains("runs past the end of the __TEXT,__compute section"),
        "{s}"
    );
    let ContainerError::Malformed { offset, .. } = read(&bad).unwrap_err() else {
        panic!()
    };
    assert!(
        offset as usize > nested && (offset as usize) < good.len(),
        "{offset:#x}"
    );
}

/// Asserts that one of the archive's warnings contains `needle` (all shown
/// when none does).
fn assert_warns(a: &Archive, needle: &str) {
    assert!(
        a.warnings.iter().any(|w| w.contains(needle)),
        "{needle}: {:?}",
        a.warnings
    );
}
