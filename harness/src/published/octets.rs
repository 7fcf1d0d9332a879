//! What a fixture's octets are, read with the harness's own codec (`crate::frames`, never
//! swp-core): where a receiver must decide (on the chunk, or only when the stream ends), the
//! fault the codec finds under the limits the fixture assumes, and the sizes and header
//! values its body carries, as far as they decode.

use crate::frames::limits::FRAME_PREFIX_BYTES;
use crate::frames::{e1, frame, uvarint, DecodeError, Envelope, ErrorCode, FrameError, Limits};
use bytes::Bytes;

/// What the codec makes of the octets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The stream cannot be cut into a frame.
    Frame(FrameError),
    /// The one frame's body is no acceptable envelope.
    Decode(DecodeError),
    /// The one frame decodes.
    Decoded(Box<Envelope>),
}

impl Finding {
    /// The canonical code of the fault, if there is one.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Finding::Frame(e) => Some(e.code()),
            Finding::Decode(e) => Some(e.code()),
            Finding::Decoded(_) => None,
        }
    }
}

pub use crate::catalog::receiver::Header;

/// A fixture's octets, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// The receiver can decide only at end of stream: the octets end inside a frame.
    pub at_end: bool,
    /// The frame's body is all there.
    pub complete: bool,
    /// The codec's finding.
    pub finding: Finding,
    /// What the body carries.
    pub header: Header,
}

/// Why the octets are not one fixture frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// More than one frame, or octets after the frame: published fixtures are one frame.
    #[error("{0} octet(s) follow the first frame; a published fixture is one frame")]
    Trailing(usize),
}

/// Reads `octets` under `limits` (the limits the fixture assumes).
pub fn read(octets: &Bytes, limits: &Limits) -> Result<Reading, ShapeError> {
    let mut header = walk(octets);
    match frame::take_frame(octets, limits) {
        // A zero or oversized prefix: decided from the prefix, as the octets arrive.
        Err(e) => Ok(Reading {
            at_end: false,
            complete: false,
            finding: Finding::Frame(e),
            header,
        }),
        Ok(None) => {
            // The stream ends inside the frame: only the end can show the fault.
            let e = frame::end_of_stream(octets, limits)
                .err()
                .unwrap_or(FrameError::TruncatedPrefix { have: octets.len() });
            Ok(Reading {
                at_end: true,
                complete: false,
                finding: Finding::Frame(e),
                header,
            })
        }
        Ok(Some((body, rest))) => {
            if !rest.is_empty() {
                return Err(ShapeError::Trailing(rest.len()));
            }
            header.frame = Some(body.len() as u64);
            Ok(Reading {
                at_end: false,
                complete: true,
                finding: match e1::decode(&body, limits) {
                    Ok(env) => Finding::Decoded(Box::new(env)),
                    Err(e) => Finding::Decode(e),
                },
                header,
            })
        }
    }
}

/// The header fields in E1 order (E1 §3), until one does not decode or the octets end.
fn walk(octets: &[u8]) -> Header {
    let mut h = Header::default();
    let Some(prefix) = octets.first_chunk::<FRAME_PREFIX_BYTES>() else {
        return h;
    };
    let n = u32::from_be_bytes(*prefix);
    h.frame = Some(u64::from(n));
    let end = octets
        .len()
        .min(FRAME_PREFIX_BYTES.saturating_add(usize::try_from(n).unwrap_or(usize::MAX)));
    let mut body = octets.get(FRAME_PREFIX_BYTES..end).unwrap_or_default();
    let mut next = || -> Option<u64> {
        let (v, used) = uvarint::decode(body).ok()?;
        body = body.get(used..)?;
        Some(v)
    };
    h.version = next();
    h.profile_id = h.version.and(next());
    h.msg_type = h.profile_id.and(next());
    let flags = h.msg_type.and(next());
    h.ts_unix_ms = flags.and(next());
    let mut field = |have: bool| -> Option<u64> {
        if !have {
            return None;
        }
        let (len, used) = uvarint::decode(body).ok()?;
        body = body.get(used..)?;
        // Skip the field's octets (fewer may be there; the size is what was declared).
        let take = usize::try_from(len).unwrap_or(usize::MAX).min(body.len());
        body = &body[take..];
        Some(len)
    };
    h.msg_id = field(h.ts_unix_ms.is_some());
    h.ext = field(h.msg_id.is_some());
    h.payload = field(h.ext.is_some());
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_of(body: &[u8]) -> Bytes {
        let mut f = (body.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(body);
        Bytes::from(f)
    }

    #[test]
    fn where_the_receiver_decides() {
        let l = Limits::default();
        let zero = read(&Bytes::from_static(&[0, 0, 0, 0]), &l).unwrap();
        assert!(!zero.at_end && zero.finding.code() == Some(ErrorCode::InvalidFrame));
        let short = read(&Bytes::from_static(&[0, 0]), &l).unwrap();
        assert!(short.at_end && short.finding.code() == Some(ErrorCode::InvalidFrame));
        let cut = read(&Bytes::from_static(&[0, 0, 0, 10, 1, 2, 3]), &l).unwrap();
        assert!(cut.at_end && cut.header.version == Some(1));
        let big = read(&Bytes::from_static(&[0, 0x80, 0, 1]), &l).unwrap();
        assert!(!big.at_end && big.finding.code() == Some(ErrorCode::FrameTooLarge));
        // version 1, profile 1, msg_type 1, flags 0, ts 5, msg_id of 4, no extensions,
        // payload of 1: a msg_id under the minimum, found with every size.
        let body = [1, 1, 1, 0, 5, 4, 9, 9, 9, 9, 0, 1, 0x61];
        let r = read(&frame_of(&body), &l).unwrap();
        assert!(r.complete && r.finding.code() == Some(ErrorCode::MsgIdInvalid));
        assert_eq!(
            r.header,
            Header {
                frame: Some(13),
                version: Some(1),
                profile_id: Some(1),
                msg_type: Some(1),
                ts_unix_ms: Some(5),
                msg_id: Some(4),
                ext: Some(0),
                payload: Some(1),
            }
        );
        let mut two = frame_of(&body).to_vec();
        two.extend_from_slice(&frame_of(&body));
        assert_eq!(read(&Bytes::from(two), &l), Err(ShapeError::Trailing(17)));
    }
}
