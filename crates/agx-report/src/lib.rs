//! `agx-report`: views over one profile — the seed's terminal report
//! ([`text`]), the versioned JSON document ([`json`]), annotated
//! disassembly, the self-contained HTML page with the CFG ([`html`],
//! laid out by [`layout`]), Graphviz ([`dot`]) and SARIF ([`sarif`]). Reports print the kernel's
//! [`KernelRecord`] (built once from its [`Profile`]) and its per-instruction
//! rows ([`record::FunctionRows`]); they compute nothing themselves.

pub mod dot;
pub mod graph;
pub mod html;
pub mod json;
pub mod layout;
pub mod palette;
pub mod profile;
pub mod record;
pub mod sarif;
pub mod text;
pub mod untimed;

pub use graph::FunctionGraph;
pub use profile::{Options, Profile};
pub use record::KernelRecord;

/// `--explain-model`: every cost-table entry with its source, and every
/// assumption of the timing model.
pub fn explain_model() -> String {
    agx_analysis::gpu::default_model().table().explain_model()
}
