//! Special registers (`get_sr srN`) and whether their value is the same for
//! every thread of a SIMD-group: the source table of the divergence analysis
//! ([`crate::divergence`]).
//!
//! Numbers and names: applegpu `SR_NAMES` (dougallj/applegpu @ 4c5bae61,
//! `applegpu.py`, copied into `agx_isa::forms::SR_NAMES`) and Mesa's AGX
//! `agx_opcodes.py` `SR` enum (same numbers; Mesa says `subgroup` where
//! applegpu says `simdgroup`). The class of each is what the name means in
//! Metal's kernel attribute table (a SIMD-group is 32 threads of one
//! threadgroup on one core) and what Mesa's NIR divergence analysis says of
//! the system value it reads (`nir_divergence_analysis.c`:
//! `load_workgroup_id`, `load_workgroup_size`, `load_subgroup_id` uniform;
//! `load_local_invocation_id`/`_index`, `load_subgroup_invocation`,
//! `load_global_invocation_id` divergent). Registers not listed, and listed
//! ones whose meaning is not documented, are divergent: the analysis never
//! guesses uniform.

/// Whether a special register is the same for the whole SIMD-group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrClass {
    Uniform,
    Divergent,
}

/// One row: number, applegpu name, class, why.
pub struct SrRow {
    pub number: u16,
    pub name: &'static str,
    pub class: SrClass,
    pub why: &'static str,
}

use SrClass::{Divergent as D, Uniform as U};

/// Every special register applegpu names, with its class.
pub static SPECIAL_REGS: &[SrRow] = &[
    SrRow {
        number: 0,
        name: "threadgroup_position_in_grid.x",
        class: U,
        why: "one threadgroup per SIMD-group (NIR load_workgroup_id: uniform)",
    },
    SrRow {
        number: 1,
        name: "threadgroup_position_in_grid.y",
        class: U,
        why: "one threadgroup per SIMD-group (NIR load_workgroup_id: uniform)",
    },
    SrRow {
        number: 2,
        name: "threadgroup_position_in_grid.z",
        class: U,
        why: "one threadgroup per SIMD-group (NIR load_workgroup_id: uniform)",
    },
    SrRow {
        number: 4,
        name: "threads_per_threadgroup.x",
        class: U,
        why: "dispatch constant (NIR load_workgroup_size: uniform)",
    },
    SrRow {
        number: 5,
        name: "threads_per_threadgroup.y",
        class: U,
        why: "dispatch constant (NIR load_workgroup_size: uniform)",
    },
    SrRow {
        number: 6,
        name: "threads_per_threadgroup.z",
        class: U,
        why: "dispatch constant (NIR load_workgroup_size: uniform)",
    },
    SrRow {
        number: 8,
        name: "dispatch_threads_per_threadgroup.x",
        class: U,
        why: "dispatch constant",
    },
    SrRow {
        number: 9,
        name: "dispatch_threads_per_threadgroup.y",
        class: U,
        why: "dispatch constant",
    },
    SrRow {
        number: 10,
        name: "dispatch_threads_per_threadgroup.z",
        class: U,
        why: "dispatch constant",
    },
    SrRow {
        number: 20,
        name: "core_index",
        class: U,
        why: "a SIMD-group runs on one core",
    },
    SrRow {
        number: 21,
        name: "vm_slot",
        class: D,
        why: "meaning undocumented: divergent by rule",
    },
    SrRow {
        number: 48,
        name: "thread_position_in_threadgroup.x",
        class: D,
        why: "per thread (NIR load_local_invocation_id: divergent)",
    },
    SrRow {
        number: 49,
        name: "thread_position_in_threadgroup.y",
        class: D,
        why: "per thread (NIR load_local_invocation_id: divergent)",
    },
    SrRow {
        number: 50,
        name: "thread_position_in_threadgroup.z",
        class: D,
        why: "per thread (NIR load_local_invocation_id: divergent)",
    },
    SrRow {
        number: 51,
        name: "thread_index_in_threadgroup",
        class: D,
        why: "per thread (NIR load_local_invocation_index: divergent)",
    },
    SrRow {
        number: 52,
        name: "thread_index_in_simdgroup",
        class: D,
        why: "lane number (NIR load_subgroup_invocation: divergent)",
    },
    SrRow {
        number: 53,
        name: "simdgroup_index_in_threadgroup",
        class: U,
        why: "one per SIMD-group (NIR load_subgroup_id: uniform)",
    },
    SrRow {
        number: 56,
        name: "active_thread_index_in_quadgroup",
        class: D,
        why: "per lane",
    },
    SrRow {
        number: 58,
        name: "active_thread_index_in_simdgroup",
        class: D,
        why: "per lane",
    },
    SrRow {
        number: 60,
        name: "internal_coverage_mask",
        class: D,
        why: "per pixel (fragment)",
    },
    SrRow {
        number: 62,
        name: "backfacing",
        class: D,
        why: "per primitive: a SIMD-group can span primitives (fragment)",
    },
    SrRow {
        number: 63,
        name: "is_active_thread",
        class: D,
        why: "per lane",
    },
    SrRow {
        number: 80,
        name: "thread_position_in_grid.x",
        class: D,
        why: "per thread (NIR load_global_invocation_id: divergent)",
    },
    SrRow {
        number: 81,
        name: "thread_position_in_grid.y",
        class: D,
        why: "per thread (NIR load_global_invocation_id: divergent)",
    },
    SrRow {
        number: 82,
        name: "thread_position_in_grid.z",
        class: D,
        why: "per thread (NIR load_global_invocation_id: divergent)",
    },
    SrRow {
        number: 124,
        name: "input_sample_mask",
        class: D,
        why: "per pixel (fragment)",
    },
    SrRow {
        number: 144,
        name: "opfifo_cmd",
        class: D,
        why: "meaning undocumented: divergent by rule",
    },
    SrRow {
        number: 146,
        name: "opfifo_data_l",
        class: D,
        why: "meaning undocumented: divergent by rule",
    },
    SrRow {
        number: 147,
        name: "opfifo_data_h",
        class: D,
        why: "meaning undocumented: divergent by rule",
    },
];

/// The row of special register `n`, if applegpu names it.
pub fn sr_row(n: u16) -> Option<&'static SrRow> {
    SPECIAL_REGS.iter().find(|r| r.number == n)
}

/// Class of special register `n` (unknown: divergent).
pub fn sr_class(n: u16) -> SrClass {
    sr_row(n).map_or(SrClass::Divergent, |r| r.class)
}

/// Name of special register `n` (`sr<n>` when unnamed).
pub fn sr_name(n: u16) -> String {
    sr_row(n).map_or_else(|| format!("sr{n}"), |r| r.name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table names exactly the registers applegpu names, with the same
    /// spelling.
    #[test]
    fn table_matches_applegpu_names() {
        let named: Vec<(u16, &str)> = agx_isa::forms::SR_NAMES
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.map(|n| (i as u16, n)))
            .collect();
        let ours: Vec<(u16, &str)> = SPECIAL_REGS.iter().map(|r| (r.number, r.name)).collect();
        assert_eq!(named, ours);
        assert_eq!(sr_class(80), SrClass::Divergent);
        assert_eq!(sr_class(0), SrClass::Uniform);
        assert_eq!(sr_class(53), SrClass::Uniform);
        assert_eq!(sr_class(3), SrClass::Divergent);
        assert_eq!(sr_class(9999), SrClass::Divergent);
    }
}
