//! Where chunks go (§4: "byte range or index+size, deterministically") and how a transfer
//! resumes (§4: "token or range restart rule").
//!
//! - A GET's range is half-open, `[start, end)`, and `end` 0 means "to the end" (proto3
//!   cannot tell an absent `end` from 0, and an empty range asks for nothing).
//! - With chunk size `C`, chunk `i` covers `[i*C, (i+1)*C)` of the artifact, cut to the
//!   range: indexes are global, so a transfer restarted at any offset produces the same
//!   index for the same octets, and `offset` = `max(i*C, start)`.
//! - A resume token names the point after a chunk. The library's own tokens are
//!   `r1.<next_index>.<next_offset>.<end>.<tag>`, `tag` being 8 hex digits of a SHA-256
//!   over the artifact id and the three numbers: stateless, so a sender can honour a token
//!   after a reconnect, and bound to the artifact, so a token for another one is refused.
//!   A receiver treats tokens as opaque.

use sha2::{Digest, Sha256};

/// A range outside the artifact (ARTIFACT-009).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// start at or past the end of the artifact.
    #[error("range start {start} is not below the artifact's size {total}")]
    StartPastEnd {
        /// The start.
        start: u64,
        /// The size.
        total: u64,
    },
    /// end past the end of the artifact.
    #[error("range end {end} exceeds the artifact's size {total}")]
    EndPastEnd {
        /// The end.
        end: u64,
        /// The size.
        total: u64,
    },
    /// end at or before start.
    #[error("range [{start}, {end}) is empty or inverted")]
    Empty {
        /// The start.
        start: u64,
        /// The end.
        end: u64,
    },
}

/// The range `[start, end)` a GET asks of an artifact of `total` octets.
pub fn resolve_range(total: u64, start: u64, end: u64) -> Result<(u64, u64), RangeError> {
    let end = if end == 0 { total } else { end };
    if start >= total {
        return Err(RangeError::StartPastEnd { start, total });
    }
    if end > total {
        return Err(RangeError::EndPastEnd { end, total });
    }
    if end <= start {
        return Err(RangeError::Empty { start, end });
    }
    Ok((start, end))
}

/// One chunk's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkSpec {
    /// Global index: offset / chunk size.
    pub index: u64,
    /// Offset of its first octet in the artifact.
    pub offset: u64,
    /// Its length.
    pub len: u64,
    /// Whether it ends the range.
    pub is_terminal: bool,
}

/// The chunk that starts at `offset` of a transfer ending at `end`, for chunk size `c`
/// (at least 1).
pub fn chunk_at(offset: u64, end: u64, c: u64) -> ChunkSpec {
    let c = c.max(1);
    let index = offset / c;
    let boundary = index.saturating_add(1).saturating_mul(c);
    let stop = boundary.min(end).max(offset);
    ChunkSpec {
        index,
        offset,
        len: stop - offset,
        is_terminal: stop >= end,
    }
}

/// The chunks covering `[start, end)` for chunk size `c`, in order.
pub fn plan(start: u64, end: u64, c: u64) -> impl Iterator<Item = ChunkSpec> {
    let mut next = Some(start).filter(|s| *s < end);
    std::iter::from_fn(move || {
        let at = next?;
        let spec = chunk_at(at, end, c);
        next = Some(at + spec.len).filter(|n| *n < end && spec.len > 0);
        Some(spec)
    })
}

/// Where a resumed transfer starts and ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResumePoint {
    /// The index of the next chunk.
    pub next_index: u64,
    /// The offset of the next octet.
    pub next_offset: u64,
    /// The end of the original range.
    pub end: u64,
}

fn tag(artifact_id: &str, p: &ResumePoint) -> String {
    let mut h = Sha256::new();
    h.update((artifact_id.len() as u64).to_le_bytes());
    h.update(artifact_id.as_bytes());
    for n in [p.next_index, p.next_offset, p.end] {
        h.update(n.to_le_bytes());
    }
    h.finalize()[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The library's token for resuming `artifact_id` at `p`.
pub fn resume_token(artifact_id: &str, p: &ResumePoint) -> String {
    format!(
        "r1.{}.{}.{}.{}",
        p.next_index,
        p.next_offset,
        p.end,
        tag(artifact_id, p)
    )
}

/// The resume point of one of the library's own tokens for `artifact_id`; `None` for any
/// other string (including a token of another artifact).
pub fn parse_resume_token(artifact_id: &str, token: &str) -> Option<ResumePoint> {
    let mut parts = token.split('.');
    if parts.next()? != "r1" {
        return None;
    }
    let mut num = || parts.next()?.parse::<u64>().ok();
    let p = ResumePoint {
        next_index: num()?,
        next_offset: num()?,
        end: num()?,
    };
    let t = parts.next()?;
    (parts.next().is_none() && p.next_offset < p.end && t == tag(artifact_id, &p)).then_some(p)
}
