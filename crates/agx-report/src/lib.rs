//! `agx-report`: views over one profile — the seed's terminal report
//! ([`text`]), the versioned JSON document ([`json`]), and annotated
//! disassembly. Reports read a [`Profile`]; they compute nothing themselves.

pub mod json;
pub mod profile;
pub mod text;

pub use profile::{Options, Profile};

/// `--explain-model`: every cost-table entry with its source, and every
/// assumption of the timing model.
pub fn explain_model() -> String {
    agx_analysis::timing::g13().explain_model()
}
