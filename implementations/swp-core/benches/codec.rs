//! Placeholder bench, replaced by the criterion suite.
fn main() {}
