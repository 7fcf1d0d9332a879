//! `swp-conform`: the conformance harness for the SWP protocol family and MCP. It loads the
//! vector catalog and a SUT manifest, drives the SUT through a connector, judges what it
//! observes and reports per vector and per requirement (docs/architecture.md for the data flow).
#![forbid(unsafe_code)]

pub mod catalog;
pub mod cli;
pub mod connect;
pub mod evidence;
pub mod frames;
pub mod history;
pub mod load;
pub mod matrix;
pub mod method;
pub mod p1;
pub mod plan;
pub mod published;
pub mod report;
pub mod rules;
pub mod support;
pub mod sut;
