//! The client side of the WebSocket transport gateways offer (`/mcp`, one JSON-RPC message
//! per text message), and the transport error type of every transport. Written here, not
//! shared with the reference gateway, so a bug in one side's framing is not cancelled by the
//! other's. Streamable HTTP is `super::http`.

use crate::connect::wire::{Recv, TcpWire, Wire};
use base64::Engine as _;
use sha1::{Digest, Sha1};
use std::time::{Duration, Instant};

/// The transport to an MCP server failed (connecting, framing, a broken peer); the
/// message says what happened in the protocol's terms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TransportError(pub String);

impl From<String> for TransportError {
    fn from(s: String) -> Self {
        TransportError(s)
    }
}

impl From<&str> for TransportError {
    fn from(s: &str) -> Self {
        TransportError(s.to_owned())
    }
}

/// Largest response head read.
const MAX_HEAD: usize = 16 * 1024;

/// One message the server sent, with the HTTP status it came with (HTTP only).
#[derive(Debug)]
pub struct Incoming {
    /// The JSON-RPC message.
    pub body: Vec<u8>,
    /// The HTTP status.
    pub status: Option<u16>,
}

/// What a read produced.
#[derive(Debug)]
pub enum Got {
    /// A message.
    Msg(Incoming),
    /// Nothing before the deadline.
    Timeout,
    /// The server closed or broke the connection; why.
    Closed(String),
}

/// A WebSocket client on `/mcp`.
pub struct WsChan {
    conn: TcpWire,
    buf: Vec<u8>,
    partial: Option<Vec<u8>>,
    max_message: usize,
    closed: Option<String>,
}

/// The fixed key the harness opens with (RFC 6455's own example): runs stay reproducible.
const WS_KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

/// The masking key of every client frame. RFC 6455 asks clients for unpredictable keys to
/// defeat proxy cache poisoning; a loopback test client has no proxy, and a fixed key keeps
/// transcripts reproducible.
const MASK: [u8; 4] = [0x5a, 0x17, 0xc3, 0x9e];

fn accept_for(key: &str) -> String {
    let mut h = Sha1::new();
    h.update(key.as_bytes());
    h.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    base64::engine::general_purpose::STANDARD.encode(h.finalize())
}

impl WsChan {
    /// Connects and performs the opening handshake before `deadline`.
    pub fn connect(
        addr: &str,
        max_message: usize,
        deadline: Instant,
    ) -> Result<Self, TransportError> {
        let mut conn = TcpWire::connect(addr, Duration::from_secs(5))
            .map_err(|e| format!("cannot connect to ws://{addr}/mcp: {e}"))?;
        let req = format!(
            "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {WS_KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        conn.send(req.as_bytes())
            .map_err(|e| format!("cannot send the upgrade: {e}"))?;
        let mut buf = Vec::new();
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            if buf.len() > MAX_HEAD {
                return Err(TransportError::from("an upgrade response head over 16 KiB"));
            }
            match conn.recv(deadline) {
                Recv::Data(d) => buf.extend_from_slice(&d),
                Recv::Timeout => {
                    return Err(TransportError::from("no answer to the WebSocket upgrade"))
                }
                Recv::Eof => {
                    return Err(TransportError::from(
                        "the server closed instead of upgrading",
                    ))
                }
                Recv::Broken(e) => {
                    return Err(TransportError::from(format!("upgrade failed: {e}")))
                }
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        if !head.starts_with("HTTP/1.1 101") {
            return Err(TransportError::from(format!(
                "the upgrade was refused: {}",
                head.lines().next().unwrap_or_default()
            )));
        }
        let accept = head.split("\r\n").find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("sec-websocket-accept")
                .then(|| v.trim().to_owned())
        });
        if accept.as_deref() != Some(accept_for(WS_KEY).as_str()) {
            return Err(TransportError::from(match accept {
                Some(a) => format!(
                    "a wrong Sec-WebSocket-Accept: {}",
                    crate::support::show::quoted(&a)
                ),
                None => "no Sec-WebSocket-Accept".to_owned(),
            }));
        }
        buf.drain(..end + 4);
        Ok(WsChan {
            conn,
            buf,
            partial: None,
            max_message,
            closed: None,
        })
    }

    fn frame(op: u8, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0x80 | op];
        match payload.len() {
            n if n < 126 => f.push(0x80 | n as u8),
            n if n <= 0xFFFF => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(0x80 | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        f.extend_from_slice(&MASK);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ MASK[i % 4]));
        f
    }

    /// Sends one text message.
    pub fn send(&mut self, text: &[u8]) -> Result<(), TransportError> {
        self.conn
            .send(&Self::frame(0x1, text))
            .map_err(|e| TransportError(format!("cannot send the WebSocket message: {e}")))
    }

    /// The next text message before `deadline`.
    pub fn next(&mut self, deadline: Instant) -> Got {
        loop {
            if let Some(c) = &self.closed {
                return Got::Closed(c.clone());
            }
            match self.parse() {
                Ok(Some(m)) => {
                    return Got::Msg(Incoming {
                        body: m,
                        status: None,
                    })
                }
                Ok(None) => {}
                Err(e) => {
                    self.closed = Some(e.0);
                    continue;
                }
            }
            match self.conn.recv(deadline) {
                Recv::Data(d) => self.buf.extend_from_slice(&d),
                Recv::Timeout => return Got::Timeout,
                Recv::Eof => self.closed = Some("the server closed the TCP connection".into()),
                Recv::Broken(e) => self.closed = Some(format!("reading failed: {e}")),
            }
        }
    }

    /// One complete text message from the buffer, answering pings on the way.
    fn parse(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        loop {
            if self.buf.len() < 2 {
                return Ok(None);
            }
            let (b0, b1) = (self.buf[0], self.buf[1]);
            if b1 & 0x80 != 0 {
                return Err(TransportError::from(
                    "the server masked a frame (RFC 6455 §5.1 forbids it)",
                ));
            }
            let (len, at) = match b1 & 0x7F {
                126 if self.buf.len() >= 4 => {
                    (u64::from(u16::from_be_bytes([self.buf[2], self.buf[3]])), 4)
                }
                127 if self.buf.len() >= 10 => {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(&self.buf[2..10]);
                    (u64::from_be_bytes(a), 10)
                }
                126 | 127 => return Ok(None),
                n => (u64::from(n), 2),
            };
            let pending = self.partial.as_ref().map_or(0, Vec::len) as u64;
            if len.saturating_add(pending) > self.max_message as u64 {
                return Err(TransportError::from(format!(
                    "a WebSocket message over {} octets",
                    self.max_message
                )));
            }
            let total = at + len as usize;
            if self.buf.len() < total {
                return Ok(None);
            }
            let payload: Vec<u8> = self.buf[at..total].to_vec();
            self.buf.drain(..total);
            let fin = b0 & 0x80 != 0;
            match b0 & 0x0F {
                0x9 => {
                    let _ = self.conn.send(&Self::frame(0xA, &payload));
                }
                0xA => {}
                0x8 => {
                    let code = payload.get(..2).map(|c| u16::from_be_bytes([c[0], c[1]]));
                    let reason =
                        String::from_utf8_lossy(payload.get(2..).unwrap_or_default()).into_owned();
                    let code = crate::support::show::or_nothing(code);
                    let reason = crate::support::show::quoted(&reason);
                    return Err(TransportError::from(format!(
                        "the server closed the WebSocket (code {code}, reason {reason})"
                    )));
                }
                0x1 | 0x0 => {
                    let mut data = match (b0 & 0x0F, self.partial.take()) {
                        (0x1, None) => payload,
                        (0x0, Some(mut p)) => {
                            p.extend_from_slice(&payload);
                            p
                        }
                        _ => {
                            return Err(TransportError::from(
                                "a broken fragment sequence from the server",
                            ))
                        }
                    };
                    if !fin {
                        self.partial = Some(std::mem::take(&mut data));
                        continue;
                    }
                    return Ok(Some(data));
                }
                op => {
                    return Err(TransportError::from(format!(
                        "a WebSocket frame with opcode {op:#x} (JSON-RPC travels in text frames)"
                    )))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_6455_example_accept() {
        assert_eq!(accept_for(WS_KEY), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }
}
