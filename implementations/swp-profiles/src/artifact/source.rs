//! The sender's side of a transfer, deterministic so vectors can state exact outcomes: the
//! offer for some octets, a content-addressed id for them (the doc recommends one, §4), and
//! the chunks answering a GET, placed per [`super::chunking`], each but the last carrying
//! the library's resume token for the point after it.

use super::chunking::{
    parse_resume_token, plan, resolve_range, resume_token, RangeError, ResumePoint,
};
use super::hash::HashAlg;
use crate::p1::pb::artifact::{ArtChunk, ArtGet, ArtOffer};
use bytes::Bytes;
use swp_core::ErrorCode;

/// Why a GET cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServeError {
    /// A range outside the artifact (ARTIFACT-009).
    #[error("{0}")]
    InvalidRange(#[from] RangeError),
    /// A token the library did not issue for this artifact (ARTIFACT-011).
    #[error("resume token not issued for this artifact")]
    UnknownResumeToken,
}

impl ServeError {
    /// The canonical code.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::InvalidProfilePayload
    }

    /// The `ART_ERR.code` to answer with.
    pub fn reply_code(&self) -> &'static str {
        match self {
            ServeError::InvalidRange(_) => super::codes::INVALID_RANGE,
            ServeError::UnknownResumeToken => super::codes::INVALID_RESUME_TOKEN,
        }
    }
}

/// `<alg name>:<lower-case hex digest>`, e.g. `sha-256:9f86…`.
pub fn content_id(alg: HashAlg, data: &[u8]) -> String {
    let d = alg.digest(data);
    let mut s = String::with_capacity(alg.name().len() + 1 + d.len() * 2);
    s.push_str(alg.name());
    s.push(':');
    for b in d {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The offer of `data` as `artifact_id`.
pub fn offer(artifact_id: &str, data: &[u8], alg: HashAlg, metadata: Bytes) -> ArtOffer {
    ArtOffer {
        artifact_id: artifact_id.to_owned(),
        total_size: data.len() as u64,
        hash_alg: alg.name().to_owned(),
        hash: Bytes::from(alg.digest(data)),
        metadata,
    }
}

/// The chunks answering `g` for `data`, chunk size `chunk_size` (at least 1).
pub fn serve(
    artifact_id: &str,
    data: &Bytes,
    chunk_size: u64,
    g: &ArtGet,
) -> Result<Vec<ArtChunk>, ServeError> {
    let total = data.len() as u64;
    let (start, end) = if g.resume_token.is_empty() {
        resolve_range(total, g.start, g.end)?
    } else {
        let p = parse_resume_token(artifact_id, &g.resume_token)
            .ok_or(ServeError::UnknownResumeToken)?;
        if p.end > total {
            return Err(RangeError::EndPastEnd { end: p.end, total }.into());
        }
        (p.next_offset, p.end)
    };
    Ok(plan(start, end, chunk_size)
        .map(|spec| {
            // plan() keeps every chunk inside [start, end) ⊆ [0, total), so these fit usize.
            let from = usize::try_from(spec.offset).unwrap_or(usize::MAX);
            let to = usize::try_from(spec.offset + spec.len).unwrap_or(usize::MAX);
            let token = if spec.is_terminal {
                String::new()
            } else {
                resume_token(
                    artifact_id,
                    &ResumePoint {
                        next_index: spec.index + 1,
                        next_offset: spec.offset + spec.len,
                        end,
                    },
                )
            };
            ArtChunk {
                artifact_id: artifact_id.to_owned(),
                chunk_index: spec.index,
                offset: spec.offset,
                data: data.slice(from.min(data.len())..to.min(data.len())),
                is_terminal: spec.is_terminal,
                resume_token: token,
            }
        })
        .collect())
}
