//! liveness
