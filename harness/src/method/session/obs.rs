//! What the session method observes on a connection: a frame, an error frame, the
//! connection ending, output that is not framing, a profile's own refusal.

use crate::frames::Envelope;
use bytes::Bytes;

/// What the harness saw on the connection.
#[derive(Debug, Clone)]
pub enum Obs {
    /// An error frame carrying a code; the frame itself, for reply expectations.
    Error {
        /// The code it carries.
        code: String,
        /// Its msg_id.
        msg_id: Bytes,
        /// The frame.
        frame: Box<Envelope>,
    },
    /// Any other frame.
    Reply(Envelope),
    /// The connection ended (EOF, reset, TLS alert); the reason.
    Closed(String),
    /// The SUT sent octets that are not a valid frame.
    Garbage(String),
    /// A profile's own error message refusing a frame, whose code is not a canonical one
    /// (made by the reject judge under `reject_signal.profile_errors`, never by `next`).
    Refused(String),
}

impl Obs {
    /// A few words for messages.
    pub fn short(&self) -> String {
        match self {
            Obs::Error { code, .. } => format!("error frame {code}"),
            Obs::Reply(e) => format!("frame profile_id={} msg_type={}", e.profile_id, e.msg_type),
            Obs::Closed(w) => format!("connection {w}"),
            Obs::Garbage(g) => g.clone(),
            Obs::Refused(r) => r.clone(),
        }
    }
}

/// A msg_id for messages: quoted text when it is printable ASCII (the harness's own are),
/// else `hex:` and its octets; cut at 48 octets, since the SUT chose it.
pub fn show_id(id: &[u8]) -> String {
    const MAX: usize = 48;
    let cut = id.get(..MAX).unwrap_or(id);
    let mut s = if !cut.is_empty() && cut.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        format!("\"{}\"", String::from_utf8_lossy(cut))
    } else {
        format!("hex:{}", hex::encode(cut))
    };
    if id.len() > MAX {
        s.push('…');
    }
    s
}
