//! All integration tests of this crate in one test binary (one link instead of
//! one per file: issue 29). Each file is a module; `common` holds their helpers.

mod common;
#[path = "../../../../testdata/graphviz.rs"]
mod graphviz;
#[path = "../../../../testdata/sarif_schema.rs"]
mod sarif_schema;
#[path = "../../../../testdata/shared_data.rs"]
mod shared_data;
#[path = "../../../../testdata/xorshift.rs"]
mod xorshift;

mod access_labels;
mod advice_facts;
mod advice_rules;
mod cache_reuse;
mod cli_apple9;
mod cli_apple9_batch;
mod cli_apple9_profile;
mod cli_archive;
mod cli_basic;
mod cli_batch;
mod cli_calls;
mod cli_contract;
mod cli_edges;
mod cli_offline;
mod cli_output;
mod cli_raw_input;
mod cli_record;
mod cli_sarif;
mod cli_targets;
mod dot_graphviz;
mod expert_labels;
mod expert_rules;
mod gpu_model;
mod html_chromium;
mod instruction_facts;
mod layers;
mod names;
mod no_generation_names;
mod one_record;
mod symbolic_strides;
mod tgmem_bank_labels;
mod views_agree;
