//! The session probe of a vector marked `sessions`: over Streamable HTTP, whether the server
//! keeps sessions at all, learnt from a session of the probe's own before the steps run.

use super::runner::Runner;
use crate::method::mcpnative::conv::{Chan, Conv, MAX_LINE_BYTES};
use crate::method::mcpnative::http::{Exchange, HttpClient, HttpEvent, Verb};
use crate::method::mcpnative::stop::Stop;
use crate::report::result::{Dir, NaCause};
use serde_json::json;
use std::time::{Duration, Instant};

/// How long the probe waits for the head of its `initialize` answer.
const PROBE_MS: u64 = 3000;

impl Runner<'_> {
    /// A vector marked `sessions` tests what a server knows of a client's session (that it
    /// initialised, for one). Over stdio the connection is the session. Over Streamable HTTP
    /// a server that assigns no `Mcp-Session-Id` cannot tell one client's request from
    /// another's, so such a vector is out of its scope by its own choice (MCP makes sessions
    /// optional): the probe opens a session of its own, on a connection of its own, reads
    /// whether an id came back, and ends it. A probe that learns nothing (no 2xx answer in
    /// time) leaves the vector to run as written, and says so in the transcript.
    pub(super) fn probe_sessions(&mut self, conv: &mut Conv<'_>) -> Result<(), Stop> {
        if !self.body.mcp.as_ref().is_some_and(|m| m.sessions) {
            return Ok(());
        }
        let Chan::Http(c) = &conv.chan else {
            return Ok(());
        };
        let mut probe = HttpClient::new(c.url().to_owned(), MAX_LINE_BYTES);
        let body = json!({
            "jsonrpc": "2.0",
            "id": "probe-sessions",
            "method": "initialize",
            "params": {
                "protocolVersion": self.spec.protocol_version,
                "capabilities": {},
                "clientInfo": Self::client_info(),
            },
        });
        let n = probe.start(Exchange {
            verb: Verb::Post,
            body: body.to_string().into_bytes(),
            session: None,
            protocol_version: None,
            headers: Vec::new(),
        });
        let deadline = Instant::now() + Duration::from_millis(PROBE_MS);
        let status = loop {
            match probe.next(deadline) {
                Some(HttpEvent::Head {
                    exchange, status, ..
                }) if exchange == n => break Some(status),
                Some(HttpEvent::Failed { exchange, .. }) if exchange == n => break None,
                Some(_) => continue,
                None => break None,
            }
        };
        match (status, probe.session()) {
            (Some(s), Some(id)) if (200..300).contains(&s) => {
                conv.log(
                    Dir::Note,
                    "probe: an initialize of the probe's own was given an Mcp-Session-Id (the server keeps sessions); the probe's session is ended",
                );
                // Ended so that a server with a cap on sessions is not left one short.
                probe.start(Exchange {
                    verb: Verb::Delete,
                    body: Vec::new(),
                    session: Some(id),
                    protocol_version: Some(self.spec.protocol_version.clone()),
                    headers: Vec::new(),
                });
                Ok(())
            }
            (Some(s), None) if (200..300).contains(&s) => Err(Stop::not_applicable(
                NaCause::SutChoice,
                format!(
                    "the server assigned no Mcp-Session-Id to an initialize (HTTP {s}): without sessions it cannot know whether a client initialised, which the vector tests"
                ),
            )),
            (s, _) => {
                let got = s.map_or_else(|| "no answer".to_owned(), |s| format!("HTTP {s}"));
                conv.log(
                    Dir::Note,
                    &format!("probe: an initialize of the probe's own got {got} within {PROBE_MS} ms, so whether the server keeps sessions is unknown; the vector runs as written"),
                );
                Ok(())
            }
        }
    }
}
