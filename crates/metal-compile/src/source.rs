//! Getting the source onto disk where `metal` can read it.

use std::path::{Path, PathBuf};

use crate::{CompileError, Source, TempDir};

/// The `.metal` file to compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaterializedSource {
    pub path: PathBuf,
    /// Whether `path` was written into the temporary directory (the `--source` path).
    pub temporary: bool,
}

/// File name used for `--source` text inside the temporary directory.
pub const SOURCE_FILE_NAME: &str = "kernel.metal";

/// A file source is checked to exist and used in place; text is written to
/// `<tmp>/kernel.metal`.
pub fn materialize_source(
    source: &Source,
    tmp: &TempDir,
) -> Result<MaterializedSource, CompileError> {
    match source {
        Source::File(path) => {
            if !path.is_file() {
                return Err(CompileError::SourceNotFound(path.clone()));
            }
            Ok(MaterializedSource {
                path: path.clone(),
                temporary: false,
            })
        }
        Source::Text(text) => {
            let path = tmp.join(SOURCE_FILE_NAME);
            write_file(&path, text.as_bytes())?;
            Ok(MaterializedSource {
                path,
                temporary: true,
            })
        }
    }
}

pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CompileError> {
    std::fs::write(path, bytes)
        .map_err(|e| CompileError::io(format!("cannot write {}", path.display()), e))
}
