//! metal-compile
