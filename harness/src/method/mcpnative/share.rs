//! Shared sessions: which vectors may run on a session an earlier vector opened, and the
//! server process and session kept between them. A client uses one session for many
//! requests; starting a server afresh for each vector made a run of a Python server mostly
//! interpreter start-ups. A vector takes a shared session only when nothing in it depends
//! on the session being new, and a session is passed on only when the vector left it as a
//! client would find it: open, nothing waiting for an answer, nothing unread.

use super::conv::Chan;
use super::judge::Peer;
use super::steps::Opened;
use crate::catalog::mcpnative::McpStep;
use crate::catalog::vector::{JsonRpcBody, JsonRpcStep, Method};
use crate::connect::process::Supervised;
use crate::sut::McpNativeSpec;
use std::path::PathBuf;

/// A server process and the open session a vector left for the next.
pub(super) struct Shared {
    pub proc: Supervised,
    pub chan: Chan,
    /// Octets read and not yet a whole line.
    pub buf: Vec<u8>,
    pub peer: Peer,
    pub opened: Opened,
    /// The next request id: ids are never reused within a session.
    pub next_id: i64,
    /// Where the process writes its stderr (the log of the vector that started it).
    pub log: PathBuf,
}

/// A Streamable HTTP server with no session of the harness's open on it.
pub(super) struct Idle {
    pub proc: Supervised,
    /// The endpoint.
    pub url: String,
    /// Where the process writes its stderr (the log of the vector that started it).
    pub log: PathBuf,
}

/// Whether a vector of body `b` may open its session on a Streamable HTTP server an earlier
/// vector left running: an `mcp_native` vector over HTTP, sharing switched on, without
/// `fresh` (a vector that changes what the server does may change it beyond its session,
/// for a server that keeps a log level or subscriptions per process).
pub(super) fn reuses_process(b: &JsonRpcBody, spec: &McpNativeSpec, method: Method) -> bool {
    method == Method::McpNative
        && spec.share_session
        && spec.transport == crate::sut::McpTransport::Http
        && !b.mcp.as_ref().is_some_and(|m| m.fresh)
}

/// Whether a vector of body `b` may run on a shared session: an `mcp_native` vector (gateways keep one
/// process per vector), at a session-era version, without `fresh`, declaring the default
/// client capabilities, whose first step opens a plain session with no expectation of its
/// own and whose other steps only send requests and notifications (no raw line, HTTP
/// exchange or closed stdin, which are about the transport or the session's start).
pub(super) fn shares(b: &JsonRpcBody, spec: &McpNativeSpec, method: Method) -> bool {
    if method != Method::McpNative
        || !spec.share_session
        || super::schema::is_stateless(&spec.protocol_version)
    {
        return false;
    }
    if let Some(m) = &b.mcp {
        if m.fresh
            || m.client_capabilities
                .as_ref()
                .is_some_and(|c| c.as_object().is_none_or(|o| !o.is_empty()))
        {
            return false;
        }
    }
    let Some((first, rest)) = b.steps.split_first() else {
        return false;
    };
    let plain_open = matches!(&first.mcp, Some(McpStep::Open(o)) if o.version.is_none() && o.initialized)
        && first.expect.as_slice().is_empty();
    plain_open
        && plain(first)
        && rest.iter().all(|s| {
            plain(s)
                && matches!(
                    s.mcp,
                    Some(
                        McpStep::Request(_)
                            | McpStep::Notify(_)
                            | McpStep::Pick(_)
                            | McpStep::Walk(_)
                            | McpStep::CallTools(_)
                            | McpStep::Await
                    )
                )
        })
}

/// A step that is only its `mcp` action: no raw send, no connection handling, no timing.
fn plain(s: &JsonRpcStep) -> bool {
    s.send.is_none()
        && !s.end
        && !s.second_connection
        && s.side.is_none()
        && s.repeat.is_none()
        && s.at_ms.is_none()
}
