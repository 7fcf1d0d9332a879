//! The plan stage: which vectors run (`select`), what a manifest names for them
//! (`placeholders`, `expr`), and each vector made concrete for one SUT (`materialize`).

pub mod concrete;
pub mod expr;
pub mod features;
pub mod materialize;
pub mod placeholders;
pub mod select;
