//! Support shared by every stage: the cancel handle, located problems in a user's file,
//! the transcript clip policy, and the editor schemas of the file formats.

pub mod cancel;
pub mod diag;
pub mod schema;
pub mod transcript;
