//! All integration tests of this crate in one test binary (one link instead of
//! one per file: issue 29). Each file is a module; `common` holds their helpers.

mod common;

mod archive;
mod layering;
mod robustness;
