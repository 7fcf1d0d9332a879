//! SWP-ARTIFACT (profile 14, swp-artifact.md): offer metadata (§4: total size and hash),
//! ranges and resume (§4, §6), chunk order and placement (§4, §6), and whole-artifact
//! integrity (§4, §6), as docs/spec-issues-profiles.md reads the profile: half-open ranges
//! with `end` 0 meaning "to the end", global chunk indexes when the SUT declares its chunk
//! size, `is_terminal` exactly on the chunk that ends the requested range, opaque resume
//! tokens mapped to the point after the chunk that carried them, and a digest over the octets
//! received contiguously from offset 0.
//!
//! A transfer is keyed by (the side sending chunks, artifact_id): the offer comes from that
//! side, the GET from the other, in either order.

use super::common::{show, trackable, Table};
use super::config::Ctx;
use super::verdict::{decode, Level, Rule, Side, Violation};
use crate::p1::pb::types::artifact::{ArtAck, ArtChunk, ArtErr, ArtGet, ArtOffer};
use crate::support::show::or_nothing;
use sha2::{Digest as _, Sha256, Sha384, Sha512};

/// The profile_id of SWP-ARTIFACT.
pub(super) const PROFILE_ID: u64 = 14;

const MSG_TYPE: Rule = Rule {
    name: "artifact.msg-type-assigned",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-007",
    level: Level::Must,
    section: "§3, §6",
    checks: "msg_type is 1 OFFER, 2 GET, 3 CHUNK, 4 ACK or 5 ERR",
};
const NAMES_ARTIFACT: Rule = Rule {
    name: "artifact.names-artifact",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-004",
    level: Level::Must,
    section: "§4 (SI: required fields)",
    checks: "ART_OFFER, ART_GET, ART_CHUNK and ART_ACK carry a non-empty artifact_id",
};
const OFFER_SIZE: Rule = Rule {
    name: "artifact.offer-size",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-002",
    level: Level::Must,
    section: "§4",
    checks: "ART_OFFER carries a non-zero total_size",
};
const OFFER_HASH: Rule = Rule {
    name: "artifact.offer-hash",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-003",
    level: Level::Must,
    section: "§4 (SI: hash algorithms)",
    checks: "ART_OFFER carries hash_alg and hash; a SHA-256/384/512 hash has that digest's length",
};
const GET_RANGE: Rule = Rule {
    name: "artifact.get-range",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-009",
    level: Level::Must,
    section: "§6 (SI: half-open range)",
    checks: "an ART_GET range [start, end) with end set is neither empty nor inverted",
};
const GET_TOKEN_OR_RANGE: Rule = Rule {
    name: "artifact.get-token-or-range",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-005",
    level: Level::Must,
    section: "§4 (SI: resume)",
    checks: "an ART_GET resumes by token or asks for a range, not both",
};
const CHUNK_DATA: Rule = Rule {
    name: "artifact.chunk-data",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-004",
    level: Level::Must,
    section: "§4 (SI: required fields)",
    checks: "ART_CHUNK carries non-empty data",
};
const CHUNK_REQUESTED: Rule = Rule {
    name: "artifact.chunk-requested",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-009",
    level: Level::Must,
    section: "§5, §6",
    checks: "chunks flow only for an artifact the peer asked for with ART_GET",
};
const CHUNK_CONTIGUOUS: Rule = Rule {
    name: "artifact.chunk-contiguous",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-008",
    level: Level::Must,
    section: "§6",
    checks: "each chunk starts where the range or the previous chunk ended",
};
const CHUNK_INDEX: Rule = Rule {
    name: "artifact.chunk-index",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-004",
    level: Level::Must,
    section: "§4 (SI: global indexes)",
    checks:
        "chunk_index follows the previous by one; with ARTIFACT_CHUNK_BYTES it is offset / size",
};
const CHUNK_SIZE: Rule = Rule {
    name: "artifact.chunk-size",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-004",
    level: Level::Must,
    section: "§4 (SI: global indexes)",
    checks:
        "with ARTIFACT_CHUNK_BYTES, the SUT's chunk i covers [i*size, (i+1)*size) cut to the range",
};
const CHUNK_IN_RANGE: Rule = Rule {
    name: "artifact.chunk-in-range",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-009",
    level: Level::Must,
    section: "§6",
    checks: "no chunk reaches past the requested range or the offered total_size",
};
const TERMINAL_AT_RANGE_END: Rule = Rule {
    name: "artifact.terminal-at-range-end",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-008",
    level: Level::Must,
    section: "§6 (SI: is_terminal)",
    checks: "is_terminal is set exactly on the chunk that ends the requested range",
};
const NO_CHUNK_AFTER_TERMINAL: Rule = Rule {
    name: "artifact.no-chunk-after-terminal",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-008",
    level: Level::Must,
    section: "§6",
    checks: "no chunk follows the terminal chunk until a new ART_GET",
};
const INTEGRITY: Rule = Rule {
    name: "artifact.integrity",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-010",
    level: Level::Must,
    section: "§4, §6 (SI: whole-artifact digest)",
    checks: "the octets sent from offset 0 to total_size hash to the offered hash",
};
const RESUME_POINT: Rule = Rule {
    name: "artifact.resume-point",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-011",
    level: Level::Must,
    section: "§4, §6 (SI: resume tokens)",
    checks: "after a resume by token, the first chunk is the one after the chunk that carried it",
};
const RESUME_TOKEN_STABLE: Rule = Rule {
    name: "artifact.resume-token-stable",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-011",
    level: Level::Must,
    section: "§4, §6",
    checks: "one resume token names one resume point",
};
const RESUME_TOKEN_ARTIFACT: Rule = Rule {
    name: "artifact.resume-token-artifact",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-011",
    level: Level::Must,
    section: "§6 (SI: resume tokens)",
    checks: "an ART_GET resumes with a token issued for the same artifact",
};
const ACK_DELIVERED: Rule = Rule {
    name: "artifact.ack-delivered",
    profile: "ARTIFACT",
    requirement: "ARTIFACT-008",
    level: Level::Must,
    section: "§5 (SI: ART_ACK)",
    checks: "ART_ACK names a chunk index the peer already delivered",
};

/// Every SWP-ARTIFACT rule.
pub(super) const RULES: &[&Rule] = &[
    &MSG_TYPE,
    &NAMES_ARTIFACT,
    &OFFER_SIZE,
    &OFFER_HASH,
    &GET_RANGE,
    &GET_TOKEN_OR_RANGE,
    &CHUNK_DATA,
    &CHUNK_REQUESTED,
    &CHUNK_CONTIGUOUS,
    &CHUNK_INDEX,
    &CHUNK_SIZE,
    &CHUNK_IN_RANGE,
    &TERMINAL_AT_RANGE_END,
    &NO_CHUNK_AFTER_TERMINAL,
    &INTEGRITY,
    &RESUME_POINT,
    &RESUME_TOKEN_STABLE,
    &RESUME_TOKEN_ARTIFACT,
    &ACK_DELIVERED,
];

/// A hash algorithm the judge can verify (SI: SHA-256/384/512, names case-insensitive, the
/// hyphen optional). Other names are not refused: the doc names no algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HashAlg {
    Sha256,
    Sha384,
    Sha512,
}

impl HashAlg {
    fn parse(name: &str) -> Option<HashAlg> {
        let n: String = name
            .chars()
            .filter(|c| *c != '-' && *c != '_')
            .collect::<String>()
            .to_ascii_lowercase();
        match n.as_str() {
            "sha256" => Some(HashAlg::Sha256),
            "sha384" => Some(HashAlg::Sha384),
            "sha512" => Some(HashAlg::Sha512),
            _ => None,
        }
    }

    /// Its name in messages.
    fn as_str(self) -> &'static str {
        match self {
            HashAlg::Sha256 => "SHA-256",
            HashAlg::Sha384 => "SHA-384",
            HashAlg::Sha512 => "SHA-512",
        }
    }

    fn len(self) -> usize {
        match self {
            HashAlg::Sha256 => 32,
            HashAlg::Sha384 => 48,
            HashAlg::Sha512 => 64,
        }
    }
}

/// A running digest of an artifact's prefix.
#[derive(Clone)]
enum Hasher {
    S256(Sha256),
    S384(Sha384),
    S512(Sha512),
}

impl Hasher {
    fn new(alg: HashAlg) -> Hasher {
        match alg {
            HashAlg::Sha256 => Hasher::S256(Sha256::new()),
            HashAlg::Sha384 => Hasher::S384(Sha384::new()),
            HashAlg::Sha512 => Hasher::S512(Sha512::new()),
        }
    }

    fn alg(&self) -> HashAlg {
        match self {
            Hasher::S256(_) => HashAlg::Sha256,
            Hasher::S384(_) => HashAlg::Sha384,
            Hasher::S512(_) => HashAlg::Sha512,
        }
    }

    fn update(&mut self, data: &[u8]) {
        match self {
            Hasher::S256(h) => h.update(data),
            Hasher::S384(h) => h.update(data),
            Hasher::S512(h) => h.update(data),
        }
    }

    fn finish(&self) -> Vec<u8> {
        match self {
            Hasher::S256(h) => h.clone().finalize().to_vec(),
            Hasher::S384(h) => h.clone().finalize().to_vec(),
            Hasher::S512(h) => h.clone().finalize().to_vec(),
        }
    }
}

impl PartialEq for Hasher {
    fn eq(&self, other: &Self) -> bool {
        self.alg() == other.alg() && self.finish() == other.finish()
    }
}

impl Eq for Hasher {}

impl std::fmt::Debug for Hasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({})", self.alg().as_str(), hex::encode(self.finish()))
    }
}

/// A decoded SWP-ARTIFACT message whose own fields hold.
pub(super) enum Msg {
    Offer(ArtOffer),
    Get(ArtGet),
    Chunk(ArtChunk),
    Ack(ArtAck),
    Err,
}

/// Decodes by msg_type and checks what each message must carry on its own.
pub(super) fn check(msg_type: u64, bare: &[u8]) -> Result<Msg, Violation> {
    let named = |id: &str, class: &str| {
        if id.is_empty() {
            Err(NAMES_ARTIFACT.violation(format!("{class} without artifact_id")))
        } else {
            Ok(())
        }
    };
    match msg_type {
        1 => {
            let m: ArtOffer = decode(bare, "artifact.ArtOffer")?;
            named(&m.artifact_id, "ART_OFFER")?;
            if m.total_size == 0 {
                return Err(OFFER_SIZE.violation("ART_OFFER without total_size"));
            }
            if m.hash_alg.is_empty() || m.hash.is_empty() {
                return Err(OFFER_HASH.violation("ART_OFFER without hash_alg and hash"));
            }
            if let Some(alg) = HashAlg::parse(&m.hash_alg) {
                if m.hash.len() != alg.len() {
                    return Err(OFFER_HASH.violation(format!(
                        "ART_OFFER hash of {} octets for {}, whose digests have {}",
                        m.hash.len(),
                        show(m.hash_alg.as_bytes()),
                        alg.len()
                    )));
                }
            }
            Ok(Msg::Offer(m))
        }
        2 => {
            let m: ArtGet = decode(bare, "artifact.ArtGet")?;
            named(&m.artifact_id, "ART_GET")?;
            if m.end != 0 && m.start >= m.end {
                return Err(GET_RANGE.violation(format!(
                    "ART_GET range [{}, {}) is empty or inverted",
                    m.start, m.end
                )));
            }
            if !m.resume_token.is_empty() && (m.start != 0 || m.end != 0) {
                return Err(
                    GET_TOKEN_OR_RANGE.violation("ART_GET carries both a resume_token and a range")
                );
            }
            Ok(Msg::Get(m))
        }
        3 => {
            let m: ArtChunk = decode(bare, "artifact.ArtChunk")?;
            named(&m.artifact_id, "ART_CHUNK")?;
            if m.data.is_empty() {
                return Err(CHUNK_DATA.violation(format!(
                    "ART_CHUNK {} of {} without data",
                    m.chunk_index,
                    show(m.artifact_id.as_bytes())
                )));
            }
            Ok(Msg::Chunk(m))
        }
        4 => {
            let m: ArtAck = decode(bare, "artifact.ArtAck")?;
            named(&m.artifact_id, "ART_ACK")?;
            Ok(Msg::Ack(m))
        }
        5 => {
            let _: ArtErr = decode(bare, "artifact.ArtErr")?;
            Ok(Msg::Err)
        }
        t => Err(MSG_TYPE.violation(format!("msg_type {t} is not assigned in SWP-ARTIFACT"))),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Offer {
    total_size: u64,
    /// The algorithm and digest, when the judge can verify them.
    verify: Option<(HashAlg, Vec<u8>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Transfer {
    /// The explicit end of the range asked for (`None`: to the end of the artifact).
    end: Option<u64>,
    /// Where the next chunk starts (`None`: resumed by a token the judge never saw).
    next_offset: Option<u64>,
    next_index: Option<u64>,
    /// The next chunk is the first after a resume by a known token.
    resumed: bool,
    done: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Prefix {
    /// Octets received contiguously from offset 0.
    len: u64,
    hasher: Option<Hasher>,
    verified: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Point {
    artifact_id: String,
    next_offset: u64,
    next_index: u64,
    end: Option<u64>,
}

/// Offers, transfers, prefixes, resume tokens and delivered chunks, keyed by the side that
/// sends the artifact.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct State {
    offers: Table<(Side, String), Offer>,
    transfers: Table<(Side, String), Transfer>,
    prefixes: Table<(Side, String), Prefix>,
    tokens: Table<(Side, String), Point>,
    delivered: Table<(Side, String), u64>,
}

impl State {
    /// Judges `msg` from `ctx.side`, then records it.
    pub(super) fn observe(&mut self, ctx: &Ctx, msg: Msg) -> Result<(), Violation> {
        let side = ctx.side;
        match msg {
            Msg::Offer(o) => {
                if trackable(o.artifact_id.as_bytes()) {
                    let verify = HashAlg::parse(&o.hash_alg).map(|a| (a, o.hash.to_vec()));
                    let offer = Offer {
                        total_size: o.total_size,
                        verify,
                    };
                    self.offers.insert((side, o.artifact_id), offer);
                }
                Ok(())
            }
            Msg::Get(g) => self.get(side, g),
            Msg::Chunk(c) => self.chunk(ctx, c),
            Msg::Ack(a) => {
                if !trackable(a.artifact_id.as_bytes()) {
                    return Ok(());
                }
                let key = (side.other(), a.artifact_id.clone());
                match self.delivered.get(&key) {
                    Some(max) if a.chunk_index <= *max => Ok(()),
                    None if self.delivered.overflowed() => Ok(()),
                    _ => Err(ACK_DELIVERED.violation(format!(
                        "ART_ACK of chunk {} of {}, which was not delivered",
                        a.chunk_index,
                        show(a.artifact_id.as_bytes())
                    ))),
                }
            }
            // ART_ERR names no artifact: it is tied to no transfer (SI).
            Msg::Err => Ok(()),
        }
    }

    fn get(&mut self, side: Side, g: ArtGet) -> Result<(), Violation> {
        if !trackable(g.artifact_id.as_bytes()) {
            return Ok(());
        }
        let server = side.other();
        let transfer = if g.resume_token.is_empty() {
            Transfer {
                end: (g.end != 0).then_some(g.end),
                next_offset: Some(g.start),
                next_index: None,
                resumed: false,
                done: false,
            }
        } else {
            let point = trackable(g.resume_token.as_bytes())
                .then(|| self.tokens.get(&(server, g.resume_token.clone())))
                .flatten();
            match point {
                Some(p) if p.artifact_id != g.artifact_id => {
                    return Err(RESUME_TOKEN_ARTIFACT.violation(format!(
                        "ART_GET of {} resumes with a token issued for {}",
                        show(g.artifact_id.as_bytes()),
                        show(p.artifact_id.as_bytes())
                    )))
                }
                Some(p) => Transfer {
                    end: p.end,
                    next_offset: Some(p.next_offset),
                    next_index: Some(p.next_index),
                    resumed: true,
                    done: false,
                },
                // A token the judge never saw (another connection's): the point is unknown.
                None => Transfer {
                    end: None,
                    next_offset: None,
                    next_index: None,
                    resumed: false,
                    done: false,
                },
            }
        };
        // A new GET supersedes the transfer before it (SI).
        self.transfers.insert((server, g.artifact_id), transfer);
        Ok(())
    }

    fn chunk(&mut self, ctx: &Ctx, c: ArtChunk) -> Result<(), Violation> {
        let side = ctx.side;
        if !trackable(c.artifact_id.as_bytes()) {
            return Ok(());
        }
        let key = (side, c.artifact_id.clone());
        let name = show(c.artifact_id.as_bytes());
        let Some(t) = self.transfers.get(&key) else {
            if self.transfers.overflowed() {
                return Ok(());
            }
            return Err(CHUNK_REQUESTED.violation(format!(
                "ART_CHUNK {} of {name}, which the peer did not ask for",
                c.chunk_index
            )));
        };
        if t.done {
            return Err(NO_CHUNK_AFTER_TERMINAL.violation(format!(
                "ART_CHUNK {} of {name} after the terminal chunk",
                c.chunk_index
            )));
        }
        if t.resumed && (t.next_offset != Some(c.offset) || t.next_index != Some(c.chunk_index)) {
            return Err(RESUME_POINT.violation(format!(
                "resumed transfer of {name} restarts at chunk {} offset {}, not at chunk {} offset {}",
                c.chunk_index,
                c.offset,
                or_nothing(t.next_index),
                or_nothing(t.next_offset)
            )));
        }
        if let Some(n) = t.next_offset.filter(|n| *n != c.offset) {
            return Err(CHUNK_CONTIGUOUS.violation(format!(
                "ART_CHUNK {} of {name} at offset {}, not at {n}",
                c.chunk_index, c.offset
            )));
        }
        if let Some(i) = t.next_index.filter(|i| *i != c.chunk_index) {
            return Err(CHUNK_INDEX.violation(format!(
                "ART_CHUNK of {name} has index {}, not {i}",
                c.chunk_index
            )));
        }
        let offer = self.offers.get(&key);
        let total = offer.map(|o| o.total_size);
        let end = t.end.or(total);
        let len = c.data.len() as u64;
        let Some(chunk_end) = c.offset.checked_add(len) else {
            return Err(CHUNK_IN_RANGE.violation(format!(
                "ART_CHUNK {} of {name} ends past 2^64",
                c.chunk_index
            )));
        };
        // The SUT's declared chunk size places its own chunks (SI: global indexes).
        let size = ctx.config.artifact_chunk_bytes.filter(|s| *s > 0);
        if let (Some(size), Side::Endpoint) = (size, side) {
            let index = c.offset / size;
            if c.chunk_index != index {
                return Err(CHUNK_INDEX.violation(format!(
                    "ART_CHUNK of {name} at offset {} has index {}, not {index} (chunk size {size})",
                    c.offset, c.chunk_index
                )));
            }
            let slot_end = index.saturating_add(1).saturating_mul(size);
            let want_end = end.map_or(slot_end, |e| slot_end.min(e));
            let fits = match end {
                Some(_) => chunk_end == want_end,
                // Without a known end the last chunk may be short.
                None => chunk_end <= want_end,
            };
            if !fits {
                return Err(CHUNK_SIZE.violation(format!(
                    "ART_CHUNK {} of {name} covers [{}, {chunk_end}), not [{}, {want_end})",
                    c.chunk_index, c.offset, c.offset
                )));
            }
        }
        for (limit, what) in [(t.end, "the requested range"), (total, "total_size")] {
            if let Some(l) = limit.filter(|l| chunk_end > *l) {
                return Err(CHUNK_IN_RANGE.violation(format!(
                    "ART_CHUNK {} of {name} ends at {chunk_end}, past {what} {l}",
                    c.chunk_index
                )));
            }
        }
        if let Some(e) = end {
            if c.is_terminal != (chunk_end == e) {
                let how = if c.is_terminal { "is" } else { "is not" };
                return Err(TERMINAL_AT_RANGE_END.violation(format!(
                    "ART_CHUNK {} of {name} ends at {chunk_end} and {how} marked terminal; the range ends at {e}",
                    c.chunk_index
                )));
            }
        }
        let point = Point {
            artifact_id: c.artifact_id.clone(),
            next_offset: chunk_end,
            next_index: c.chunk_index.saturating_add(1),
            end: t.end,
        };
        let token_key = (side, c.resume_token.clone());
        let record_token = !c.resume_token.is_empty() && trackable(c.resume_token.as_bytes());
        if record_token {
            if let Some(p) = self.tokens.get(&token_key) {
                let same = p.artifact_id == point.artifact_id
                    && p.next_offset == point.next_offset
                    && p.next_index == point.next_index;
                if !same {
                    return Err(RESUME_TOKEN_STABLE.violation(format!(
                        "resume token {} already named another point",
                        show(c.resume_token.as_bytes())
                    )));
                }
            }
        }
        let prefix = self.extend_prefix(&key, offer, &c, chunk_end)?;
        // Judged: record.
        if let Some(t) = self.transfers.get_mut(&key) {
            t.next_offset = Some(chunk_end);
            t.next_index = Some(point.next_index);
            t.resumed = false;
            t.done = c.is_terminal;
        }
        let max = self
            .delivered
            .get(&key)
            .map_or(c.chunk_index, |m| (*m).max(c.chunk_index));
        self.delivered.insert(key.clone(), max);
        if record_token {
            self.tokens.insert(token_key, point);
        }
        if let Some(p) = prefix {
            self.prefixes.insert(key, p);
        }
        Ok(())
    }

    /// The prefix after this chunk (`None`: unchanged), refusing a completed prefix whose
    /// digest is not the offered one.
    fn extend_prefix(
        &self,
        key: &(Side, String),
        offer: Option<&Offer>,
        c: &ArtChunk,
        chunk_end: u64,
    ) -> Result<Option<Prefix>, Violation> {
        let mut p = match self.prefixes.get(key) {
            Some(p) if c.offset <= p.len && p.len < chunk_end => p.clone(),
            Some(_) => return Ok(None),
            None if c.offset == 0 => Prefix {
                len: 0,
                hasher: offer
                    .and_then(|o| o.verify.as_ref())
                    .map(|(a, _)| Hasher::new(*a)),
                verified: false,
            },
            None => return Ok(None),
        };
        let skip = usize::try_from(p.len.saturating_sub(c.offset)).unwrap_or(usize::MAX);
        let Some(tail) = c.data.get(skip..) else {
            return Ok(None);
        };
        if let Some(h) = p.hasher.as_mut() {
            h.update(tail);
        }
        p.len = chunk_end;
        let expected = offer.and_then(|o| {
            let (alg, hash) = o.verify.as_ref()?;
            (o.total_size == p.len).then_some((*alg, hash))
        });
        if let (Some((alg, hash)), Some(h), false) = (expected, p.hasher.as_ref(), p.verified) {
            if h.alg() == alg {
                if h.finish() != *hash {
                    return Err(INTEGRITY.violation(format!(
                        "the {} octets of {} do not hash to the offered {} digest",
                        p.len,
                        show(c.artifact_id.as_bytes()),
                        alg.as_str()
                    )));
                }
                p.verified = true;
            }
        }
        Ok(Some(p))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{enc, full_config, sequence_property, Run, Step};
    use super::super::{Config, Side::*};
    use super::*;
    use proptest::prelude::*;

    const CONTENT: &[u8] = b"0123456789";

    fn offer(id: &str, content: &[u8]) -> ArtOffer {
        ArtOffer {
            artifact_id: id.into(),
            total_size: content.len() as u64,
            hash_alg: "sha-256".into(),
            hash: Sha256::digest(content).to_vec().into(),
            metadata: Default::default(),
        }
    }
    fn get(id: &str, start: u64, end: u64, token: &str) -> ArtGet {
        ArtGet {
            artifact_id: id.into(),
            start,
            end,
            resume_token: token.into(),
        }
    }
    fn chunk(id: &str, index: u64, offset: u64, data: &[u8], last: bool) -> ArtChunk {
        ArtChunk {
            artifact_id: id.into(),
            chunk_index: index,
            offset,
            data: data.to_vec().into(),
            is_terminal: last,
            resume_token: String::new(),
        }
    }
    fn ack(id: &str, index: u64) -> ArtAck {
        ArtAck {
            artifact_id: id.into(),
            chunk_index: index,
        }
    }
    /// The endpoint offers CONTENT as "a" and the harness asks for all of it.
    fn offered() -> Run {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Endpoint, 1, &offer("a", CONTENT));
        r.ok(Harness, 2, &get("a", 0, 0, ""));
        r
    }

    #[test]
    fn msg_type_must_be_assigned() {
        let mut r = Run::new(PROFILE_ID);
        r.err(
            Endpoint,
            6,
            &offer("a", CONTENT),
            "artifact.msg-type-assigned",
        );
        r.ok(Endpoint, 1, &offer("a", CONTENT));
    }

    #[test]
    fn messages_name_their_artifact() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Endpoint, 1, &offer("", CONTENT), "artifact.names-artifact");
        r.err(Harness, 2, &get("", 0, 0, ""), "artifact.names-artifact");
        r.err(
            Endpoint,
            3,
            &chunk("", 0, 0, b"x", false),
            "artifact.names-artifact",
        );
        r.err(Harness, 4, &ack("", 0), "artifact.names-artifact");
        r.ok(Harness, 5, &ArtErr::default());
    }

    #[test]
    fn offers_carry_size_and_hash() {
        let mut r = Run::new(PROFILE_ID);
        let mut o = offer("a", CONTENT);
        o.total_size = 0;
        r.err(Endpoint, 1, &o, "artifact.offer-size");
        let mut o = offer("a", CONTENT);
        o.hash = Default::default();
        r.err(Endpoint, 1, &o, "artifact.offer-hash");
        let mut o = offer("a", CONTENT);
        o.hash = vec![1u8; 20].into();
        r.err(Endpoint, 1, &o, "artifact.offer-hash");
        o.hash_alg = "blake3-ish".into();
        r.ok(Endpoint, 1, &o);
    }

    #[test]
    fn get_ranges_are_valid_and_exclusive_with_tokens() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Harness, 2, &get("a", 5, 5, ""), "artifact.get-range");
        r.err(Harness, 2, &get("a", 6, 5, ""), "artifact.get-range");
        r.err(
            Harness,
            2,
            &get("a", 1, 0, "tok"),
            "artifact.get-token-or-range",
        );
        r.ok(Harness, 2, &get("a", 5, 0, ""));
        r.ok(Harness, 2, &get("a", 0, 0, "tok"));
    }

    #[test]
    fn chunks_carry_data_and_answer_a_get() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Endpoint, 1, &offer("a", CONTENT));
        r.err(
            Endpoint,
            3,
            &chunk("a", 0, 0, b"0123", false),
            "artifact.chunk-requested",
        );
        r.ok(Harness, 2, &get("a", 0, 0, ""));
        r.err(
            Endpoint,
            3,
            &chunk("a", 0, 0, b"", false),
            "artifact.chunk-data",
        );
        r.ok(Endpoint, 3, &chunk("a", 0, 0, b"0123", false));
    }

    #[test]
    fn chunks_are_contiguous_and_indexed_in_order() {
        let mut r = offered();
        r.ok(Endpoint, 3, &chunk("a", 0, 0, b"0123", false));
        r.err(
            Endpoint,
            3,
            &chunk("a", 1, 5, b"5678", false),
            "artifact.chunk-contiguous",
        );
        r.err(
            Endpoint,
            3,
            &chunk("a", 2, 4, b"4567", false),
            "artifact.chunk-index",
        );
        r.ok(Endpoint, 3, &chunk("a", 1, 4, b"4567", false));
        r.ok(Endpoint, 3, &chunk("a", 2, 8, b"89", true));
    }

    #[test]
    fn the_declared_chunk_size_places_the_sut_s_chunks() {
        let mut r = Run::with(
            PROFILE_ID,
            Config {
                artifact_chunk_bytes: Some(4),
                ..Config::default()
            },
        );
        r.ok(Endpoint, 1, &offer("a", CONTENT));
        r.ok(Harness, 2, &get("a", 2, 0, ""));
        r.err(
            Endpoint,
            3,
            &chunk("a", 1, 2, b"23", false),
            "artifact.chunk-index",
        );
        r.err(
            Endpoint,
            3,
            &chunk("a", 0, 2, b"2345", false),
            "artifact.chunk-size",
        );
        r.ok(Endpoint, 3, &chunk("a", 0, 2, b"23", false));
        r.err(
            Endpoint,
            3,
            &chunk("a", 1, 4, b"456", false),
            "artifact.chunk-size",
        );
        r.ok(Endpoint, 3, &chunk("a", 1, 4, b"4567", false));
        r.ok(Endpoint, 3, &chunk("a", 2, 8, b"89", true));
        // The harness's own chunks are not held to the SUT's size.
        r.ok(Harness, 1, &offer("b", CONTENT));
        r.ok(Endpoint, 2, &get("b", 0, 0, ""));
        r.ok(Harness, 3, &chunk("b", 0, 0, b"0123456", false));
    }

    #[test]
    fn a_zero_chunk_size_is_no_chunk_size() {
        let mut r = Run::with(
            PROFILE_ID,
            Config {
                artifact_chunk_bytes: Some(0),
                ..Config::default()
            },
        );
        r.ok(Endpoint, 1, &offer("a", CONTENT));
        r.ok(Harness, 2, &get("a", 0, 0, ""));
        r.ok(Endpoint, 3, &chunk("a", 9, 0, b"012", false));
    }

    #[test]
    fn chunks_stay_inside_the_range_and_the_artifact() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Endpoint, 1, &offer("a", CONTENT));
        r.ok(Harness, 2, &get("a", 0, 4, ""));
        r.err(
            Endpoint,
            3,
            &chunk("a", 0, 0, b"01234", false),
            "artifact.chunk-in-range",
        );
        r.ok(Endpoint, 3, &chunk("a", 0, 0, b"0123", true));
        r.ok(Harness, 2, &get("a", 8, 0, ""));
        r.err(
            Endpoint,
            3,
            &chunk("a", 2, 8, b"89X", true),
            "artifact.chunk-in-range",
        );
        r.ok(Endpoint, 3, &chunk("a", 2, 8, b"89", true));
    }

    #[test]
    fn the_terminal_flag_marks_exactly_the_range_end() {
        let mut r = offered();
        r.err(
            Endpoint,
            3,
            &chunk("a", 0, 0, b"0123", true),
            "artifact.terminal-at-range-end",
        );
        r.ok(Endpoint, 3, &chunk("a", 0, 0, b"0123", false));
        r.err(
            Endpoint,
            3,
            &chunk("a", 1, 4, b"456789", false),
            "artifact.terminal-at-range-end",
        );
        r.ok(Endpoint, 3, &chunk("a", 1, 4, b"456789", true));
    }

    #[test]
    fn nothing_follows_the_terminal_chunk_until_a_new_get() {
        let mut r = offered();
        r.ok(Endpoint, 3, &chunk("a", 0, 0, CONTENT, true));
        r.err(
            Endpoint,
            3,
            &chunk("a", 1, 10, b"x", false),
            "artifact.no-chunk-after-terminal",
        );
        r.ok(Harness, 2, &get("a", 0, 0, ""));
        r.ok(Endpoint, 3, &chunk("a", 0, 0, CONTENT, true));
    }

    #[test]
    fn the_whole_artifact_hashes_to_the_offered_digest() {
        let mut r = offered();
        r.ok(Endpoint, 3, &chunk("a", 0, 0, b"0123", false));
        r.err(
            Endpoint,
            3,
            &chunk("a", 1, 4, b"45678X", true),
            "artifact.integrity",
        );
        r.ok(Endpoint, 3, &chunk("a", 1, 4, b"456789", true));
        // Across a range restart, the prefix is kept.
        let mut r = offered();
        r.ok(Endpoint, 3, &chunk("a", 0, 0, b"0123", false));
        r.ok(Harness, 2, &get("a", 4, 0, ""));
        r.err(
            Endpoint,
            3,
            &chunk("a", 7, 4, b"X56789", true),
            "artifact.integrity",
        );
        r.ok(Endpoint, 3, &chunk("a", 7, 4, b"456789", true));
    }

    #[test]
    fn a_resume_token_restarts_after_its_chunk() {
        let mut r = offered();
        let mut c = chunk("a", 0, 0, b"0123", false);
        c.resume_token = "t1".into();
        r.ok(Endpoint, 3, &c);
        r.ok(Harness, 2, &get("a", 0, 0, "t1"));
        r.err(
            Endpoint,
            3,
            &chunk("a", 0, 0, b"0123", false),
            "artifact.resume-point",
        );
        r.err(
            Endpoint,
            3,
            &chunk("a", 2, 4, b"4567", false),
            "artifact.resume-point",
        );
        r.ok(Endpoint, 3, &chunk("a", 1, 4, b"456789", true));
        // A token the judge never saw anchors nothing.
        r.ok(Harness, 2, &get("a", 0, 0, "unknown"));
        r.ok(Endpoint, 3, &chunk("a", 5, 7, b"789", true));
    }

    #[test]
    fn a_resume_token_names_one_point_of_one_artifact() {
        let mut r = offered();
        let mut c = chunk("a", 0, 0, b"0123", false);
        c.resume_token = "t1".into();
        r.ok(Endpoint, 3, &c);
        let mut c2 = chunk("a", 1, 4, b"4567", false);
        c2.resume_token = "t1".into();
        r.err(Endpoint, 3, &c2, "artifact.resume-token-stable");
        c2.resume_token = "t2".into();
        r.ok(Endpoint, 3, &c2);
        r.ok(Endpoint, 1, &offer("b", CONTENT));
        r.err(
            Harness,
            2,
            &get("b", 0, 0, "t1"),
            "artifact.resume-token-artifact",
        );
        r.ok(Harness, 2, &get("a", 0, 0, "t1"));
    }

    #[test]
    fn an_ack_names_a_delivered_chunk() {
        let mut r = offered();
        r.err(Harness, 4, &ack("a", 0), "artifact.ack-delivered");
        r.ok(Endpoint, 3, &chunk("a", 0, 0, b"0123", false));
        r.ok(Endpoint, 3, &chunk("a", 1, 4, b"4567", false));
        r.ok(Harness, 4, &ack("a", 0));
        r.ok(Harness, 4, &ack("a", 1));
        r.err(Harness, 4, &ack("a", 2), "artifact.ack-delivered");
        r.err(Endpoint, 4, &ack("a", 0), "artifact.ack-delivered");
    }

    fn step() -> impl Strategy<Value = Step> {
        let id = prop::sample::select(vec!["a", "b", ""]);
        let side = prop::sample::select(vec![Harness, Endpoint]);
        let msg = prop_oneof![
            id.clone().prop_map(|i| (1u64, enc(&offer(i, CONTENT)))),
            (
                id.clone(),
                0u64..12,
                0u64..12,
                prop::sample::select(vec!["", "t1", "t2"])
            )
                .prop_map(|(i, s, e, t)| (2u64, enc(&get(i, s, e, t)))),
            (
                id.clone(),
                0u64..4,
                0u64..12,
                0usize..6,
                any::<bool>(),
                prop::sample::select(vec!["", "t1", "t2"])
            )
                .prop_map(|(i, x, o, n, l, t)| {
                    let lo = usize::try_from(o).unwrap_or(0).min(CONTENT.len());
                    let hi = (lo + n).min(CONTENT.len());
                    let mut c = chunk(i, x, o, &CONTENT[lo..hi], l);
                    c.resume_token = t.into();
                    (3u64, enc(&c))
                }),
            (id, 0u64..4).prop_map(|(i, x)| (4u64, enc(&ack(i, x)))),
            (0u64..7, prop::collection::vec(any::<u8>(), 0..16)),
        ];
        (0u64..100, side, msg).prop_map(|(t, s, (mt, b))| (t, s, mt, b))
    }

    proptest! {
        #[test]
        fn sequences_keep_the_state_on_refusal(steps in prop::collection::vec(step(), 0..40)) {
            sequence_property(PROFILE_ID, &Config::default(), &steps);
            sequence_property(PROFILE_ID, &full_config(), &steps);
        }
    }
}
