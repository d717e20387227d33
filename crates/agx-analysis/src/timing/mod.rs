//! timing model
