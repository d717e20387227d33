//! cfg
