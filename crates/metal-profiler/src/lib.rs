//! metal-profiler library: the pipeline behind the CLI and the Python module.
