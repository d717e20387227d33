//! What the agx-report tests share: the repository root and the profile of
//! a main function's code with the default options.
#![allow(dead_code)]

use agx_isa::stream::walk;
use agx_report::{Options, Profile};
use std::path::PathBuf;

/// The repository root (every crate lives at `crates/NAME`).
pub fn repo() -> PathBuf {
    crate::shared_data::repo_root()
}

/// The profile of `code` (decoded from offset 0) named `name`, with the
/// default options.
pub fn profile(name: &str, code: &[u8]) -> Profile {
    let insns: Vec<_> = walk(code, 0).filter_map(|i| i.into_insn()).collect();
    Profile::build(
        name.to_string(),
        None,
        insns,
        None,
        vec![],
        &Options::default(),
    )
}
