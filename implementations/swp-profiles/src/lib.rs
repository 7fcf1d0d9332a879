//! SWP profiles as sans-IO libraries: message classification, payload validation,
//! correlation, lifecycle and stream bookkeeping for each profile, with no sockets and no
//! clocks (time is passed in), so the reference endpoint, the codec testee, the harness and
//! tests share one implementation of the rules. P1 (protobuf) payload schemas are compiled
//! in and reflectable ([`p1`]); the SWP-* profiles of classes C3 and C4 ([`rpc`],
//! [`events`], [`obs`], [`artifact`], [`state`]) decode either P1 form ([`P1Form`]) and are
//! reachable behind one call in [`channel`] (docs/profiles.md).

#![forbid(unsafe_code)]

pub mod a2a;
pub mod agdisc;
pub mod artifact;
pub mod bounded;
pub mod channel;
pub mod cred;
pub mod events;
#[doc(hidden)]
pub mod fuzzing;
pub mod mcp;
pub mod obs;
pub mod p1;
pub mod payload;
pub mod policyhint;
pub mod relay;
pub mod rpc;
pub mod state;
pub mod tooldisc;

pub use p1::P1Form;
