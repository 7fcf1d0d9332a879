//! SWP profiles as sans-IO libraries: message classification, payload validation,
//! correlation, lifecycle and stream bookkeeping for each profile, with no sockets and no
//! clocks, so the reference endpoint, the MCP gateway and tests share one implementation of
//! the rules. P1 (protobuf) payload schemas are compiled in and reflectable ([`p1`]).

#![forbid(unsafe_code)]

pub mod a2a;
pub mod mcp;
pub mod p1;
