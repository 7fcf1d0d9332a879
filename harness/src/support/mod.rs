//! Support shared by every stage: the cancel handle, located problems in a user's file,
//! the transcript clip policy, the editor schemas of the file formats, and how values read
//! in report text.

pub mod cancel;
pub mod diag;
pub mod schema;
pub mod show;
pub mod transcript;
