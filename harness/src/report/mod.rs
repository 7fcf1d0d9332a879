//! Reporters: each turns the one result model into one format. None of them runs anything.

pub mod console;
pub mod json;
