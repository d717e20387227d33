//! The one error type of this crate. Every variant displays as one line that
//! says where (byte offset, when there is one), what was expected, and what the
//! user can do about it.

use std::fmt;

use crate::gpu::Gpu;

/// Why an input could not be read, or a function could not be selected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContainerError {
    /// The bytes look like a container (a known magic number) but break its
    /// structure at `offset` (absolute, in the input file).
    Malformed {
        /// Absolute byte offset in the input where the problem was found.
        offset: u64,
        /// What was expected there and what was found instead.
        what: String,
    },
    /// Only AIR (LLVM bitcode) slices: nothing native to decode.
    AirOnly,
    /// The only native code is for a GPU this project cannot decode.
    UnsupportedGpu {
        /// The GPU named by the slice's cpusubtype.
        gpu: Gpu,
    },
    /// A container without any Apple GPU code (AMD/Intel slices, unknown
    /// cputypes, an APPLEGPU image without shader sections).
    NoNativeCode {
        /// What the archive holds instead, e.g. "1 AMDGPU slice".
        found: String,
    },
    /// `select(Some(name))` found nothing.
    NoSuchFunction {
        /// The name asked for.
        requested: String,
        /// Names that would have worked.
        available: Vec<String>,
    },
    /// `select` could match several functions.
    Ambiguous {
        /// The name asked for (`None` = the default selection).
        requested: Option<String>,
        /// Names (full symbols or `stage:name`) that pick exactly one.
        candidates: Vec<String>,
    },
}

impl ContainerError {
    pub(crate) fn at(offset: u64, what: impl Into<String>) -> Self {
        ContainerError::Malformed {
            offset,
            what: what.into(),
        }
    }
}

impl fmt::Display for ContainerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContainerError::Malformed { offset, what } => write!(
                f,
                "archive: at offset {offset:#x}: {what}; the file is truncated, corrupt or not a Metal binary archive"
            ),
            ContainerError::AirOnly => write!(
                f,
                "archive: this archive holds AIR bitcode only; build it for a device to get native code \
                 (e.g. serialize an MTLBinaryArchive on an M1 Mac, or pass a raw G13 code dump)"
            ),
            ContainerError::UnsupportedGpu { gpu } => write!(
                f,
                "archive: native code for GPU {}: decoding is supported for G13 only \
                 (build the archive on an M1-family Mac)",
                gpu.describe()
            ),
            ContainerError::NoNativeCode { found } => write!(
                f,
                "archive: no Apple GPU machine code in this file (it holds {found}); \
                 build the archive for an Apple M1-family GPU"
            ),
            ContainerError::NoSuchFunction {
                requested,
                available,
            } => write!(
                f,
                "archive: no function named `{requested}`; available: {}",
                list(available)
            ),
            ContainerError::Ambiguous {
                requested,
                candidates,
            } => match requested {
                Some(name) => write!(
                    f,
                    "archive: `{name}` names several functions; pick one of: {}",
                    list(candidates)
                ),
                None => write!(
                    f,
                    "archive: the archive holds several kernels; pick one with -f: {}",
                    list(candidates)
                ),
            },
        }
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".to_string()
    } else {
        names.join(", ")
    }
}

impl std::error::Error for ContainerError {}
