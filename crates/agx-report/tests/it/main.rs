//! All integration tests of this crate in one test binary (one link instead of
//! one per file: issue 29). Each file is a module; `common` holds their helpers.

#[path = "../../../../testdata/graphviz.rs"]
mod graphviz;
#[path = "../../../../testdata/sarif_schema.rs"]
mod sarif_schema;
#[path = "../../../../testdata/shared_data.rs"]
mod shared_data;
#[path = "../../../../testdata/xorshift.rs"]
mod xorshift;

mod common;
mod html_dot;
mod html_fragment;
mod listing_order;
mod sarif;
mod schema;
mod schema_calls;
mod snapshots;
mod timing_invariants;
mod untimed;
