//! Server resource limits shared by `serve`, `relay` and `mcp-gateway`: the command-line
//! flags and their defaults ([`args`]), the connection table with its cap and idle-first
//! eviction ([`slots`]), the memory budget for buffered input ([`budget`]), and accepting
//! with back-off and socket options ([`accept`]). docs/reference-limits.md lists them all.
//!
//! The servers hold these limits at their I/O edge; the sans-IO protocol cores never see
//! sockets or clocks, only the octets the edge lets through.

pub mod accept;
pub mod args;
pub mod budget;
pub mod slots;

pub use args::{LimitArgs, RelayLimitArgs, ServerLimits};
pub use budget::{Budget, Charge, OverBudget};
pub use slots::{Admit, OnEvict, Slot, Slots};
