//! The structural analysis of code no timing model applies to (a GPU
//! model without a timing table, `GpuModel::timing` `None`): counts, framing,
//! the CFG and loops, memory accesses per loop, registers against the
//! family's register file and the wait fields, nothing priced.
//!
//! It reads a [`Decoded`] (the [`Facts`] every pass reads, plus what each
//! instruction says of memory and waits), filled by a family's adapter
//! ([`crate::apple9_adapter`], chosen through the model's
//! [`crate::gpu::Adapter`]); the CFG, loop forest and liveness are the
//! same passes the timed profile runs over the same facts. Nothing here
//! names a generation: the register file is the model's.
//!
//! What an instruction's operands do is unknown for an `unknown` position
//! and for instructions whose operands are not all decoded. Such an
//! instruction is given, for liveness, a definition of every register and
//! no use: every live range computed is then inside a true one, so the
//! peak found is a lower bound (and marked so); the pressure at the
//! unknown instruction itself is not counted.

use crate::cfg::{Cfg, CfgOptions};
use crate::facts::Facts;
use crate::gpu::GpuModel;
use crate::loops::{dominators, find_loops, LoopNest};
use agx_isa::{MemDir, MemSpace};

/// A memory access as decoded; serialized as the fields of the untimed
/// record's `memory[]` entries (agx-report `untimed::MemoryRecord`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MemSite {
    #[serde(serialize_with = "space_name")]
    pub space: MemSpace,
    #[serde(serialize_with = "dir_name")]
    pub dir: MemDir,
    /// Element type as the family's reference prints it (`i32`).
    pub elem: &'static str,
    pub components: u8,
    pub bytes_per_lane: u32,
    /// Register texts: data, 64-bit base, index (a register or an
    /// immediate's digits).
    pub data: String,
    pub base: String,
    pub index: String,
    /// Index shift and byte offset (address = base + index << shift + offset).
    pub shift: u8,
    #[serde(rename = "byte_offset")]
    pub offset: i16,
    /// Whether base and index are uniform registers or immediates (every
    /// lane the same address).
    #[serde(skip)]
    pub uniform_address: bool,
    /// The per-lane registers the address reads (none when uniform).
    #[serde(skip)]
    pub lane_registers: Vec<String>,
}

fn space_name<S: serde::Serializer>(s: &MemSpace, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(s.name())
}

fn dir_name<S: serde::Serializer>(d: &MemDir, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(d.name())
}

/// One instruction as the untimed profile needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Insn {
    pub addr: u32,
    pub len: u8,
    /// Mnemonic (`None`: an unknown encoding).
    pub mnemonic: Option<String>,
    /// The listing's asm text (`unknown          6 bytes` when unknown).
    pub text: String,
    /// Every operand decoded.
    pub complete: bool,
    pub mem: Option<MemSite>,
    /// Output wait group set (`g`), as decoded.
    pub wait_group: Option<u8>,
    /// Wait groups waited on, as decoded.
    pub waits_on: Vec<u8>,
}

impl Insn {
    /// Whether it carries wait fields (a wait group set or waited on).
    pub fn carries_waits(&self) -> bool {
        self.wait_group.is_some() || !self.waits_on.is_empty()
    }
}

/// Where framing stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FramingStop {
    pub offset: usize,
    pub addr: u32,
    pub reason: String,
}

/// A family's walk of some code, as facts.
#[derive(Clone, Debug, Default)]
pub struct Decoded {
    pub facts: Facts,
    pub insns: Vec<Insn>,
    /// The code table the facts came from (one row per `insns` entry).
    pub table: Option<agx_isa::table::CodeTable>,
    /// Bytes given; the code's extent (to the end of the `stop` that ended
    /// the walk, else all); bytes framed (instructions and unknown
    /// positions).
    pub input_bytes: usize,
    pub code_bytes: usize,
    pub framed_bytes: usize,
    /// Zero bytes skipped between instructions (the reference's gaps).
    pub gap_bytes: usize,
    pub framing_stop: Option<FramingStop>,
    /// The address of the `stop` that ended the walk.
    pub stop: Option<u32>,
}

impl Decoded {
    pub fn named(&self) -> usize {
        self.insns.iter().filter(|i| i.mnemonic.is_some()).count()
    }
    pub fn unknown(&self) -> usize {
        self.insns.len() - self.named()
    }
    /// Framed bytes (zero runs skipped between instructions counted as
    /// framed) over the code's extent.
    pub fn framed_fraction(&self) -> f64 {
        if self.code_bytes == 0 {
            return 0.0;
        }
        (self.framed_bytes + self.gap_bytes) as f64 / self.code_bytes as f64
    }
    /// Named instructions over instructions.
    pub fn named_fraction(&self) -> f64 {
        if self.insns.is_empty() {
            return 0.0;
        }
        self.named() as f64 / self.insns.len() as f64
    }
    /// Instructions whose operands are not all decoded (unknown ones included).
    pub fn incomplete(&self) -> usize {
        self.insns.iter().filter(|i| !i.complete).count()
    }
}

/// Registers from decoded operands against the register file (also the
/// untimed record's `registers` object, serialized as is).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Registers {
    /// 32-bit GPRs per thread (the family's `Isa::gprs`).
    pub file_gprs: u32,
    /// The same file in 16-bit halves.
    pub file_half: u32,
    pub highest_half_index: Option<u32>,
    pub highest_gpr: Option<u32>,
    /// e.g. `r4` or `r4h`.
    pub highest_register: Option<String>,
    /// Distinct 32-bit GPRs touched.
    pub gprs_touched: u32,
    pub highest_uniform_half: Option<u32>,
    /// Uniform halves read (the highest + 1, the timed record's
    /// `uniform_half`) and the same in 32-bit uniform registers.
    pub uniform_half: u32,
    pub uniform_gprs: u32,
    /// Peak live halves / GPRs (rounded up), where; `None` when liveness
    /// could not run (no instruction decoded).
    pub peak_live_half: Option<u32>,
    pub peak_live_gprs: Option<u32>,
    pub peak_live_offset: Option<u32>,
    /// Whether the figures are lower bounds, and why.
    pub lower_bound: bool,
    pub lower_bound_reasons: Vec<String>,
    /// A register past the file was decoded.
    pub exceeds_file: bool,
}

/// One loop (also the untimed record's `loops[]` entry, serialized as
/// is).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Loop {
    /// Its index in [`Untimed::loops`] (ordered by start, outer first).
    pub index: usize,
    pub start: u32,
    pub end: u32,
    pub header: u32,
    pub depth: u32,
    pub parent: Option<usize>,
    pub blocks: usize,
    pub instructions: usize,
    /// Addresses of the latches' last instructions and where execution
    /// continues when it leaves (the timed record's `latches`/`exits`).
    pub latches: crate::Addrs,
    pub exits: crate::Addrs,
    /// Instructions of the loop whose operands are not all decoded.
    pub operands_incomplete: usize,
    /// The trip count used: the proved count or maximum, else
    /// [`ASSUMED_TRIP_COUNT`]; what the code proves (`crate::table_trips`).
    pub trip_count: u32,
    #[serde(skip)]
    pub trip: crate::table_trips::TableTrip,
    /// Addresses of its memory instructions and of those carrying wait
    /// fields (nested loops included): their facts are in the record's
    /// `memory[]` and `waits[]`.
    pub memory: Vec<u32>,
    pub waits: Vec<u32>,
}

/// The trip count each loop is assumed to run where no timing model or
/// trip-count analysis applies (the timed model's default).
pub const ASSUMED_TRIP_COUNT: u32 = crate::timing::DEFAULT_TRIP_COUNT;

/// One region's relative cost in issue slots (instructions issued per
/// thread, not cycles): a loop's own instructions (nested loops excluded)
/// times the assumed trip count per enclosing level, or the code outside
/// every loop once (also the record's `regions[]` entry, serialized as is).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Region {
    /// "loop at 0x1a" (as the report names loops) or "outside loops".
    pub name: String,
    /// Index into `loops[]`; `null` for the code outside loops.
    #[serde(rename = "loop")]
    pub in_loop: Option<usize>,
    pub depth: u32,
    /// Its own instructions.
    pub instructions: usize,
    /// Times each instruction issues per thread: the assumed trip count to
    /// the power of the depth.
    pub executions: u64,
    pub issue_slots: u64,
    /// Share of all issue slots, percent (two decimals).
    pub share_pct: f64,
}

/// The regions of `loops` (nesting from `owner`), dearest first.
/// Issues per thread of each loop's own instructions: the product of its
/// and its enclosing loops' trip counts (proved by `crate::table_trips`,
/// else [`ASSUMED_TRIP_COUNT`]).
fn loop_executions(loops: &[Loop]) -> Vec<u64> {
    loops
        .iter()
        .map(|l| {
            let mut n: u64 = 1;
            let mut cur = Some(l.index);
            while let Some(k) = cur {
                n = n.saturating_mul(loops[k].trip_count.max(1) as u64);
                cur = loops[k].parent;
            }
            n
        })
        .collect()
}

fn regions(loops: &[Loop], owner: &[Option<u32>]) -> Vec<Region> {
    let exec = loop_executions(loops);
    let mut own = vec![0usize; loops.len()];
    let mut outside = 0usize;
    for o in owner {
        match o {
            Some(l) => own[*l as usize] += 1,
            None => outside += 1,
        }
    }
    let mut v: Vec<Region> = loops
        .iter()
        .map(|l| {
            let executions = exec[l.index];
            Region {
                name: format!("loop at 0x{:x}", l.header),
                in_loop: Some(l.index),
                depth: l.depth,
                instructions: own[l.index],
                executions,
                issue_slots: own[l.index] as u64 * executions,
                share_pct: 0.0,
            }
        })
        .collect();
    if outside > 0 {
        v.push(Region {
            name: "outside loops".into(),
            in_loop: None,
            depth: 0,
            instructions: outside,
            executions: 1,
            issue_slots: outside as u64,
            share_pct: 0.0,
        });
    }
    let total: u64 = v.iter().map(|r| r.issue_slots).sum();
    for r in &mut v {
        r.share_pct = if total == 0 {
            0.0
        } else {
            (r.issue_slots as f64 * 10000.0 / total as f64).round() / 100.0
        };
    }
    v.sort_by(|a, b| {
        b.issue_slots
            .cmp(&a.issue_slots)
            .then(a.in_loop.cmp(&b.in_loop))
    });
    v
}

/// The untimed analysis of one piece of code.
#[derive(Clone, Debug)]
pub struct Untimed {
    pub cfg: Cfg,
    /// The CFG's summary, as the timed analysis gives it.
    pub summary: crate::CfgSummary,
    pub loops: Vec<Loop>,
    pub irreducible: Vec<crate::IrreducibleSummary>,
    pub backward_branches: usize,
    pub registers: Registers,
    /// Innermost loop (index into `loops`) of each instruction.
    pub owner: Vec<Option<u32>>,
    /// The loop forest's back edges (block, loop header block).
    pub back_edges: Vec<(usize, usize)>,
    /// Relative cost per region in issue slots, dearest first (the first is
    /// the hot region).
    pub regions: Vec<Region>,
    /// Branch verdicts from the code table (`crate::uniformity`).
    pub uniformity: crate::uniformity::Uniformity,
    /// The lane pattern of each memory instruction, by instruction index
    /// (`crate::lanes` over the code table, with the uniformity facts).
    pub lanes: Vec<(usize, crate::lanes::LaneFact)>,
    /// The advice rules' suggestions from the table's facts
    /// (`crate::advice::run_table`).
    pub suggestions: Vec<crate::timing::Suggestion>,
}

/// Each loop's header, last address and share of the issue slots (its own
/// instructions and its nested loops'), for the advice rules.
fn table_loops(loops: &[Loop], regions: &[Region]) -> Vec<crate::advice::TableLoop> {
    let total: u64 = regions.iter().map(|r| r.issue_slots).sum();
    let mut slots = vec![0u64; loops.len()];
    for r in regions {
        let mut cur = r.in_loop;
        while let Some(l) = cur {
            slots[l] += r.issue_slots;
            cur = loops[l].parent;
        }
    }
    loops
        .iter()
        .map(|l| crate::advice::TableLoop {
            header: l.header,
            end: l.end,
            share_pct: crate::timing::suggest::share_pct(slots[l.index] as f64, total as f64),
        })
        .collect()
}

fn reg_text(half: u32, whole: bool) -> String {
    if whole {
        format!("r{}", half / 2)
    } else {
        format!(
            "r{}{}",
            half / 2,
            if half.is_multiple_of(2) { 'l' } else { 'h' }
        )
    }
}

/// Runs the CFG, loop and liveness passes over `d` for the GPU `model`.
pub fn analyze(d: &Decoded, model: &GpuModel) -> Untimed {
    let f = &d.facts;
    let cfg = Cfg::from_facts(f, &CfgOptions::default());
    let dom = dominators(&cfg);
    let forest = find_loops(&cfg, &dom);
    let nest = LoopNest::new(&cfg, &forest);
    // the instructions of each loop (nested loops included): each
    // instruction joins its innermost loop and that loop's ancestors
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); nest.loops.len()];
    for (i, o) in nest.owner.iter().enumerate() {
        let mut cur = o.map(|x| x as usize);
        while let Some(l) = cur {
            members[l].push(i);
            cur = nest.loops[l].parent;
        }
    }
    let mut loops: Vec<Loop> = nest
        .loops
        .iter()
        .zip(members)
        .enumerate()
        .map(|(index, (nl, members))| {
            let lp = &forest.loops[nl.forest];
            let sum = crate::loop_summary(&cfg, lp);
            let addrs = |keep: &dyn Fn(&Insn) -> bool| -> Vec<u32> {
                members
                    .iter()
                    .map(|&i| &d.insns[i])
                    .filter(|ins| keep(ins))
                    .map(|ins| ins.addr)
                    .collect()
            };
            Loop {
                index,
                start: lp.start,
                end: lp.end,
                header: f.addr[nl.header],
                depth: lp.depth,
                parent: nl.parent,
                blocks: lp.blocks,
                instructions: lp.instructions,
                latches: sum.latches,
                exits: sum.exits,
                operands_incomplete: members.iter().filter(|&&i| !d.insns[i].complete).count(),
                trip_count: ASSUMED_TRIP_COUNT,
                trip: Default::default(),
                memory: addrs(&|ins| ins.mem.is_some()),
                waits: addrs(&Insn::carries_waits),
            }
        })
        .collect();
    let uniformity = d
        .table
        .as_ref()
        .map(|t| crate::uniformity::analyze(t, &cfg, &forest))
        .unwrap_or_default();
    if let Some(t) = &d.table {
        let trips = crate::table_trips::analyze(t, &cfg, &forest, &nest, &uniformity);
        for (l, trip) in loops.iter_mut().zip(trips) {
            l.trip_count = trip.count.unwrap_or(ASSUMED_TRIP_COUNT);
            l.trip = trip;
        }
    }
    let regions = regions(&loops, &nest.owner);
    let lanes = d
        .table
        .as_ref()
        .map(|t| crate::lanes::lane_facts_with(t, &cfg, Some(&uniformity)))
        .unwrap_or_default();
    let executions: Vec<u64> = nest
        .owner
        .iter()
        .map(|o| {
            o.map_or(1, |l| {
                (ASSUMED_TRIP_COUNT as u64).saturating_pow(loops[l as usize].depth)
            })
        })
        .collect();
    let suggestions = match &d.table {
        Some(table) => crate::advice::run_table(&crate::advice::TableContext {
            table,
            branches: &uniformity.branches,
            loops: &table_loops(&loops, &regions),
            total_slots: executions.iter().sum(),
            executions: &executions,
        }),
        None => Vec::new(),
    };
    Untimed {
        suggestions,
        uniformity,
        lanes,
        regions,
        registers: registers(d, &cfg, model),
        backward_branches: cfg.backward_branches(),
        irreducible: crate::irreducible_summaries(&cfg, &forest),
        summary: crate::cfg_summary(&cfg),
        loops,
        owner: nest.owner,
        back_edges: forest.back_edges.clone(),
        cfg,
    }
}

fn registers(d: &Decoded, cfg: &Cfg, model: &GpuModel) -> Registers {
    let f = &d.facts;
    let mut touched = std::collections::BTreeSet::new();
    let mut highest_half: Option<u32> = None;
    let mut whole_at_highest = false;
    for (i, ins) in d.insns.iter().enumerate() {
        // an instruction with unknown operands holds only its "defines
        // everything" ranges: no decoded register
        if !ins.complete {
            continue;
        }
        for r in f.regs(i) {
            if r.bits & crate::facts::RegRange::UNIFORM != 0 {
                continue;
            }
            for h in r.range() {
                touched.insert(h / 2);
            }
            let last = r.range().end - 1;
            if highest_half.is_none_or(|h| last > h) {
                highest_half = Some(last);
                whole_at_highest = !last.is_multiple_of(2) && (r.start as u32) < last;
            }
        }
    }
    let mut reasons = Vec::new();
    let unknown = d.unknown();
    let incomplete = d.incomplete() - unknown;
    if unknown > 0 {
        reasons.push(format!(
            "{unknown} unknown instruction{} (operands not read)",
            if unknown == 1 { "" } else { "s" }
        ));
    }
    if incomplete > 0 {
        reasons.push(format!(
            "{incomplete} instruction{} with undecoded operand fields",
            if incomplete == 1 { "" } else { "s" }
        ));
    }
    if let Some(s) = &d.framing_stop {
        reasons.push(format!(
            "framing stopped at 0x{:x}: the code after it is not read",
            s.addr
        ));
    }
    let (mut peak_half, mut peak_offset) = (None, None);
    if d.insns.iter().any(|i| i.complete) {
        let live = crate::liveness::liveness_from_facts(cfg, f);
        let mut best: Option<(u16, usize)> = None;
        for (i, &c) in live.live_count.iter().enumerate() {
            if d.insns[i].complete && best.is_none_or(|b| c > b.0) {
                best = Some((c, i));
            }
        }
        if let Some((c, i)) = best {
            peak_half = Some(c as u32);
            peak_offset = Some(f.addr[i]);
        }
    }
    let highest_gpr = highest_half.map(|h| h / 2);
    Registers {
        file_gprs: model.gprs(),
        file_half: model.file_half(),
        highest_half_index: highest_half,
        highest_gpr,
        highest_register: highest_half.map(|h| reg_text(h, whole_at_highest)),
        gprs_touched: touched.len() as u32,
        highest_uniform_half: f.highest_uniform,
        uniform_half: f.highest_uniform.map_or(0, |h| h + 1),
        uniform_gprs: f.highest_uniform.map_or(0, |h| (h + 1).div_ceil(2)),
        peak_live_half: peak_half,
        peak_live_gprs: peak_half.map(|h| h.div_ceil(2)),
        peak_live_offset: peak_offset,
        lower_bound: !reasons.is_empty(),
        lower_bound_reasons: reasons,
        exceeds_file: highest_gpr.is_some_and(|g| g >= model.gprs()),
    }
}

/// GPR halves an instruction with unknown operands is said to define (the
/// whole 256-half set liveness tracks, so whatever register number a
/// decoded operand names).
pub const ALL_HALVES: u32 = 256;
/// Uniform halves likewise.
pub const ALL_UNIFORM_HALVES: u32 = 512;
