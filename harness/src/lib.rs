//! `swp-conform`: the conformance harness for the SWP protocol family and MCP. It loads the
//! vector catalog and a SUT manifest, drives the SUT through a connector, judges what it
//! observes and reports per vector and per requirement (docs/architecture.md for the data flow).
#![forbid(unsafe_code)]

pub mod cancel;
pub mod catalog;
pub mod class;
pub mod cli;
pub mod connect;
pub mod diag;
pub mod evaluate;
pub mod expr;
pub mod frames;
pub mod load;
pub mod materialize;
pub mod method;
pub mod model;
pub mod p1;
pub mod pb;
pub mod placeholders;
pub mod published;
pub mod report;
pub mod rules;
pub mod schema;
pub mod select;
pub mod sut;
pub mod trace;
pub mod transcript;
pub mod valid;
