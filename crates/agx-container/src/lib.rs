//! agx-container
