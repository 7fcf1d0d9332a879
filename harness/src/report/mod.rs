//! Reports (docs/architecture.md, the last arrows of the data flow): [`model`] is the one result document every
//! other part reads, assembled by [`build`]; [`analysis`] derives verdicts per requirement and class, baselines,
//! diffs and merges from it; [`render`] turns it into each output format. Nothing here runs
//! a vector.

pub mod analysis;
pub mod build;
pub mod lite;
pub mod model;
pub mod render;
pub mod result;

pub use render::{render_all, strip_run, write_all, RUN_BEGIN, RUN_END};
