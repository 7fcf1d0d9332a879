//! The tokio-util `Decoder`/`Encoder` pair: the I/O edge over the same framing and E1 core.

use crate::e1;
use crate::envelope::Envelope;
use crate::frame::{self, Split, PREFIX_LEN};
use crate::limits::Limits;
use crate::reject::CoreError;
use bytes::{Buf, BytesMut};

/// Framing failure or I/O failure at the edge.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The core rejected the input.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// The envelope does not fit a frame.
    #[error(transparent)]
    Encode(#[from] e1::EncodeError),
    /// The transport failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Frames in, E1 envelopes out (decoded, not yet policy-validated).
///
/// Only size and structure are checked here; an envelope-level reject is returned as an
/// item (`Ok(Some(Err(..)))`) so the stream goes on, while a framing error is an `Err`
/// that ends it.
#[derive(Debug, Clone, Copy, Default)]
pub struct SwpCodec {
    limits: Limits,
}

impl SwpCodec {
    /// A codec enforcing `limits`.
    pub fn new(limits: Limits) -> Self {
        SwpCodec { limits }
    }
}

impl tokio_util::codec::Decoder for SwpCodec {
    type Item = Result<Envelope, CoreError>;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, CodecError> {
        match frame::split(src, &self.limits)? {
            Split::Frame { body_len } => {
                src.advance(PREFIX_LEN);
                let body = src.split_to(body_len).freeze();
                Ok(Some(e1::decode_owned(body, &self.limits)))
            }
            // Deliberately no `src.reserve(need)`: the declared length is untrusted until
            // the octets arrive.
            Split::NeedMore { .. } => Ok(None),
        }
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, CodecError> {
        match self.decode(src)? {
            Some(item) => Ok(Some(item)),
            None => {
                frame::end_of_stream(src, &self.limits)?;
                Ok(None)
            }
        }
    }
}

impl tokio_util::codec::Encoder<&Envelope> for SwpCodec {
    type Error = CodecError;

    fn encode(&mut self, env: &Envelope, dst: &mut BytesMut) -> Result<(), CodecError> {
        dst.reserve(PREFIX_LEN + env.encoded_len());
        e1::encode_frame(env, dst)?;
        Ok(())
    }
}
