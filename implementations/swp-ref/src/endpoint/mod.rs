//! The sans-IO SWP endpoint: one connection's state machine (receive pipeline, the minimal
//! MCP mapping handler, the A2A agent, the SWP-* test agent, delayed responses, error
//! frames) that any I/O edge can drive.
//!
//! Nothing here reads a socket or a clock: the edge feeds octets and the time, and takes
//! back octets to write and the instruction to close. That keeps every protocol decision
//! unit-testable without sockets (see the tests in [`connection`]).

pub mod a2a;
pub mod agent;
pub mod authz;
pub mod conformance;
pub mod connection;
pub mod mcp;
pub mod progress;
pub mod reply;
pub mod script;
pub mod tools;

pub use connection::{
    Config, Connection, Fixtures, Notice, Output, DEFAULT_MAX_PENDING, DEFAULT_MAX_PENDING_BYTES,
};
pub use reply::Reject;

/// The profile this endpoint answers: the MCP mapping profile.
pub const PROFILE_MCP: u64 = 1;
/// The A2A profile: the endpoint acts as an A2A agent ([`a2a`]).
pub const PROFILE_A2A: u64 = 2;

/// Whether this endpoint registers a profile for `profile_id`: the MCP mapping, A2A, and
/// the SWP-* profiles of classes C3 and C4 ([`agent`]).
pub fn knows_profile(profile_id: u64) -> bool {
    profile_id == PROFILE_MCP || profile_id == PROFILE_A2A || agent::serves(profile_id)
}
