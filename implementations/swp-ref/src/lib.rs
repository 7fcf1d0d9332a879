//! The SWP reference implementation as a library: the testee protocol (shared with the
//! harness, which drives it) and the reference's answers to testee requests.
#![forbid(unsafe_code)]

pub mod testee;
