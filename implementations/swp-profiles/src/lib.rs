//! SWP profiles as sans-IO libraries: message classification, payload validation,
//! correlation and stream bookkeeping for each profile, with no sockets and no clocks, so
//! the reference endpoint, the MCP gateway and tests share one implementation of the rules.

#![forbid(unsafe_code)]

pub mod mcp;
