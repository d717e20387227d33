//! Analysis time and peak heap for synthetic kernels of 10k, 100k and 1M
//! instructions, straight-line and with nested loops (plain `main`, no
//! harness): `cargo bench -p agx-analysis --bench analysis`.
//!
//! Target (issue 4): 1M instructions analysed in under 1 s on one core, and
//! time growing no faster than ~1.2× per 1× of size (the "growth" column is
//! (t / t_prev) / (n / n_prev): 1.0 is linear).

use agx_analysis::{analyze_detailed, CfgOptions};
use agx_isa::forms::FORMS;
use agx_isa::{Instruction, Operand, OperandKind, Reg, Role, Width};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Counts live and peak heap bytes.
struct Counting;
static CUR: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let c = CUR.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(c, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        CUR.fetch_sub(l.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static A: Counting = Counting;

struct Gen {
    out: Vec<Instruction>,
    pc: u32,
    base: Instruction,
    k: u16,
}

fn form(name: &str) -> u8 {
    FORMS.iter().position(|f| f.name == name).unwrap() as u8
}

fn gpr(n: u16) -> Reg {
    Reg::gpr(Width::W32, 2 * n)
}

impl Gen {
    fn new() -> Gen {
        Gen {
            out: Vec::new(),
            pc: 0,
            base: agx_isa::decode(&[0x88, 0x00], 0).unwrap(),
            k: 0,
        }
    }
    fn push(&mut self, f: &str, mnem: &'static str, len: u8, ops: &[Operand]) -> usize {
        let mut i = self.base.clone();
        i.addr = self.pc;
        i.len = len;
        i.form = form(f);
        i.set_mnemonic_str(mnem);
        i.operands.clear();
        for o in ops {
            i.operands.push(*o);
        }
        self.pc += len as u32;
        self.out.push(i);
        self.out.len() - 1
    }
    /// `rD = f(rA, rB)` cycling over r1..r60.
    fn alu(&mut self) {
        self.k = self.k % 60 + 1;
        let d = self.k;
        let a = (d + 58) % 60 + 1;
        let b = (d + 52) % 60 + 1;
        self.push(
            "fadd32",
            "fadd32",
            6,
            &[
                Operand::reg(gpr(d), Role::Def),
                Operand::reg(gpr(a), Role::Use),
                Operand::reg(gpr(b), Role::Use),
            ],
        );
    }
    fn exec(&mut self, f: &str, mnem: &'static str, n: i64) {
        self.push(
            f,
            mnem,
            6,
            &[
                Operand::reg(Reg::gpr(Width::W16, 0), Role::UseDef),
                Operand::reg(gpr(self.k.max(1)), Role::Use),
                Operand::new(OperandKind::imm(n)),
            ],
        );
    }
    fn jmp(&mut self, mnem: &'static str, target: u32) -> usize {
        let rel = target as i64 - self.pc as i64;
        self.push(
            mnem,
            mnem,
            6,
            &[Operand::new(OperandKind::target(rel as i32))],
        )
    }
    fn patch(&mut self, at: usize, target: u32) {
        let rel = target as i64 - self.out[at].addr as i64;
        self.out[at].operands.as_mut_slice()[0].kind = OperandKind::target(rel as i32);
    }
    fn stop(&mut self) {
        self.push("stop", "stop", 2, &[]);
    }
}

fn straight(n: usize) -> Vec<Instruction> {
    let mut g = Gen::new();
    while g.out.len() + 1 < n {
        g.alu();
    }
    g.stop();
    g.out
}

/// Repeated units of ~100 instructions: a 3-deep loop nest in Mesa's shape
/// (`while` + backward `jmp_exec_any` + `pop_exec`) with an if-region
/// skipped by `jmp_exec_none`.
fn nested(n: usize) -> Vec<Instruction> {
    let mut g = Gen::new();
    while g.out.len() + 110 < n {
        let outer = g.pc;
        g.exec("while_icmp", "while_icmp", 1);
        for _ in 0..10 {
            g.alu();
        }
        let middle = g.pc;
        g.exec("while_icmp", "while_icmp", 1);
        for _ in 0..10 {
            g.alu();
        }
        let inner = g.pc;
        g.exec("while_icmp", "while_icmp", 1);
        for _ in 0..30 {
            g.alu();
        }
        g.jmp("jmp_exec_any", inner);
        g.exec("pop_exec", "pop_exec", 1);
        for _ in 0..5 {
            g.alu();
        }
        g.jmp("jmp_exec_any", middle);
        g.exec("pop_exec", "pop_exec", 1);
        g.exec("if_icmp", "if_icmp", 1);
        let skip = g.jmp("jmp_exec_none", 0);
        for _ in 0..20 {
            g.alu();
        }
        let here = g.pc;
        g.patch(skip, here);
        g.exec("pop_exec", "pop_exec", 1);
        for _ in 0..5 {
            g.alu();
        }
        g.jmp("jmp_exec_any", outer);
        g.exec("pop_exec", "pop_exec", 1);
    }
    while g.out.len() + 1 < n {
        g.alu();
    }
    g.stop();
    g.out
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let sizes = [10_000usize, 100_000, 1_000_000];
    println!(
        "{:<10} {:>9} {:>7} {:>6} {:>10} {:>8} {:>11} {:>7}",
        "shape", "insns", "blocks", "loops", "time ms", "ns/insn", "peak heap", "growth"
    );
    for (shape, make) in [
        ("straight", straight as fn(usize) -> Vec<Instruction>),
        ("nested", nested),
    ] {
        let mut prev: Option<(usize, f64)> = None;
        for &n in &sizes {
            let insns = make(n);
            if std::env::var_os("PHASES").is_some() {
                phases(&insns);
            }
            let runs = if n >= 1_000_000 { 3 } else { 10 };
            let mut best = f64::MAX;
            let mut peak = 0usize;
            let mut summary = (0, 0);
            for _ in 0..runs {
                let before = CUR.load(Ordering::Relaxed);
                PEAK.store(before, Ordering::Relaxed);
                let t = Instant::now();
                let d = analyze_detailed(&insns, &CfgOptions::default());
                let dt = t.elapsed().as_secs_f64();
                peak = peak.max(PEAK.load(Ordering::Relaxed) - before);
                summary = (d.cfg.blocks.len(), d.analysis.loops.len());
                std::hint::black_box(&d);
                best = best.min(dt);
            }
            let growth = prev
                .map(|(pn, pt)| format!("{:.2}", (best / pt) / (n as f64 / pn as f64)))
                .unwrap_or_else(|| "-".into());
            println!(
                "{:<10} {:>9} {:>7} {:>6} {:>10.2} {:>8.1} {:>8.1} MB {:>7}",
                shape,
                insns.len(),
                summary.0,
                summary.1,
                best * 1e3,
                best * 1e9 / insns.len() as f64,
                peak as f64 / (1 << 20) as f64,
                growth
            );
            prev = Some((n, best));
        }
    }
}

/// Per-phase times (set `PHASES=1`).
fn phases(insns: &[Instruction]) {
    use agx_analysis::{cfg::Cfg, facts, liveness, loops};
    let t = Instant::now();
    let f = facts::scan(insns);
    let t0 = t.elapsed();
    let cfg = Cfg::from_facts(&f, &CfgOptions::default());
    let t1 = t.elapsed();
    let dom = loops::dominators(&cfg);
    let t2 = t.elapsed();
    let lf = loops::find_loops(&cfg, &dom);
    let t3 = t.elapsed();
    let l = liveness::liveness_from_facts(&cfg, &f);
    let t4 = t.elapsed();
    std::hint::black_box((&lf, &l));
    eprintln!(
        "  scan {:?} cfg {:?} dom {:?} loops {:?} liveness {:?}  (size_of::<Instruction>() = {} bytes)",
        t0,
        t1 - t0,
        t2 - t1,
        t3 - t2,
        t4 - t3,
        std::mem::size_of::<Instruction>()
    );
}
