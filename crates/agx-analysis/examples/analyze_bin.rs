//! `cargo run -p agx-analysis --example analyze_bin -- FILE [SIZE] [--entry ADDR] [--helper START..END]`
//! decodes FILE (or its first SIZE bytes) from offset 0 and prints the
//! analysis as JSON, followed by per-instruction live counts and exec depth
//! when `--trace` is given.

use agx_analysis::{analyze_detailed, CfgOptions};

fn parse(s: &str) -> u32 {
    if let Some(h) = s.strip_prefix("0x") {
        u32::from_str_radix(h, 16).expect("hex number")
    } else {
        s.parse().expect("number")
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .expect("usage: analyze_bin FILE [SIZE] [--entry A] [--helper S..E] [--trace]");
    let bin = std::fs::read(path).expect("read file");
    let mut size = bin.len();
    let mut opts = CfgOptions::default();
    let mut trace = false;
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--entry" => opts.entry = Some(parse(it.next().expect("address"))),
            "--helper" => {
                let r = it.next().expect("START..END");
                let (s, e) = r.split_once("..").expect("START..END");
                opts.helpers.push(parse(s)..parse(e));
            }
            "--trace" => trace = true,
            s => size = parse(s) as usize,
        }
    }
    // The walk stops at the first `stop`; with helpers (or an entry) past
    // it, decode the whole buffer linearly instead.
    let insns: Vec<_> = if opts.entry.is_some() || !opts.helpers.is_empty() {
        let mut v = Vec::new();
        let mut p = 0usize;
        while p + 2 <= size.min(bin.len()) {
            match agx_isa::decode(&bin[p..size.min(bin.len())], p as u32) {
                Ok(i) if !(i.raw == 0) => {
                    p += i.len as usize;
                    v.push(i);
                }
                _ => p += 2,
            }
        }
        v
    } else {
        agx_isa::stream::walk(&bin[..size.min(bin.len())], 0)
            .filter_map(|x| x.into_insn())
            .collect()
    };
    let d = analyze_detailed(&insns, &opts);
    println!("{}", serde_json::to_string_pretty(&d.analysis).unwrap());
    if trace {
        for (k, i) in insns.iter().enumerate() {
            println!(
                "{:5x}: live {:3} depth {:2} block {:3}  {}",
                i.addr,
                d.liveness.live_count[k],
                d.cfg.exec_depth[k],
                d.cfg.block_of[k],
                agx_isa::format_line(i, agx_isa::Syntax::default())
            );
        }
    }
}
