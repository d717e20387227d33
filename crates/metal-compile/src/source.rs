//! Getting the source onto disk where `metal` can read it.

use std::path::{Path, PathBuf};

use crate::{CompileError, CompileRequest, Source, TempDir};

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

/// A new temporary directory for one compile (under `parent` when given,
/// else under `std::env::temp_dir()`) with the source in place.
pub(crate) fn prepare(
    source: &Source,
    parent: Option<&Path>,
    prefix: &str,
) -> Result<(TempDir, MaterializedSource), CompileError> {
    let tmp = match parent {
        Some(parent) => TempDir::new_in(parent, prefix),
        None => TempDir::new(prefix),
    }
    .map_err(|e| CompileError::io("cannot create a temporary directory", e))?;
    let source = materialize_source(source, &tmp)?;
    Ok((tmp, source))
}

/// Saves the archive where the request's `keep_archive` says: that path,
/// or `None` when it asks for no copy.
pub(crate) fn keep_archive(
    req: &CompileRequest,
    bytes: &[u8],
) -> Result<Option<PathBuf>, CompileError> {
    let Some(path) = &req.keep_archive else {
        return Ok(None);
    };
    write_file(path, bytes)?;
    Ok(Some(path.clone()))
}

pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CompileError> {
    std::fs::write(path, bytes)
        .map_err(|e| CompileError::io(format!("cannot write {}", path.display()), e))
}
