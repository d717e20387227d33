//! Assembler: applegpu-syntax text back to bytes, sharing the decoder's form
//! tables (one source of truth, two directions).

use std::fmt;

/// An assembly error at a line and column (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for AsmError {}

/// Assembles `text` into machine code.
pub fn assemble(text: &str) -> Result<Vec<u8>, AsmError> {
    let _ = text;
    Err(AsmError { line: 1, column: 1, message: "assembler not implemented yet".into() })
}
