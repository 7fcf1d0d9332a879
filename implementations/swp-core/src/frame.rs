//! Stream framing (core-spec §3): a 4-octet big-endian length prefix, then `N` octets.
//!
//! [`split`] is the pure boundary finder shared by the incremental [`FrameDecoder`] and the
//! tokio-util codec. Neither reserves memory for a declared length: the buffer only ever
//! holds octets that have actually arrived.

use crate::limits::Limits;
use crate::reject::CoreError;
use bytes::{Buf, Bytes, BytesMut};

/// Length of the frame prefix.
pub const PREFIX_LEN: usize = 4;

/// What the front of a buffer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// A whole frame: its body is `buf[4..4 + body_len]`.
    Frame {
        /// The body length `N`.
        body_len: usize,
    },
    /// Not enough octets yet; `have` of `need` octets of the current unit have arrived.
    NeedMore {
        /// Octets the current frame needs in total (prefix included), once known.
        need: Option<usize>,
    },
}

/// Finds the first frame boundary in `buf`, rejecting a zero or oversized prefix as soon as
/// the prefix is readable (the body is never waited for).
#[inline]
pub fn split(buf: &[u8], limits: &Limits) -> Result<Split, CoreError> {
    let Some(prefix) = buf.first_chunk::<PREFIX_LEN>() else {
        return Ok(Split::NeedMore { need: None });
    };
    let n = u32::from_be_bytes(*prefix);
    if n == 0 {
        return Err(CoreError::ZeroLength);
    }
    if n > limits.max_frame_bytes {
        return Err(CoreError::FrameTooLarge {
            len: n,
            max: limits.max_frame_bytes,
        });
    }
    let body_len = n as usize;
    if buf.len() - PREFIX_LEN < body_len {
        return Ok(Split::NeedMore {
            need: Some(PREFIX_LEN + body_len),
        });
    }
    Ok(Split::Frame { body_len })
}

/// The error for a stream that ended with `buf` still holding part of a frame, if any.
///
/// Whole frames the caller has not drained yet are not a truncation and are skipped, so a
/// partial frame behind them is still reported.
pub fn end_of_stream(mut buf: &[u8], limits: &Limits) -> Result<(), CoreError> {
    loop {
        match split(buf, limits)? {
            _ if buf.is_empty() => return Ok(()),
            Split::NeedMore { need: None } => {
                return Err(CoreError::TruncatedPrefix { have: buf.len() })
            }
            Split::NeedMore { need: Some(need) } => {
                return Err(CoreError::TruncatedBody {
                    have: buf.len() - PREFIX_LEN,
                    need: need - PREFIX_LEN,
                })
            }
            Split::Frame { body_len } => buf = &buf[PREFIX_LEN + body_len..],
        }
    }
}

/// Takes the first whole frame body from a buffer already held in memory, without copying.
/// Returns the body and the octets after it, or `Ok(None)` when the buffer ends mid-frame.
#[inline]
pub fn take_frame(buf: &Bytes, limits: &Limits) -> Result<Option<(Bytes, Bytes)>, CoreError> {
    match split(buf, limits)? {
        Split::Frame { body_len } => {
            let end = PREFIX_LEN + body_len;
            Ok(Some((buf.slice(PREFIX_LEN..end), buf.slice(end..))))
        }
        Split::NeedMore { .. } => Ok(None),
    }
}

/// Incremental, sans-IO frame decoder: feed octets as they arrive, take bodies as they
/// complete, and call [`FrameDecoder::finish`] at end of stream.
///
/// After any framing error the decoder is terminated: the frame boundary is lost, so
/// every later call reports [`CoreError::Terminated`].
#[derive(Debug)]
pub struct FrameDecoder {
    limits: Limits,
    buf: BytesMut,
    terminated: bool,
}

impl FrameDecoder {
    /// A decoder enforcing `limits`.
    pub fn new(limits: Limits) -> Self {
        FrameDecoder {
            limits,
            buf: BytesMut::new(),
            terminated: false,
        }
    }

    /// Appends octets that arrived.
    pub fn feed(&mut self, data: &[u8]) {
        if !self.terminated {
            self.buf.extend_from_slice(data);
        }
    }

    /// Octets buffered and not yet returned as frames.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Whether a framing error ended the stream.
    pub fn is_terminated(&self) -> bool {
        self.terminated
    }

    /// The next complete frame body, `Ok(None)` when more octets are needed.
    pub fn next_body(&mut self) -> Result<Option<Bytes>, CoreError> {
        if self.terminated {
            return Err(CoreError::Terminated);
        }
        match split(&self.buf, &self.limits) {
            Ok(Split::Frame { body_len }) => {
                self.buf.advance(PREFIX_LEN);
                Ok(Some(self.buf.split_to(body_len).freeze()))
            }
            Ok(Split::NeedMore { .. }) => Ok(None),
            Err(e) => {
                self.terminate();
                Err(e)
            }
        }
    }

    /// End of stream: an error when it ended inside a frame (prefix or body).
    pub fn finish(&mut self) -> Result<(), CoreError> {
        if self.terminated {
            return Ok(());
        }
        let r = end_of_stream(&self.buf, &self.limits);
        self.terminate();
        r
    }

    fn terminate(&mut self) {
        self.terminated = true;
        self.buf = BytesMut::new();
    }
}
