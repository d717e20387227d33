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
    // Each function is walked from its start (the walk stops at `stop` and
    // skips zero runs): helpers over their range, main from its entry.
    let end = size.min(bin.len());
    let walk = |s: usize, e: usize| -> Vec<agx_isa::Instruction> {
        agx_isa::stream::walk(&bin[s.min(e)..e], s as u32)
            .filter_map(|x| x.into_insn())
            .collect()
    };
    let mut insns = Vec::new();
    for r in &opts.helpers {
        insns.extend(walk(r.start as usize, (r.end as usize).min(end)));
    }
    insns.extend(walk(opts.entry.unwrap_or(0) as usize, end));
    insns.sort_by_key(|i| i.addr);
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
