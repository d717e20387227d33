//! The one error type of this crate. Every variant displays as one line that
//! says where (byte offset, when there is one), what was expected, and what the
//! user can do about it.

use std::fmt;

use crate::gpu::{Gpu, Supported};

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
        /// The generations the caller decodes (named by the message).
        supported: Supported,
    },
    /// `--gpu NAME` names a GPU that has no slice in this archive.
    NoSuchGpu {
        /// The name asked for.
        requested: String,
        /// The GPUs of the archive's Apple GPU slices ("G13G (M1)", …).
        present: Vec<String>,
    },
    /// `--gpu NAME` names a slice whose code this project cannot decode.
    UndecodableGpu {
        /// The slice's GPU.
        gpu: Gpu,
        /// The decodable GPUs this archive does hold.
        decodable: Vec<String>,
        /// The generations the caller decodes (named by the message).
        supported: Supported,
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
                 ({GET_ONE}, or pass a raw code dump with --binary)"
            ),
            ContainerError::UnsupportedGpu { gpu, supported } => write!(
                f,
                "archive: native code for GPU {} only: decoding supports {} code; {GET_ONE}",
                gpu.describe(),
                supported.with_families()
            ),
            ContainerError::NoSuchGpu { requested, present } => write!(
                f,
                "archive: no slice for GPU `{requested}` in this archive; it holds: {}",
                list(present)
            ),
            ContainerError::UndecodableGpu {
                gpu,
                decodable,
                supported,
            } => {
                write!(
                    f,
                    "archive: the {} slice cannot be decoded (decoding supports {} code); ",
                    gpu.describe(),
                    supported.with_families()
                )?;
                if decodable.is_empty() {
                    write!(f, "this archive has no decodable slice: {GET_ONE}")
                } else {
                    write!(f, "decodable slices here: {} (pick one with --gpu)", list(decodable))
                }
            }
            ContainerError::NoNativeCode { found } => write!(
                f,
                "archive: no Apple GPU machine code in this file (it holds {found}); {GET_ONE}"
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

/// How to get decodable code: the offline compile on any Mac.
const GET_ONE: &str = "get a decodable slice on any Mac with \
`metal-profile export KERNEL.metal -f NAME --target g14g -o out.archive`";

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".to_string()
    } else {
        names.join(", ")
    }
}

impl std::error::Error for ContainerError {}
