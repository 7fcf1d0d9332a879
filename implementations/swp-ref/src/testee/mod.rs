//! The codec-method testee: protocol types, the reference's request handlers, and the
//! stdin/stdout serving loop.

pub mod proto;
pub mod reference;
pub mod serve;
pub mod translate;
