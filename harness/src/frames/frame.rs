//! Stream framing (core-spec §3): a 32-bit big-endian length N, then exactly N octets of
//! envelope body. Cutting a stream into bodies, and the incremental decoder that does it as
//! octets arrive without ever reserving memory from an N it has not seen the octets for.

use super::codes::ErrorCode;
use super::limits::{Limits, FRAME_PREFIX_BYTES};
use bytes::{Bytes, BytesMut};
use thiserror::Error;

/// Why a stream cannot be cut into frames. Each variant has exactly one canonical code
/// ([`FrameError::code`]). After any of them the frame boundary is lost: nothing after it
/// on the stream can be read as frames.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FrameError {
    /// N is zero (core-spec §3). `ERR_INVALID_FRAME`.
    #[error("frame length prefix is zero")]
    ZeroLength,
    /// N exceeds `MAX_FRAME_BYTES` (core-spec §3.1), decided from the prefix alone.
    /// `ERR_FRAME_TOO_LARGE`: error-codes.md §2 has this code for exactly this case, and
    /// core-spec §5 names it for size-bound framing failures.
    #[error("frame length {declared} exceeds MAX_FRAME_BYTES {max}")]
    TooLarge {
        /// N.
        declared: u32,
        /// The limit.
        max: u32,
    },
    /// The stream ended inside a length prefix. `ERR_INVALID_FRAME`.
    #[error("stream ended after {have} of 4 prefix octets")]
    TruncatedPrefix {
        /// Prefix octets that arrived.
        have: usize,
    },
    /// The stream ended before N body octets arrived. `ERR_INVALID_FRAME`.
    #[error("stream ended after {have} of {declared} body octets")]
    TruncatedBody {
        /// N.
        declared: u32,
        /// Body octets that arrived.
        have: usize,
    },
}

impl FrameError {
    /// The canonical code of this failure.
    pub const fn code(&self) -> ErrorCode {
        match self {
            FrameError::TooLarge { .. } => ErrorCode::FrameTooLarge,
            FrameError::ZeroLength
            | FrameError::TruncatedPrefix { .. }
            | FrameError::TruncatedBody { .. } => ErrorCode::InvalidFrame,
        }
    }
}

/// A body too long for a 32-bit length prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("a body of {0} octets does not fit a 32-bit length prefix")]
pub struct BodyTooLong(pub usize);

/// `body` with its length prefix. No limit is applied: the harness must be able to send
/// frames a receiver has to reject.
pub fn prefixed(body: &[u8]) -> Result<Bytes, BodyTooLong> {
    let n = u32::try_from(body.len()).map_err(|_| BodyTooLong(body.len()))?;
    let mut out = Vec::with_capacity(FRAME_PREFIX_BYTES + body.len());
    out.extend_from_slice(&n.to_be_bytes());
    out.extend_from_slice(body);
    Ok(Bytes::from(out))
}

/// Octets of a whole frame whose prefix says `n`; saturates where `usize` is narrower than
/// the prefix, which then simply never arrives in full.
fn frame_end(n: u32) -> usize {
    usize::try_from(n)
        .unwrap_or(usize::MAX)
        .saturating_add(FRAME_PREFIX_BYTES)
}

/// Reads N from the first four octets, checked against the limits.
fn length(buf: &[u8], limits: &Limits) -> Result<Option<u32>, FrameError> {
    let Some(prefix) = buf.first_chunk::<FRAME_PREFIX_BYTES>() else {
        return Ok(None);
    };
    let n = u32::from_be_bytes(*prefix);
    if n == 0 {
        return Err(FrameError::ZeroLength);
    }
    if n > limits.max_frame_bytes {
        return Err(FrameError::TooLarge {
            declared: n,
            max: limits.max_frame_bytes,
        });
    }
    Ok(Some(n))
}

/// The first frame of `buf`: its body and what follows it, both sharing `buf`'s storage.
/// `Ok(None)` when `buf` does not yet hold a whole frame (more octets may come); whether an
/// incomplete tail at the end of the stream is an error is [`end_of_stream`]'s call.
pub fn take_frame(buf: &Bytes, limits: &Limits) -> Result<Option<(Bytes, Bytes)>, FrameError> {
    let Some(n) = length(buf, limits)? else {
        return Ok(None);
    };
    let end = frame_end(n);
    if buf.len() < end {
        return Ok(None);
    }
    Ok(Some((buf.slice(FRAME_PREFIX_BYTES..end), buf.slice(end..))))
}

/// Judges the octets left over when the stream ends: none is a clean end; a frame cut short
/// is an error (core-spec §3: prefix not fully readable, fewer than N octets available).
/// Whole frames still in `rest` are stepped over: their bodies are not a framing matter.
pub fn end_of_stream(mut rest: &[u8], limits: &Limits) -> Result<(), FrameError> {
    while !rest.is_empty() {
        let Some(n) = length(rest, limits)? else {
            return Err(FrameError::TruncatedPrefix { have: rest.len() });
        };
        let end = frame_end(n);
        if rest.len() < end {
            return Err(FrameError::TruncatedBody {
                declared: n,
                have: rest.len() - FRAME_PREFIX_BYTES,
            });
        }
        rest = &rest[end..];
    }
    Ok(())
}

/// Cuts a stream into frame bodies as its octets arrive. The buffer only ever holds octets
/// that were fed: a prefix announcing N octets reserves nothing. After an error the decoder
/// is terminated and repeats that error.
#[derive(Debug)]
pub struct FrameDecoder {
    limits: Limits,
    buf: BytesMut,
    failed: Option<FrameError>,
}

impl FrameDecoder {
    /// A decoder enforcing `limits.max_frame_bytes`.
    pub fn new(limits: Limits) -> Self {
        FrameDecoder {
            limits,
            buf: BytesMut::new(),
            failed: None,
        }
    }

    /// Appends octets received from the stream.
    pub fn feed(&mut self, octets: &[u8]) {
        if self.failed.is_none() {
            self.buf.extend_from_slice(octets);
        }
    }

    /// The next whole frame body, `Ok(None)` until one has fully arrived.
    pub fn next_body(&mut self) -> Result<Option<Bytes>, FrameError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let end = match length(&self.buf, &self.limits) {
            Ok(Some(n)) => frame_end(n),
            Ok(None) => return Ok(None),
            Err(e) => {
                self.terminate(&e);
                return Err(e);
            }
        };
        if self.buf.len() < end {
            return Ok(None);
        }
        let mut frame = self.buf.split_to(end);
        Ok(Some(frame.split_off(FRAME_PREFIX_BYTES).freeze()))
    }

    /// Octets received but not yet returned as a body.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Called when the stream has ended: whether the octets still buffered are a frame cut
    /// short. Frames that did arrive whole must be taken with [`FrameDecoder::next_body`]
    /// first.
    pub fn finish(&mut self) -> Result<(), FrameError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = end_of_stream(&self.buf, &self.limits);
        if let Err(e) = &r {
            self.terminate(e);
        }
        r
    }

    fn terminate(&mut self, e: &FrameError) {
        self.failed = Some(e.clone());
        // The boundary is lost; keeping what was buffered would only hold memory.
        self.buf = BytesMut::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: u32) -> Limits {
        Limits {
            max_frame_bytes: max,
            ..Limits::default()
        }
    }

    #[test]
    fn the_prefix_is_big_endian() {
        assert_eq!(&prefixed(b"abc").unwrap()[..], b"\0\0\0\x03abc");
        assert_eq!(&prefixed(&[7; 258]).unwrap()[..4], &[0, 0, 1, 2]);
    }

    #[test]
    fn take_frame_waits_for_a_whole_frame_and_returns_the_rest() {
        let l = limits(16);
        let s = Bytes::from_static(b"\0\0\0\x02ab\0\0\0\x01c\0\0");
        let (b, rest) = take_frame(&s, &l).unwrap().unwrap();
        assert_eq!((&b[..], &rest[..]), (&b"ab"[..], &b"\0\0\0\x01c\0\0"[..]));
        let (b, rest) = take_frame(&rest, &l).unwrap().unwrap();
        assert_eq!((&b[..], &rest[..]), (&b"c"[..], &b"\0\0"[..]));
        assert_eq!(take_frame(&rest, &l), Ok(None));
        assert_eq!(
            take_frame(&Bytes::from_static(b"\0\0\0\x03ab"), &l),
            Ok(None)
        );
    }

    #[test]
    fn the_frame_limit_holds_at_exactly_n_and_fails_one_past_from_the_prefix_alone() {
        let l = limits(3);
        let at = Bytes::from_static(b"\0\0\0\x03abc");
        assert_eq!(take_frame(&at, &l).unwrap().unwrap().0, &b"abc"[..]);
        let over = Bytes::from_static(b"\0\0\0\x04");
        assert_eq!(
            take_frame(&over, &l),
            Err(FrameError::TooLarge {
                declared: 4,
                max: 3
            })
        );
        assert_eq!(
            take_frame(&over, &l).unwrap_err().code(),
            ErrorCode::FrameTooLarge
        );
        let huge = Bytes::from_static(&[0xff; 4]);
        assert_eq!(
            take_frame(&huge, &Limits::default()).unwrap_err().code(),
            ErrorCode::FrameTooLarge
        );
    }

    #[test]
    fn a_zero_length_prefix_is_an_invalid_frame() {
        let z = Bytes::from_static(b"\0\0\0\0rest");
        assert_eq!(take_frame(&z, &limits(8)), Err(FrameError::ZeroLength));
        assert_eq!(FrameError::ZeroLength.code(), ErrorCode::InvalidFrame);
    }

    #[test]
    fn a_stream_ending_inside_a_frame_is_an_invalid_frame() {
        let l = limits(8);
        assert_eq!(end_of_stream(b"", &l), Ok(()));
        for have in 1..4 {
            let e = end_of_stream(&b"\0\0\0\x02"[..have], &l).unwrap_err();
            assert_eq!(e, FrameError::TruncatedPrefix { have });
            assert_eq!(e.code(), ErrorCode::InvalidFrame);
        }
        for have in 0..2 {
            let s = &b"\0\0\0\x02ab"[..4 + have];
            let e = end_of_stream(s, &l).unwrap_err();
            assert_eq!(e, FrameError::TruncatedBody { declared: 2, have });
            assert_eq!(e.code(), ErrorCode::InvalidFrame);
        }
        assert_eq!(end_of_stream(b"\0\0\0\x02ab", &l), Ok(()));
        assert_eq!(
            end_of_stream(b"\0\0\0\x02ab\0\0\0\x02a", &l),
            Err(FrameError::TruncatedBody {
                declared: 2,
                have: 1
            })
        );
        assert_eq!(
            end_of_stream(b"\0\0\0\x09", &l).unwrap_err().code(),
            ErrorCode::FrameTooLarge
        );
    }

    #[test]
    fn the_decoder_yields_the_same_bodies_whatever_the_chunking() {
        let l = limits(300);
        let mut stream = Vec::new();
        let bodies: Vec<Vec<u8>> = (1..=5u8).map(|n| vec![n; n as usize * 50]).collect();
        for b in &bodies {
            stream.extend_from_slice(&prefixed(b).unwrap());
        }
        for chunk in [1, 3, 7, 64, stream.len()] {
            let mut d = FrameDecoder::new(l);
            let mut got = Vec::new();
            for c in stream.chunks(chunk) {
                d.feed(c);
                while let Some(b) = d.next_body().unwrap() {
                    got.push(b.to_vec());
                }
            }
            assert_eq!(got, bodies, "chunk {chunk}");
            assert_eq!(d.buffered(), 0);
            assert_eq!(d.finish(), Ok(()));
        }
    }

    #[test]
    fn a_large_announced_length_reserves_nothing() {
        let mut d = FrameDecoder::new(limits(u32::MAX));
        d.feed(&[0xff, 0xff, 0xff, 0xff, 1, 2, 3]);
        assert_eq!(d.next_body(), Ok(None));
        assert_eq!(d.buffered(), 7);
        // Capacity follows the octets fed, not the 4 GiB announced.
        assert!(d.buf.capacity() < 4096, "{}", d.buf.capacity());
        assert_eq!(
            d.finish(),
            Err(FrameError::TruncatedBody {
                declared: u32::MAX,
                have: 3
            })
        );
    }

    #[test]
    fn after_an_error_the_decoder_stays_terminated() {
        let mut d = FrameDecoder::new(limits(8));
        d.feed(b"\0\0\0\x02ab\0\0\0\0\0\0\0\x01c");
        assert_eq!(d.next_body().unwrap().unwrap(), &b"ab"[..]);
        assert_eq!(d.next_body(), Err(FrameError::ZeroLength));
        d.feed(b"\0\0\0\x01d");
        assert_eq!(d.next_body(), Err(FrameError::ZeroLength));
        assert_eq!(d.buffered(), 0);
        assert_eq!(d.finish(), Err(FrameError::ZeroLength));
    }
}
