//! All integration tests of this crate in one test binary (one link instead of
//! one per file: issue 29). Each file is a module; `common` holds their helpers.

mod common;
#[path = "../../../../testdata/shared_data.rs"]
mod shared_data;
#[path = "../../../../testdata/xorshift.rs"]
mod xorshift;

mod address_breaks;
mod apple_stack;
mod asm_kernels;
mod code_table;
mod divergence;
mod divergence_mesa;
mod handbuilt;
mod lanes;
mod mesa_corpus;
mod program;
mod raw_image;
mod stack_kinds;
mod tgmem_banks;
mod timing_mesa;
mod timing_model;
mod timing_suggest;
mod trip_count;
mod uniform_loads;
mod uniformity;
