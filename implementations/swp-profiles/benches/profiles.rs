//! Per-message cost of decode + state step for the SWP-* profiles (filled in below).
fn main() {}
