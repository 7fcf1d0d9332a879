//! The steps of an `mcp_native` or `mcp_gateway` vector, run on a [`Conv`]: the session
//! actions (`open`, `request`, `pick`, `walk`, ...) with their `mcp` expectations, and the
//! plain `jsonrpc_line` steps with `response` / `no_response`. Each step is judged on its
//! own ([`super::record`]): a failing step does not stop the vector while the session is
//! usable, and a step that only gets the vector going (an `open` or `pick` before its own
//! steps) is set-up, whose answers are not the vector's matter.

mod check;
mod common;
mod content;
mod declared;
mod open;
mod pick;
mod probe;
mod resume;
mod runner;
mod session;

pub use common::json_matches;
#[cfg(test)]
pub(super) use common::{expect_no_response, expect_response};
pub(super) use declared::{no_tool_with, NO_TEMPLATE_VALUES};
pub(super) use runner::{Opened, Runner};
