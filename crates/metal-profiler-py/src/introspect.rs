//! What the Python side reads from the CLI and the GPU models instead of
//! copying it (one source of truth): the command line's options (from
//! clap's `Command`, for the signature-drift test), the GPUs `gpu=` takes
//! and the chips `chip=` takes.

use metal_profiler::cli::Cli;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// Every option of `metal-profile` and of its subcommands, from clap's
/// `Command`: dicts of `command` ("" for the main command, else the
/// subcommand's name), `id` (clap's), `long` (`"trip-count"` or None),
/// `short` (`"f"` or None), `positional`, `takes_value`, `defaults` (the
/// default values clap shows) and `help`. `--help`/`--version` are left out.
#[pyfunction]
pub fn cli_options<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    use clap::CommandFactory;
    let main = Cli::command();
    let mut commands = vec![(String::new(), main.clone())];
    commands.extend(
        main.get_subcommands()
            .map(|c| (c.get_name().to_string(), c.clone())),
    );
    let out = PyList::empty(py);
    for (name, cmd) in commands {
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            let d = PyDict::new(py);
            d.set_item("command", &name)?;
            d.set_item("id", id)?;
            d.set_item("long", arg.get_long())?;
            d.set_item("short", arg.get_short().map(String::from))?;
            d.set_item("positional", arg.is_positional())?;
            d.set_item("takes_value", arg.get_action().takes_values())?;
            let defaults: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            d.set_item("defaults", defaults)?;
            d.set_item("help", arg.get_help().map(|h| h.to_string()))?;
            out.append(d)?;
        }
    }
    Ok(out)
}

/// The GPUs `gpu=` takes, lower case, with whether a timing model profiles
/// their code (`True`) or the untimed profile does (`False`).
#[pyfunction]
pub fn gpus() -> Vec<(String, bool)> {
    agx_container::GPUS
        .iter()
        .filter_map(|r| agx_analysis::gpu::model_of(r).map(|m| (r, m.timed())))
        .map(|(r, t)| (r.name.to_ascii_lowercase(), t))
        .collect()
}

/// The chips `chip=` takes (the CLI's `--chip`): the GPU models' DRAM
/// variants.
#[pyfunction]
pub fn chips() -> Vec<&'static str> {
    crate::options::chips()
}
