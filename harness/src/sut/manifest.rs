//! The typed manifest: what [`check`](super::check) makes of a manifest file, a [`SutKind`]
//! carrying what its kind needs, so that no caller re-checks an `Option`. Apart from
//! `sut/mod.rs` (which loads a manifest) so that the checker and the connectors can name
//! these types without importing the loader.

use super::file::{Kind, Limits, McpNativeSpec, Policy, SessionSpec, Start};
use crate::catalog::class::Class;
use crate::catalog::vector::Method;

/// What the SUT claims.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Claims {
    /// The conformance class it claims, if any.
    pub class: Option<Class>,
    /// Profile IDs implemented.
    pub profiles: Vec<u64>,
}

/// How an endpoint is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// The harness starts it (for stdio, once per vector).
    Start(Start),
    /// It is already listening at `host:port`.
    Address(String),
}

/// What kind of SUT it is, with what that kind needs.
#[derive(Debug, Clone)]
pub enum SutKind {
    /// The reference implementation linked into the harness.
    Builtin,
    /// A process speaking the testee protocol.
    Testee {
        /// How to start it.
        start: Start,
    },
    /// An endpoint seen only through the wire (session method).
    Endpoint {
        /// How the session method reaches and reads it (boxed: by far the largest kind).
        session: Box<SessionSpec>,
        /// Started by the harness, or already listening.
        reach: Reach,
    },
    /// A plain MCP server or gateway (no SWP).
    McpServer {
        /// How to start it, once per vector.
        start: Start,
        /// How the mcp_native method talks to it.
        mcp_native: McpNativeSpec,
    },
    /// An MCP version-translating stdio proxy.
    McpProxy {
        /// How to start it, once per vector.
        start: Start,
    },
}

impl SutKind {
    /// The kind's name, as in the file.
    pub fn kind(&self) -> Kind {
        match self {
            SutKind::Builtin => Kind::Builtin,
            SutKind::Testee { .. } => Kind::Testee,
            SutKind::Endpoint { .. } => Kind::Endpoint,
            SutKind::McpServer { .. } => Kind::McpServer,
            SutKind::McpProxy { .. } => Kind::McpProxy,
        }
    }
}

/// A checked manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// Implementation name.
    pub name: String,
    /// Implementation version.
    pub version: String,
    /// What it is and how it is reached.
    pub kind: SutKind,
    /// Methods it supports.
    pub methods: Vec<Method>,
    /// What it claims.
    pub claims: Claims,
    /// The profile core vectors address when they need a known profile.
    pub core_profile_id: Option<u64>,
    /// How the SUT shapes P1 payloads.
    pub p1_payload: crate::p1::P1Form,
    /// `${NAME}` values for the JSON vectors send and expect.
    pub params: crate::plan::placeholders::Params,
    /// Limits.
    pub limits: Limits,
    /// Policies.
    pub policy: Policy,
}

/// What a runner built without the reference says when asked for it.
pub const NO_BUILTIN: &str = "this swp-conform was built without the built-in reference SUT (cargo feature `builtin-sut`); pass --sut MANIFEST";
