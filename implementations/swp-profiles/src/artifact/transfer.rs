//! The transfers of one SWP-ARTIFACT channel, keyed by `(scope, artifact_id)`: an offer
//! states size and hash (ARTIFACT-002, ARTIFACT-003); a GET opens a transfer of a range or
//! resumes one by token; chunks must then arrive in order, contiguous, inside the range,
//! placed per [`super::chunking`] when the chunk size is declared, the last one flagged
//! (ARTIFACT-004, ARTIFACT-008, ARTIFACT-009); the octets received from offset 0 on are
//! hashed as they come, and when they reach the offered size the digest must match the
//! offered hash (ARTIFACT-006, ARTIFACT-010).
//!
//! The schema has no per-chunk digest, so integrity is verified for the whole artifact;
//! a transfer of a range that does not, with what came before it, cover the artifact from
//! offset 0 ends unverified ([`Seen::Complete`] says so).
//!
//! The machine judges a channel: an endpoint feeds what it receives and sends, so it works
//! for either role (the sender offering and chunking, the receiver getting and checking),
//! and a harness judges what an endpoint emits. A refused message changes nothing, except
//! that an integrity mismatch ends its transfer. `scope` is the peer's identity or empty.

use super::chunking::{chunk_at, parse_resume_token, resolve_range, RangeError, ResumePoint};
use super::hash::{HashAlg, Hasher};
use super::message::ArtifactMessage;
use crate::bounded::Bounded;
use crate::p1::pb::artifact::{ArtAck, ArtChunk, ArtGet, ArtOffer};
use crate::payload::shown;
use crate::profile::{profile_codec, Ctx, Profile, WireError};
use bytes::Bytes;
use swp_core::ErrorCode;

/// Default bound on artifacts tracked per channel.
pub const DEFAULT_MAX_ARTIFACTS: usize = 256;
/// Default bound on resume tokens remembered per channel.
pub const DEFAULT_MAX_TOKENS: usize = 1024;
/// Default largest chunk accepted.
pub const DEFAULT_MAX_CHUNK_BYTES: u64 = 1 << 20;

/// The implementation-defined parts of the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Hash algorithms accepted in an offer.
    pub hash_algs: Vec<HashAlg>,
    /// The sender's chunk size, when declared: chunk placement is then judged exactly.
    pub chunk_size: Option<u64>,
    /// Largest chunk accepted.
    pub max_chunk_bytes: u64,
    /// Artifacts tracked; those with no transfer in progress are forgotten first.
    pub max_artifacts: usize,
    /// Resume tokens remembered; the oldest is forgotten first.
    pub max_tokens: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            hash_algs: HashAlg::ALL.to_vec(),
            chunk_size: None,
            max_chunk_bytes: DEFAULT_MAX_CHUNK_BYTES,
            max_artifacts: DEFAULT_MAX_ARTIFACTS,
            max_tokens: DEFAULT_MAX_TOKENS,
        }
    }
}

/// What a message did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// An offer recorded.
    Offered,
    /// An offer equal to the one recorded.
    DuplicateOffer,
    /// A transfer opened (or restarted).
    Requested {
        /// Whether it resumes by token.
        resumed: bool,
    },
    /// A chunk in its place.
    Chunk,
    /// The terminal chunk of a transfer.
    Complete {
        /// Whether the whole artifact was hashed and matched the offer.
        verified: bool,
    },
    /// An acknowledgement.
    Acked,
    /// An `ART_ERR` (it names no artifact, so it changes no transfer).
    Error,
}

/// A refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransferError {
    /// An offer naming an algorithm the endpoint does not accept.
    #[error("hash_alg {0} is not accepted here")]
    HashAlgNotAccepted(String),
    /// An offer differing from the one recorded for the artifact.
    #[error("artifact {0} offered again with other size or hash")]
    ConflictingOffer(String),
    /// A range outside the artifact (ARTIFACT-009).
    #[error("artifact {artifact}: {error} (swp-artifact §6)")]
    InvalidRange {
        /// The artifact.
        artifact: String,
        /// What is wrong.
        error: RangeError,
    },
    /// A resume token neither seen on this channel nor the library's own (ARTIFACT-011).
    #[error("artifact {artifact}: resume token {token} was not issued for it")]
    UnknownResumeToken {
        /// The artifact.
        artifact: String,
        /// The token.
        token: String,
    },
    /// A chunk or ACK for an artifact with no offer: size and hash unknown (ARTIFACT-002).
    #[error("{what} for artifact {artifact}, which was not offered (no size or hash)")]
    NotOffered {
        /// The message class.
        what: &'static str,
        /// The artifact.
        artifact: String,
    },
    /// A chunk no GET asked for, or after the transfer ended.
    #[error("ART_CHUNK for artifact {0} with no transfer in progress")]
    NoTransfer(String),
    /// A chunk larger than accepted.
    #[error("ART_CHUNK of {len} octets exceeds {max}")]
    ChunkTooLarge {
        /// Its length.
        len: u64,
        /// The cap.
        max: u64,
    },
    /// A chunk not at the next offset or index (ARTIFACT-008).
    #[error("ART_CHUNK for artifact {artifact} out of order: expected index {want_index:?} at offset {want_offset}, got index {index} at offset {offset} (swp-artifact §6)")]
    OutOfOrder {
        /// The artifact.
        artifact: String,
        /// The index expected, if known.
        want_index: Option<u64>,
        /// The offset expected.
        want_offset: u64,
        /// The index received.
        index: u64,
        /// The offset received.
        offset: u64,
    },
    /// A chunk past the end of the range (ARTIFACT-009).
    #[error("ART_CHUNK [{offset}, {stop}) for artifact {artifact} passes the range end {end} (swp-artifact §6)")]
    PastRange {
        /// The artifact.
        artifact: String,
        /// Its offset.
        offset: u64,
        /// Its end.
        stop: u64,
        /// The range end.
        end: u64,
    },
    /// A chunk of the wrong size for the declared chunk size (ARTIFACT-004).
    #[error(
        "ART_CHUNK {index} for artifact {artifact} has {len} octets, the chunking gives {want}"
    )]
    BadChunkSize {
        /// The artifact.
        artifact: String,
        /// Its index.
        index: u64,
        /// Its length.
        len: u64,
        /// The length expected.
        want: u64,
    },
    /// is_terminal set before the end, or missing at the end.
    #[error("ART_CHUNK {index} for artifact {artifact}: is_terminal is {flag}, but the chunk {ends} the range")]
    TerminalFlag {
        /// The artifact.
        artifact: String,
        /// Its index.
        index: u64,
        /// The flag received.
        flag: bool,
        /// "ends" or "does not end".
        ends: &'static str,
    },
    /// A token naming two different resume points (ARTIFACT-011).
    #[error("resume token {0} reused for another position")]
    TokenReused(String),
    /// The octets do not hash to the offered hash (ARTIFACT-010).
    #[error("artifact {0}: the received octets do not match the offered hash (swp-artifact §6)")]
    IntegrityMismatch(String),
    /// An ACK for a chunk not delivered.
    #[error("ART_ACK for chunk {index} of artifact {artifact}, beyond what was delivered")]
    AckBeyondDelivered {
        /// The artifact.
        artifact: String,
        /// The index acknowledged.
        index: u64,
    },
    /// Too many artifacts in progress.
    #[error("more than {0} artifacts in progress on this channel")]
    Full(usize),
}

impl TransferError {
    /// The canonical code.
    pub fn code(&self) -> ErrorCode {
        match self {
            TransferError::Full(_) => ErrorCode::RateLimitExceeded,
            _ => ErrorCode::InvalidProfilePayload,
        }
    }

    /// The `ART_ERR.code` an endpoint answers with.
    pub fn reply_code(&self) -> &'static str {
        use super::codes;
        match self {
            TransferError::InvalidRange { .. } | TransferError::PastRange { .. } => {
                codes::INVALID_RANGE
            }
            TransferError::UnknownResumeToken { .. } => codes::INVALID_RESUME_TOKEN,
            TransferError::OutOfOrder { .. } => codes::OUT_OF_ORDER,
            TransferError::IntegrityMismatch(_) => codes::INTEGRITY_MISMATCH,
            TransferError::Full(_) => codes::TOO_MANY,
            _ => codes::INVALID_TRANSFER,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Offer {
    total: u64,
    alg: HashAlg,
    hash: Bytes,
    metadata: Bytes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Active,
    Done,
}

#[derive(Debug, Clone)]
struct Transfer {
    /// The range as asked, end 0 meaning "to the end", or the resume point.
    asked: Asked,
    /// Resolved against the offer: (next index if fixed, next offset, end).
    at: Option<(Option<u64>, u64, u64)>,
    phase: Phase,
}

#[derive(Debug, Clone, Copy)]
enum Asked {
    Range(u64, u64),
    Resume(ResumePoint),
}

#[derive(Debug, Clone, Default)]
struct Artifact {
    offer: Option<Offer>,
    transfer: Option<Transfer>,
    /// Octets received contiguously from offset 0, and their running hash.
    prefix: Option<(u64, Hasher)>,
    delivered_high: Option<u64>,
}

type Key = (String, String);

/// The transfers of one channel.
#[derive(Debug, Clone)]
pub struct Transfers {
    config: Config,
    /// Artifacts in the order first seen; only one with no transfer in progress is
    /// forgotten to make room.
    artifacts: Bounded<Key, Artifact>,
    /// Resume tokens issued, the oldest forgotten first.
    tokens: Bounded<(Key, String), ResumePoint>,
}

impl Default for Transfers {
    fn default() -> Self {
        Transfers::new(Config::default())
    }
}

/// Resolves a transfer's position against the artifact size.
fn resolve(
    asked: Asked,
    total: u64,
    artifact: &str,
) -> Result<(Option<u64>, u64, u64), TransferError> {
    match asked {
        Asked::Range(start, end) => resolve_range(total, start, end)
            .map(|(s, e)| (None, s, e))
            .map_err(|error| TransferError::InvalidRange {
                artifact: shown(artifact),
                error,
            }),
        Asked::Resume(p) => {
            if p.end > total {
                return Err(TransferError::InvalidRange {
                    artifact: shown(artifact),
                    error: RangeError::EndPastEnd { end: p.end, total },
                });
            }
            Ok((Some(p.next_index), p.next_offset, p.end))
        }
    }
}

impl Transfers {
    /// A machine with these parameters (caps of 0 are raised to 1).
    pub fn new(mut config: Config) -> Self {
        config.max_artifacts = config.max_artifacts.max(1);
        config.max_tokens = config.max_tokens.max(1);
        config.chunk_size = config.chunk_size.map(|c| c.max(1));
        Transfers {
            artifacts: Bounded::new(config.max_artifacts),
            tokens: Bounded::new(config.max_tokens),
            config,
        }
    }

    /// The parameters.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The entry of an artifact, made room for if new.
    fn entry(&mut self, key: &Key) -> Result<&mut Artifact, TransferError> {
        let max = self.config.max_artifacts;
        if !self.artifacts.contains_key(key) {
            if self.artifacts.len() >= max {
                // Forget the oldest artifact with no transfer in progress.
                self.artifacts
                    .evict_oldest_where(|a| {
                        a.transfer.as_ref().is_none_or(|t| t.phase == Phase::Done)
                    })
                    .ok_or(TransferError::Full(max))?;
            }
            self.artifacts.insert(key.clone(), Artifact::default());
        }
        // Held: if it was not, it was just inserted below the capacity.
        self.artifacts.get_mut(key).ok_or(TransferError::Full(max))
    }

    /// An `ART_OFFER`.
    pub fn offer(&mut self, scope: &str, o: &ArtOffer) -> Result<Seen, TransferError> {
        let alg = HashAlg::parse(&o.hash_alg)
            .filter(|a| self.config.hash_algs.contains(a))
            .ok_or_else(|| TransferError::HashAlgNotAccepted(shown(&o.hash_alg)))?;
        let offer = Offer {
            total: o.total_size,
            alg,
            hash: o.hash.clone(),
            metadata: o.metadata.clone(),
        };
        let key = (scope.to_owned(), o.artifact_id.clone());
        if let Some(prev) = self.artifacts.get(&key).and_then(|a| a.offer.as_ref()) {
            return if *prev == offer {
                Ok(Seen::DuplicateOffer)
            } else {
                Err(TransferError::ConflictingOffer(shown(&o.artifact_id)))
            };
        }
        let a = self.entry(&key)?;
        a.prefix = Some((0, alg.hasher()));
        // A GET that came first is resolved now; one outside the artifact ends here, as
        // the sender should have refused it.
        if let Some(t) = a.transfer.as_mut().filter(|t| t.at.is_none()) {
            match resolve(t.asked, offer.total, &o.artifact_id) {
                Ok(at) => t.at = Some(at),
                Err(_) => t.phase = Phase::Done,
            }
        }
        a.offer = Some(offer);
        Ok(Seen::Offered)
    }

    /// An `ART_GET`.
    pub fn get(&mut self, scope: &str, g: &ArtGet) -> Result<Seen, TransferError> {
        let key = (scope.to_owned(), g.artifact_id.clone());
        let resumed = !g.resume_token.is_empty();
        let asked = if resumed {
            let p = self
                .tokens
                .get(&(key.clone(), g.resume_token.clone()))
                .copied()
                .or_else(|| parse_resume_token(&g.artifact_id, &g.resume_token))
                .ok_or_else(|| TransferError::UnknownResumeToken {
                    artifact: shown(&g.artifact_id),
                    token: shown(&g.resume_token),
                })?;
            Asked::Resume(p)
        } else {
            Asked::Range(g.start, g.end)
        };
        let total = self
            .artifacts
            .get(&key)
            .and_then(|a| a.offer.as_ref())
            .map(|o| o.total);
        let at = total
            .map(|t| resolve(asked, t, &g.artifact_id))
            .transpose()?;
        let a = self.entry(&key)?;
        if let (Some((_, 0, _)), Some(o)) = (at, a.offer.as_ref()) {
            // A transfer from offset 0 hashes afresh.
            a.prefix = Some((0, o.alg.hasher()));
        }
        a.transfer = Some(Transfer {
            asked,
            at,
            phase: Phase::Active,
        });
        Ok(Seen::Requested { resumed })
    }

    fn remember_token(
        &mut self,
        key: &Key,
        token: &str,
        p: ResumePoint,
    ) -> Result<(), TransferError> {
        let tk = (key.clone(), token.to_owned());
        match self.tokens.get(&tk) {
            Some(prev) if *prev == p => return Ok(()),
            Some(_) => return Err(TransferError::TokenReused(shown(token))),
            None => {}
        }
        // Past `max_tokens`, the oldest token is forgotten.
        self.tokens.insert(tk, p);
        Ok(())
    }

    /// An `ART_CHUNK`.
    pub fn chunk(&mut self, scope: &str, c: &ArtChunk) -> Result<Seen, TransferError> {
        let key = (scope.to_owned(), c.artifact_id.clone());
        let id = || shown(&c.artifact_id);
        let Some(a) = self.artifacts.get(&key) else {
            return Err(TransferError::NotOffered {
                what: "ART_CHUNK",
                artifact: id(),
            });
        };
        let Some(offer) = a.offer.as_ref() else {
            return Err(TransferError::NotOffered {
                what: "ART_CHUNK",
                artifact: id(),
            });
        };
        let (want_index, want_offset, end) = match &a.transfer {
            Some(Transfer {
                at: Some(at),
                phase: Phase::Active,
                ..
            }) => *at,
            _ => return Err(TransferError::NoTransfer(id())),
        };
        let len = c.data.len() as u64;
        if len > self.config.max_chunk_bytes {
            return Err(TransferError::ChunkTooLarge {
                len,
                max: self.config.max_chunk_bytes,
            });
        }
        let placed_index = self.config.chunk_size.map(|cs| c.offset / cs);
        if c.offset != want_offset
            || want_index.is_some_and(|i| i != c.chunk_index)
            || placed_index.is_some_and(|i| i != c.chunk_index)
        {
            return Err(TransferError::OutOfOrder {
                artifact: id(),
                want_index: want_index.or(placed_index),
                want_offset,
                index: c.chunk_index,
                offset: c.offset,
            });
        }
        let stop = c.offset.saturating_add(len);
        if stop > end {
            return Err(TransferError::PastRange {
                artifact: id(),
                offset: c.offset,
                stop,
                end,
            });
        }
        if let Some(cs) = self.config.chunk_size {
            let want = chunk_at(c.offset, end, cs).len;
            if len != want {
                return Err(TransferError::BadChunkSize {
                    artifact: id(),
                    index: c.chunk_index,
                    len,
                    want,
                });
            }
        }
        let ends = stop == end;
        if c.is_terminal != ends {
            return Err(TransferError::TerminalFlag {
                artifact: id(),
                index: c.chunk_index,
                flag: c.is_terminal,
                ends: if ends { "ends" } else { "does not end" },
            });
        }
        let (total, alg, hash) = (offer.total, offer.alg, offer.hash.clone());
        if !c.resume_token.is_empty() {
            let p = ResumePoint {
                next_index: c.chunk_index.saturating_add(1),
                next_offset: stop,
                end,
            };
            self.remember_token(&key, &c.resume_token, p)?;
        }
        let Some(a) = self.artifacts.get_mut(&key) else {
            return Err(TransferError::NoTransfer(id()));
        };
        a.delivered_high = Some(
            a.delivered_high
                .map_or(c.chunk_index, |h| h.max(c.chunk_index)),
        );
        if let Some(t) = a.transfer.as_mut() {
            t.at = Some((Some(c.chunk_index.saturating_add(1)), stop, end));
            if ends {
                t.phase = Phase::Done;
            }
        }
        // Extend the verified prefix when this chunk reaches past it.
        let mut verified = false;
        if let Some((next, hasher)) = a.prefix.as_mut() {
            if c.offset <= *next && *next < stop {
                let skip = usize::try_from(*next - c.offset).unwrap_or(usize::MAX);
                hasher.update(c.data.get(skip..).unwrap_or_default());
                *next = stop;
            }
            if *next == total {
                let digest = a
                    .prefix
                    .take()
                    .map(|(_, h)| h.finalize())
                    .unwrap_or_default();
                a.prefix = Some((0, alg.hasher()));
                if digest[..] != hash[..] {
                    if let Some(t) = a.transfer.as_mut() {
                        t.phase = Phase::Done;
                    }
                    return Err(TransferError::IntegrityMismatch(id()));
                }
                verified = true;
            }
        }
        Ok(if ends {
            Seen::Complete { verified }
        } else {
            Seen::Chunk
        })
    }

    /// An `ART_ACK`.
    pub fn ack(&mut self, scope: &str, x: &ArtAck) -> Result<Seen, TransferError> {
        let a = self
            .artifacts
            .get(&(scope.to_owned(), x.artifact_id.clone()))
            .filter(|a| a.offer.is_some())
            .ok_or_else(|| TransferError::NotOffered {
                what: "ART_ACK",
                artifact: shown(&x.artifact_id),
            })?;
        if a.delivered_high.is_some_and(|h| x.chunk_index <= h) {
            Ok(Seen::Acked)
        } else {
            Err(TransferError::AckBeyondDelivered {
                artifact: shown(&x.artifact_id),
                index: x.chunk_index,
            })
        }
    }

    /// Artifacts tracked.
    pub fn len(&self) -> usize {
        self.artifacts.len()
    }

    /// Whether none is tracked.
    pub fn is_empty(&self) -> bool {
        self.artifacts.is_empty()
    }
}

impl WireError for TransferError {
    fn code(&self) -> ErrorCode {
        TransferError::code(self)
    }
}

impl Profile for Transfers {
    profile_codec!(ArtifactMessage);
    type Config = Config;
    type Seen = Seen;
    type Error = TransferError;

    fn new(config: Config) -> Self {
        Transfers::new(config)
    }

    /// Steps the machine with any decoded message.
    fn step(&mut self, ctx: Ctx<'_>, m: &ArtifactMessage) -> Result<Seen, TransferError> {
        let scope = ctx.scope;
        match m {
            ArtifactMessage::Offer(o) => self.offer(scope, o),
            ArtifactMessage::Get(g) => self.get(scope, g),
            ArtifactMessage::Chunk(c) => self.chunk(scope, c),
            ArtifactMessage::Ack(a) => self.ack(scope, a),
            ArtifactMessage::Err(_) => Ok(Seen::Error),
        }
    }
}
