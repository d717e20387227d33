//! The report model: one analysed function.

use agx_isa::Instruction;

/// Knobs of the analysis that reports state.
#[derive(Clone, Debug)]
pub struct Options {
    /// Iterations assumed for loops whose trip count is unknown.
    pub trip_count: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { trip_count: 16 }
    }
}

/// One analysed function, ready to render.
#[derive(Clone, Debug)]
pub struct Profile {
    pub name: String,
    pub gpu: Option<String>,
    pub insns: Vec<Instruction>,
    pub prolog: Option<Vec<Instruction>>,
    /// `call` sites resolved to symbol names: (address, symbol).
    pub calls: Vec<(u32, String)>,
    pub options: Options,
}

impl Profile {
    pub fn build(
        name: String,
        gpu: Option<String>,
        insns: Vec<Instruction>,
        prolog: Option<Vec<Instruction>>,
        calls: Vec<(u32, String)>,
        options: &Options,
    ) -> Profile {
        Profile {
            name,
            gpu,
            insns,
            prolog,
            calls,
            options: options.clone(),
        }
    }
}
