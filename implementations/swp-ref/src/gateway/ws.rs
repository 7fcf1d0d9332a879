//! A minimal sans-IO WebSocket (RFC 6455) server codec for the gateway's `/mcp` route: the
//! opening handshake's accept key, and frame decoding/encoding with bounded message size,
//! masking enforced on client frames, fragmentation, ping/pong and close.

use base64::Engine as _;
use sha1::{Digest, Sha1};

/// The GUID RFC 6455 §1.3 appends to the client's key.
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// The `Sec-WebSocket-Accept` value for a `Sec-WebSocket-Key`.
pub fn accept_key(key: &str) -> String {
    let mut h = Sha1::new();
    h.update(key.trim().as_bytes());
    h.update(GUID.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(h.finalize())
}

/// Frame opcodes.
pub mod opcode {
    /// Continuation.
    pub const CONTINUATION: u8 = 0x0;
    /// Text.
    pub const TEXT: u8 = 0x1;
    /// Binary.
    pub const BINARY: u8 = 0x2;
    /// Close.
    pub const CLOSE: u8 = 0x8;
    /// Ping.
    pub const PING: u8 = 0x9;
    /// Pong.
    pub const PONG: u8 = 0xA;
}

/// Close status codes the gateway sends.
pub mod close {
    /// Normal closure.
    pub const NORMAL: u16 = 1000;
    /// The server is going away (here: the connection sat idle too long).
    pub const GOING_AWAY: u16 = 1001;
    /// Protocol error.
    pub const PROTOCOL: u16 = 1002;
    /// Unsupported data (a binary message on a JSON-RPC route).
    pub const UNSUPPORTED: u16 = 1003;
    /// Invalid UTF-8 in a text message.
    pub const INVALID_DATA: u16 = 1007;
    /// Policy violation (here: a message that did not arrive in time).
    pub const POLICY: u16 = 1008;
    /// Message too big.
    pub const TOO_BIG: u16 = 1009;
    /// Try again later (here: the server's memory budget is spent).
    pub const TRY_AGAIN_LATER: u16 = 1013;
}

/// What the decoder produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A whole text message.
    Text(String),
    /// A ping with its payload (answer with a pong).
    Ping(Vec<u8>),
    /// A pong (ignored).
    Pong,
    /// The peer closes.
    Close,
}

/// A breach that ends the connection with a close code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("websocket close {code}: {reason}")]
pub struct WsError {
    /// The close code.
    pub code: u16,
    /// Why.
    pub reason: &'static str,
}

const fn err(code: u16, reason: &'static str) -> WsError {
    WsError { code, reason }
}

/// One decoded frame: fin, opcode, unmasked payload, octets used.
type Frame = (bool, u8, Vec<u8>, usize);

/// Reassembles client frames into messages.
#[derive(Debug)]
pub struct Decoder {
    max_message: usize,
    partial: Option<Vec<u8>>,
}

impl Decoder {
    /// A decoder refusing messages over `max_message` octets.
    pub fn new(max_message: usize) -> Self {
        Decoder {
            max_message,
            partial: None,
        }
    }

    /// Octets of a fragmented message held between calls.
    pub fn buffered(&self) -> usize {
        self.partial.as_ref().map_or(0, Vec::len)
    }

    /// Decodes one message from the front of `buf`, consuming the frames it used:
    /// `Ok(None)` when more octets are needed.
    pub fn decode(&mut self, buf: &mut Vec<u8>) -> Result<Option<Message>, WsError> {
        loop {
            let Some((fin, op, payload, used)) = self.frame(buf)? else {
                return Ok(None);
            };
            buf.drain(..used);
            match op {
                opcode::PING => return Ok(Some(Message::Ping(payload))),
                opcode::PONG => return Ok(Some(Message::Pong)),
                opcode::CLOSE => return Ok(Some(Message::Close)),
                opcode::BINARY => {
                    return Err(err(close::UNSUPPORTED, "binary messages are not JSON-RPC"))
                }
                opcode::TEXT | opcode::CONTINUATION => {
                    let mut data = match (op, self.partial.take()) {
                        (opcode::TEXT, None) => payload,
                        (opcode::CONTINUATION, Some(mut p)) => {
                            p.extend_from_slice(&payload);
                            p
                        }
                        (opcode::TEXT, Some(_)) => {
                            return Err(err(
                                close::PROTOCOL,
                                "a new message began inside a fragmented one",
                            ))
                        }
                        _ => {
                            return Err(err(
                                close::PROTOCOL,
                                "continuation frame outside a message",
                            ))
                        }
                    };
                    if data.len() > self.max_message {
                        return Err(err(close::TOO_BIG, "message too big"));
                    }
                    if !fin {
                        self.partial = Some(std::mem::take(&mut data));
                        continue;
                    }
                    return String::from_utf8(data)
                        .map(|s| Some(Message::Text(s)))
                        .map_err(|_| err(close::INVALID_DATA, "text message is not UTF-8"));
                }
                _ => return Err(err(close::PROTOCOL, "reserved opcode")),
            }
        }
    }

    /// One frame: (fin, opcode, unmasked payload, octets used).
    fn frame(&self, buf: &[u8]) -> Result<Option<Frame>, WsError> {
        if buf.len() < 2 {
            return Ok(None);
        }
        let (b0, b1) = (buf[0], buf[1]);
        if b0 & 0x70 != 0 {
            return Err(err(close::PROTOCOL, "reserved bits set"));
        }
        let fin = b0 & 0x80 != 0;
        let op = b0 & 0x0F;
        if b1 & 0x80 == 0 {
            return Err(err(close::PROTOCOL, "client frames must be masked"));
        }
        let (len, mut at) = match b1 & 0x7F {
            126 => {
                let Some(b) = buf.get(2..4) else {
                    return Ok(None);
                };
                (u64::from(u16::from_be_bytes([b[0], b[1]])), 4)
            }
            127 => {
                let Some(b) = buf.get(2..10) else {
                    return Ok(None);
                };
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                (u64::from_be_bytes(a), 10)
            }
            n => (u64::from(n), 2),
        };
        if op >= 0x8 && (len > 125 || !fin) {
            return Err(err(
                close::PROTOCOL,
                "control frames are short and unfragmented",
            ));
        }
        // Checked before anything is allocated from the announced length.
        let pending = self.partial.as_ref().map_or(0, Vec::len) as u64;
        if len.saturating_add(pending) > self.max_message as u64 {
            return Err(err(close::TOO_BIG, "message too big"));
        }
        let len = len as usize;
        let Some(mask) = buf.get(at..at + 4) else {
            return Ok(None);
        };
        let mask = [mask[0], mask[1], mask[2], mask[3]];
        at += 4;
        let Some(data) = buf.get(at..at + len) else {
            return Ok(None);
        };
        let payload = data
            .iter()
            .enumerate()
            .map(|(i, b)| b ^ mask[i % 4])
            .collect();
        Ok(Some((fin, op, payload, at + len)))
    }
}

/// An unmasked server frame.
pub fn encode(op: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 10);
    out.push(0x80 | op);
    match payload.len() {
        n if n < 126 => out.push(n as u8),
        n if n <= 0xFFFF => {
            out.push(126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
    out
}

/// A close frame with a code.
pub fn close_frame(code: u16, reason: &str) -> Vec<u8> {
    let mut p = code.to_be_bytes().to_vec();
    p.extend_from_slice(&reason.as_bytes()[..reason.len().min(120)]);
    encode(opcode::CLOSE, &p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(fin: bool, op: u8, payload: &[u8]) -> Vec<u8> {
        let mask = [1u8, 2, 3, 4];
        let mut f = vec![if fin { 0x80 } else { 0 } | op];
        match payload.len() {
            n if n < 126 => f.push(0x80 | n as u8),
            n => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
        }
        f.extend_from_slice(&mask);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        f
    }

    #[test]
    fn rfc_6455_accept_key() {
        assert_eq!(
            accept_key("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[test]
    fn frames_and_fragments() {
        let mut d = Decoder::new(1000);
        let mut buf = masked(false, opcode::TEXT, b"{\"a\":");
        buf.extend(masked(true, opcode::PING, b"p"));
        buf.extend(masked(true, opcode::CONTINUATION, &[b'1'; 200]));
        assert_eq!(d.decode(&mut buf), Ok(Some(Message::Ping(b"p".to_vec()))));
        match d.decode(&mut buf) {
            Ok(Some(Message::Text(t))) => assert_eq!(t.len(), 5 + 200),
            other => panic!("{other:?}"),
        }
        assert!(buf.is_empty());
        let mut half = masked(true, opcode::TEXT, b"hello");
        half.truncate(4);
        assert_eq!(d.decode(&mut half), Ok(None));
    }

    #[test]
    fn breaches_close() {
        let code = |frame: Vec<u8>| {
            Decoder::new(100)
                .decode(&mut frame.clone())
                .unwrap_err()
                .code
        };
        assert_eq!(
            code(vec![0x81, 0x05, b'h', b'e', b'l', b'l', b'o']),
            close::PROTOCOL
        );
        assert_eq!(code(masked(true, opcode::BINARY, b"x")), close::UNSUPPORTED);
        assert_eq!(
            code(masked(true, opcode::TEXT, &[b'x'; 101])),
            close::TOO_BIG
        );
        assert_eq!(
            code(masked(true, opcode::TEXT, &[0xff])),
            close::INVALID_DATA
        );
        assert_eq!(
            code(masked(true, opcode::CONTINUATION, b"x")),
            close::PROTOCOL
        );
        let mut huge = vec![0x81, 0x80 | 127];
        huge.extend_from_slice(&u64::MAX.to_be_bytes());
        assert_eq!(code(huge), close::TOO_BIG);
    }
}
