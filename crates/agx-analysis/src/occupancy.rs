//! occupancy
