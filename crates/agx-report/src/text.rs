//! The terminal report (the seed's layout).

use crate::Profile;
use agx_isa::format::write_line;
use agx_isa::Syntax;

/// The full text report.
pub fn report(p: &Profile, color: bool) -> String {
    let _ = color;
    format!(
        "metal-profiler: {} ({} instructions)\n",
        p.name,
        p.insns.len()
    )
}

/// The plain disassembly (`--show-disasm`).
pub fn plain_disassembly(p: &Profile, syntax: Syntax) -> String {
    let mut s = String::from("\n  ── Disassembly ──\n");
    for i in &p.insns {
        write_line(&mut s, i, syntax);
        s.push('\n');
    }
    s
}
