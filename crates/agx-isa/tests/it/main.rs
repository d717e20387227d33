//! All integration tests of this crate in one test binary (one link instead of
//! one per file: issue 29). Each file is a module; `common` holds their helpers.

#[path = "../../../../testdata/native_signature.rs"]
mod native_signature;
#[path = "../../../../testdata/shared_data.rs"]
mod shared_data;
#[path = "../../../../testdata/xorshift.rs"]
mod xorshift;

mod apple9;
mod applegpu_corpus;
mod asm_corpus;
mod asm_errors;
mod asm_listings;
mod native_syntax;
mod props;
mod real_code;
