//! The codec-method testee: the reference's answers to testee requests and the
//! stdin/stdout serving loop. The protocol itself is the `swp-testee-proto` crate.

pub mod reference;
pub mod serve;
pub mod translate;
