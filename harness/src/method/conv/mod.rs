//! The conversation core every driving method shares: where time comes from (a [`clock`]
//! the tests replace), the vector's deadlines, the run's cancel handle and the one
//! transcript with its clip policy ([`timeline`]), bounded in entries ([`transcript`]). The session, MCP-native and MCP-proxy
//! methods and the load mode's timing are built on it, so each judge can be tested on a
//! scripted peer against a virtual clock.

pub mod clock;
#[cfg(test)]
pub mod script;
pub mod timeline;
pub mod transcript;
