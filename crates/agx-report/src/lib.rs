//! agx-report
