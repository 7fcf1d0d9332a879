//! The Streamable HTTP transport's decisions, sans-IO (MCP 2025-06-18 and 2025-11-25,
//! "Transports"): the session table (`Mcp-Session-Id` issued at initialize, checked on
//! every later request, ended by DELETE), the `MCP-Protocol-Version` header, what the
//! client's `Accept` allows, and the SSE and chunked encodings of a stream.

use super::route::Owner;
use std::collections::HashMap;

/// The protocol versions whose header value the gateway accepts. A request without the
/// header is taken as 2025-03-26, as the transport specification says; 2024-11-05 had no
/// Streamable HTTP transport at all.
pub const HEADER_VERSIONS: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];

/// Most live sessions; a new one past it ends the least recently used session that has no
/// server stream open.
pub const MAX_SESSIONS: usize = 1024;

/// Whether a request outside a session is served.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SessionMode {
    /// Every request but `initialize` needs the `Mcp-Session-Id` the initialize answer
    /// gave (400 without it, 404 for one that is not live).
    #[default]
    Required,
    /// Requests without the header are served outside any session (no server stream);
    /// requests with one are still checked.
    Optional,
}

/// One live session.
#[derive(Debug)]
pub struct Session {
    /// The client it stands for, in the router.
    pub owner: Owner,
    /// Whether its GET stream is open, and the signal that ends it.
    pub stream: Option<std::sync::Arc<tokio::sync::Notify>>,
    /// The protocol version its initialize agreed to (the envelope rules it is held to).
    pub version: Option<String>,
    last_used: u64,
}

/// The live sessions.
#[derive(Debug, Default)]
pub struct Sessions {
    map: HashMap<String, Session>,
    clock: u64,
}

/// Why a request's session header is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// The header is missing where the mode requires it (400).
    #[error("Bad Request: the Mcp-Session-Id header is required (send initialize first)")]
    Missing,
    /// The session is not live (404: the client must initialize again).
    #[error("Not Found: no live session has this Mcp-Session-Id")]
    Unknown,
}

impl SessionError {
    /// The HTTP status the transport specification asks for.
    pub fn status(self) -> u16 {
        match self {
            SessionError::Missing => 400,
            SessionError::Unknown => 404,
        }
    }
}

impl Sessions {
    /// Starts session `id` for `owner` at protocol `version`; returns the owner of a session
    /// ended to make room.
    pub fn create(&mut self, id: String, owner: Owner, version: Option<String>) -> Option<Owner> {
        let mut evicted = None;
        if self.map.len() >= MAX_SESSIONS {
            let oldest = self
                .map
                .iter()
                .filter(|(_, s)| s.stream.is_none())
                .min_by_key(|(_, s)| s.last_used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                evicted = self.map.remove(&k).map(|s| s.owner);
            }
        }
        self.clock += 1;
        self.map.insert(
            id,
            Session {
                owner,
                stream: None,
                version,
                last_used: self.clock,
            },
        );
        evicted
    }

    /// The live session `id`, marked used.
    pub fn get(&mut self, id: &str) -> Option<&mut Session> {
        self.clock += 1;
        let clock = self.clock;
        let s = self.map.get_mut(id)?;
        s.last_used = clock;
        Some(s)
    }

    /// Ends session `id`.
    pub fn remove(&mut self, id: &str) -> Option<Session> {
        self.map.remove(id)
    }

    /// How many sessions are live.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The owner and protocol version of the session a request names, or `None` for a
    /// request served outside any session (an initialize without the header, or any
    /// request in optional mode).
    pub fn admit(
        &mut self,
        mode: SessionMode,
        header: Option<&str>,
        initialize: bool,
    ) -> Result<Option<(Owner, Option<String>)>, SessionError> {
        match header {
            Some(id) => self
                .get(id)
                .map(|s| Some((s.owner, s.version.clone())))
                .ok_or(SessionError::Unknown),
            None if initialize || mode == SessionMode::Optional => Ok(None),
            None => Err(SessionError::Missing),
        }
    }
}

/// Checks the `MCP-Protocol-Version` header: absent, or one of [`HEADER_VERSIONS`]
/// (otherwise 400).
pub fn check_version<'a>(mut values: impl Iterator<Item = &'a str>) -> Result<(), String> {
    let Some(v) = values.next() else {
        return Ok(());
    };
    if values.next().is_some() {
        return Err("Bad Request: more than one MCP-Protocol-Version header".into());
    }
    if HEADER_VERSIONS.contains(&v) {
        Ok(())
    } else {
        Err(format!(
            "Bad Request: unsupported MCP-Protocol-Version {v:?} (supported: {})",
            HEADER_VERSIONS.join(", ")
        ))
    }
}

/// Whether an `Accept` header value admits `mime` (exactly, or by `type/*` or `*/*`,
/// unless its `q` is 0).
pub fn accepts<'a>(values: impl Iterator<Item = &'a str>, mime: &str) -> bool {
    let kind = mime.split('/').next().unwrap_or_default();
    values.flat_map(|v| v.split(',')).any(|range| {
        let mut parts = range.split(';').map(str::trim);
        let m = parts.next().unwrap_or_default().to_ascii_lowercase();
        let zero = parts.any(|p| {
            p.strip_prefix("q=")
                .and_then(|q| q.parse::<f32>().ok())
                .is_some_and(|q| q == 0.0)
        });
        !zero && (m == mime || m == format!("{kind}/*") || m == "*/*")
    })
}

/// The protocol version an initialize response agreed to.
pub fn agreed_version(response: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(response).ok()?;
    v.pointer("/result/protocolVersion")?
        .as_str()
        .map(str::to_owned)
}

/// The `method` of a JSON-RPC message, when it has a string one.
pub fn method_of(bytes: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    v.get("method")?.as_str().map(str::to_owned)
}

/// One SSE `message` event carrying a JSON-RPC message (each of its lines a `data:` line).
pub fn sse_event(json: &[u8]) -> Vec<u8> {
    let mut out = b"event: message\n".to_vec();
    for line in json.split(|b| *b == b'\n') {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line.strip_suffix(b"\r").unwrap_or(line));
        out.push(b'\n');
    }
    out.push(b'\n');
    out
}

/// One chunk of a chunked body (RFC 9112 §7.1); the empty chunk ends the body.
pub fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

/// A fresh session id: 128 random bits, hex (visible ASCII, as the transport requires).
pub fn new_session_id() -> Result<String, String> {
    let mut b = [0u8; 16];
    rustls::crypto::ring::default_provider()
        .secure_random
        .fill(&mut b)
        .map_err(|e| format!("no randomness for a session id: {e:?}"))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_issued_then_required() {
        let mut s = Sessions::default();
        let m = SessionMode::Required;
        assert_eq!(s.admit(m, None, true), Ok(None));
        assert_eq!(s.admit(m, None, false), Err(SessionError::Missing));
        assert_eq!(s.admit(SessionMode::Optional, None, false), Ok(None));
        assert_eq!(s.admit(m, Some("nope"), false), Err(SessionError::Unknown));
        assert_eq!(
            s.admit(SessionMode::Optional, Some("nope"), false),
            Err(SessionError::Unknown)
        );
        s.create("a".into(), 7, Some("2025-06-18".into()));
        assert_eq!(
            s.admit(m, Some("a"), false),
            Ok(Some((7, Some("2025-06-18".into()))))
        );
        assert!(s.remove("a").is_some());
        assert_eq!(
            s.admit(m, Some("a"), false).map_err(SessionError::status),
            Err(404)
        );
        assert_eq!(SessionError::Missing.status(), 400);
    }

    #[test]
    fn the_table_is_bounded_and_spares_open_streams() {
        let mut s = Sessions::default();
        for k in 0..MAX_SESSIONS {
            assert_eq!(s.create(format!("s{k}"), k as Owner, None), None);
        }
        s.get("s0").unwrap().stream = Some(Default::default());
        // s0 has a stream; s1 is the least recently used without one.
        assert_eq!(s.create("new".into(), 9999, None), Some(1));
        assert_eq!(s.len(), MAX_SESSIONS);
    }

    #[test]
    fn versions_and_accept() {
        assert!(check_version(std::iter::empty()).is_ok());
        assert!(check_version(["2025-06-18"].into_iter()).is_ok());
        assert!(check_version(["2025-03-26"].into_iter()).is_ok());
        assert!(check_version(["1999-01-01"].into_iter()).is_err());
        assert!(check_version(["2025-06-18", "2025-06-18"].into_iter()).is_err());
        let a = |v: &'static str, m: &str| accepts([v].into_iter(), m);
        assert!(a(
            "application/json, text/event-stream",
            "text/event-stream"
        ));
        assert!(a("text/*", "text/event-stream"));
        assert!(!a("application/json", "text/event-stream"));
        assert!(!a("text/event-stream;q=0", "text/event-stream"));
        assert!(a("*/*", "application/json"));
    }

    #[test]
    fn encodings() {
        assert_eq!(
            sse_event(b"{\n\"a\":1}"),
            b"event: message\ndata: {\ndata: \"a\":1}\n\n"
        );
        assert_eq!(chunk(b"hello world!!!!!"), b"10\r\nhello world!!!!!\r\n");
        let id = new_session_id().unwrap();
        assert_eq!(id.len(), 32);
        assert_ne!(id, new_session_id().unwrap());
    }
}
