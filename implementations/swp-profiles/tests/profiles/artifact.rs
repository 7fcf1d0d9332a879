//! SWP-ARTIFACT (profile 14): offer metadata, chunk placement, order and ranges, integrity
//! of the whole artifact, and resume by token or by range, with the library's own sender
//! (`source`) on the other side.

use crate::FORMS;
use bytes::Bytes;
use proptest::prelude::*;
use prost::Message;
use swp_core::ErrorCode;
use swp_profiles::artifact::chunking::{
    parse_resume_token, plan, resolve_range, resume_token, RangeError, ResumePoint,
};
use swp_profiles::artifact::source::{self, ServeError};
use swp_profiles::artifact::transfer::Config;
use swp_profiles::artifact::{self, codes, HashAlg, Seen, TransferError, Transfers};
use swp_profiles::p1::pb::artifact::{ArtAck, ArtChunk, ArtGet, ArtOffer};
use swp_profiles::payload::PayloadError;

const ID: &str = "report.bin";

fn data() -> Bytes {
    Bytes::from_static(b"0123456789")
}

fn offer() -> ArtOffer {
    source::offer(
        ID,
        &data(),
        HashAlg::Sha256,
        Bytes::from_static(b"text/plain"),
    )
}

fn get(start: u64, end: u64) -> ArtGet {
    ArtGet {
        artifact_id: ID.into(),
        start,
        end,
        resume_token: String::new(),
    }
}

fn resume(token: &str) -> ArtGet {
    ArtGet {
        artifact_id: ID.into(),
        resume_token: token.into(),
        ..ArtGet::default()
    }
}

/// A machine that knows chunks are 4 octets.
fn machine() -> Transfers {
    Transfers::new(Config {
        chunk_size: Some(4),
        ..Config::default()
    })
}

fn served(g: &ArtGet) -> Vec<ArtChunk> {
    source::serve(ID, &data(), 4, g).unwrap()
}

/// ARTIFACT-007: msg_types outside 1..=5 are ERR_UNSUPPORTED_MSG_TYPE.
#[test]
fn unassigned_msg_types_are_unsupported() {
    for form in FORMS {
        for t in [0, 6] {
            assert_eq!(
                artifact::decode(form, t, b"").unwrap_err().code(),
                ErrorCode::UnsupportedMsgType
            );
        }
    }
}

/// ARTIFACT-002, ARTIFACT-003: an offer carries the total size and a hash the library can
/// verify: a known algorithm and a digest of its length.
#[test]
fn offer_metadata() {
    type Break = fn(&mut ArtOffer);
    let cases: [(&str, Break); 6] = [
        ("artifact_id", |o| o.artifact_id.clear()),
        ("total_size", |o| o.total_size = 0),
        ("hash_alg", |o| o.hash_alg.clear()),
        ("hash", |o| o.hash.clear()),
        ("hash_alg", |o| o.hash_alg = "md5".into()),
        ("hash", |o| o.hash = Bytes::from_static(&[0; 20])),
    ];
    for form in FORMS {
        let ok = form.frame(1, offer().encode_to_vec());
        assert!(artifact::decode(form, 1, &ok).is_ok());
        for (field, broken) in cases {
            let mut o = offer();
            broken(&mut o);
            let e = artifact::decode(form, 1, &form.frame(1, o.encode_to_vec())).unwrap_err();
            assert!(e.to_string().contains(field), "{field}: {e}");
            assert_eq!(e.code(), ErrorCode::InvalidProfilePayload);
        }
    }
    for name in ["SHA-256", "sha256", "sha-384", "Sha512"] {
        assert!(HashAlg::parse(name).is_some(), "{name}");
    }
    // Which algorithms an endpoint accepts is configuration.
    let mut t = Transfers::new(Config {
        hash_algs: vec![HashAlg::Sha512],
        ..Config::default()
    });
    assert!(matches!(
        t.offer("", &offer()),
        Err(TransferError::HashAlgNotAccepted(_))
    ));
}

/// ARTIFACT-004, ARTIFACT-006: a whole transfer, offer then GET then the source's chunks,
/// ends verified; ACKs can acknowledge only what was delivered.
#[test]
fn whole_transfer_is_verified() {
    let mut t = machine();
    assert_eq!(t.offer("", &offer()), Ok(Seen::Offered));
    assert_eq!(t.offer("", &offer()), Ok(Seen::DuplicateOffer));
    let mut other = offer();
    other.total_size = 11;
    assert!(matches!(
        t.offer("", &other),
        Err(TransferError::ConflictingOffer(_))
    ));
    assert_eq!(
        t.get("", &get(0, 0)),
        Ok(Seen::Requested { resumed: false })
    );
    let chunks = served(&get(0, 0));
    let placed: Vec<(u64, u64, usize, bool)> = chunks
        .iter()
        .map(|c| (c.chunk_index, c.offset, c.data.len(), c.is_terminal))
        .collect();
    assert_eq!(
        placed,
        [(0, 0, 4, false), (1, 4, 4, false), (2, 8, 2, true)]
    );
    assert_eq!(t.chunk("", &chunks[0]), Ok(Seen::Chunk));
    let ack = |i| ArtAck {
        artifact_id: ID.into(),
        chunk_index: i,
    };
    assert_eq!(t.ack("", &ack(0)), Ok(Seen::Acked));
    assert!(matches!(
        t.ack("", &ack(1)),
        Err(TransferError::AckBeyondDelivered { .. })
    ));
    assert_eq!(t.chunk("", &chunks[1]), Ok(Seen::Chunk));
    assert_eq!(
        t.chunk("", &chunks[2]),
        Ok(Seen::Complete { verified: true })
    );
    assert!(matches!(
        t.chunk("", &chunks[2]),
        Err(TransferError::NoTransfer(_))
    ));
    // Another scope has its own artifacts.
    assert!(matches!(
        t.chunk("peer-2", &chunks[0]),
        Err(TransferError::NotOffered { .. })
    ));
}

/// ARTIFACT-006, ARTIFACT-010: corrupted octets, or an offer whose hash does not match, are
/// detected when the artifact is complete, and end the transfer.
#[test]
fn integrity_mismatch_is_rejected() {
    let mut t = machine();
    t.offer("", &offer()).unwrap();
    t.get("", &get(0, 0)).unwrap();
    let mut chunks = served(&get(0, 0));
    chunks[1].data = Bytes::from_static(b"45X7");
    t.chunk("", &chunks[0]).unwrap();
    t.chunk("", &chunks[1]).unwrap();
    let e = t.chunk("", &chunks[2]).unwrap_err();
    assert_eq!(e, TransferError::IntegrityMismatch("\"report.bin\"".into()));
    assert_eq!(
        (e.code(), e.reply_code()),
        (ErrorCode::InvalidProfilePayload, codes::INTEGRITY_MISMATCH)
    );
    assert!(matches!(
        t.chunk("", &chunks[2]),
        Err(TransferError::NoTransfer(_))
    ));
    // A fresh GET from 0 hashes afresh, and the right octets verify.
    t.get("", &get(0, 0)).unwrap();
    for c in &served(&get(0, 0)) {
        t.chunk("", c).unwrap();
    }
    let mut t = machine();
    let mut lying = offer();
    lying.hash = Bytes::from(HashAlg::Sha256.digest(b"something else"));
    t.offer("", &lying).unwrap();
    t.get("", &get(0, 0)).unwrap();
    let chunks = served(&get(0, 0));
    t.chunk("", &chunks[0]).unwrap();
    t.chunk("", &chunks[1]).unwrap();
    assert!(matches!(
        t.chunk("", &chunks[2]),
        Err(TransferError::IntegrityMismatch(_))
    ));
}

/// ARTIFACT-008: chunks arrive in order; one out of place is refused and changes nothing.
#[test]
fn chunk_order() {
    let mut t = machine();
    t.offer("", &offer()).unwrap();
    t.get("", &get(0, 0)).unwrap();
    let chunks = served(&get(0, 0));
    let e = t.chunk("", &chunks[1]).unwrap_err();
    assert!(
        matches!(
            e,
            TransferError::OutOfOrder {
                want_offset: 0,
                offset: 4,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.reply_code(), codes::OUT_OF_ORDER);
    let mut wrong_index = chunks[0].clone();
    wrong_index.chunk_index = 1;
    assert!(matches!(
        t.chunk("", &wrong_index),
        Err(TransferError::OutOfOrder { .. })
    ));
    for c in &chunks {
        t.chunk("", c).unwrap();
    }
}

/// ARTIFACT-009: ranges outside the artifact are refused; a chunk may not pass its range's
/// end; a range transfer that does not reach back to offset 0 ends unverified.
#[test]
fn range_validity() {
    assert_eq!(resolve_range(10, 0, 0), Ok((0, 10)));
    assert_eq!(resolve_range(10, 3, 7), Ok((3, 7)));
    assert_eq!(
        resolve_range(10, 10, 0),
        Err(RangeError::StartPastEnd {
            start: 10,
            total: 10
        })
    );
    assert_eq!(
        resolve_range(10, 0, 11),
        Err(RangeError::EndPastEnd { end: 11, total: 10 })
    );
    for form in FORMS {
        let inverted = form.frame(2, get(5, 5).encode_to_vec());
        assert!(matches!(
            artifact::decode(form, 2, &inverted),
            Err(PayloadError::Invalid { field: "end", .. })
        ));
        let both = ArtGet {
            resume_token: "t".into(),
            ..get(1, 0)
        };
        assert!(artifact::decode(form, 2, &form.frame(2, both.encode_to_vec())).is_err());
    }
    let mut t = machine();
    t.offer("", &offer()).unwrap();
    let e = t.get("", &get(4, 12)).unwrap_err();
    assert!(matches!(e, TransferError::InvalidRange { .. }), "{e}");
    assert_eq!(e.reply_code(), codes::INVALID_RANGE);
    assert_eq!(
        source::serve(ID, &data(), 4, &get(4, 12))
            .unwrap_err()
            .reply_code(),
        codes::INVALID_RANGE
    );
    t.get("", &get(3, 7)).unwrap();
    let chunks = served(&get(3, 7));
    let placed: Vec<(u64, u64, usize)> = chunks
        .iter()
        .map(|c| (c.chunk_index, c.offset, c.data.len()))
        .collect();
    assert_eq!(placed, [(0, 3, 1), (1, 4, 3)]);
    let mut long = chunks[0].clone();
    long.data = data().slice(3..8);
    assert!(matches!(
        t.chunk("", &long),
        Err(TransferError::PastRange { .. })
    ));
    t.chunk("", &chunks[0]).unwrap();
    assert_eq!(
        t.chunk("", &chunks[1]),
        Ok(Seen::Complete { verified: false })
    );
}

/// ARTIFACT-004: with a declared chunk size, placement is exact; the terminal flag is set on
/// the chunk that ends the range and on no other.
#[test]
fn placement_and_terminal_flag() {
    let mut t = machine();
    t.offer("", &offer()).unwrap();
    t.get("", &get(0, 0)).unwrap();
    let chunks = served(&get(0, 0));
    let mut short = chunks[0].clone();
    short.data = data().slice(0..3);
    assert!(matches!(
        t.chunk("", &short),
        Err(TransferError::BadChunkSize {
            len: 3,
            want: 4,
            ..
        })
    ));
    let mut early = chunks[0].clone();
    early.is_terminal = true;
    assert!(matches!(
        t.chunk("", &early),
        Err(TransferError::TerminalFlag { flag: true, .. })
    ));
    t.chunk("", &chunks[0]).unwrap();
    t.chunk("", &chunks[1]).unwrap();
    let mut unflagged = chunks[2].clone();
    unflagged.is_terminal = false;
    assert!(matches!(
        t.chunk("", &unflagged),
        Err(TransferError::TerminalFlag { flag: false, .. })
    ));
    // Without a declared size, contiguity still holds but any size does.
    let mut t = Transfers::default();
    t.offer("", &offer()).unwrap();
    t.get("", &get(0, 0)).unwrap();
    let odd = source::serve(ID, &data(), 3, &get(0, 0)).unwrap();
    for c in &odd[..odd.len() - 1] {
        assert_eq!(t.chunk("", c), Ok(Seen::Chunk));
    }
    assert_eq!(
        t.chunk("", &odd[odd.len() - 1]),
        Ok(Seen::Complete { verified: true })
    );
}

/// ARTIFACT-005, ARTIFACT-011: resume by a token seen on a chunk continues exactly after
/// that chunk, and verification continues with it; an unknown token is refused; a token
/// naming two positions is refused.
#[test]
fn resume_by_token() {
    let mut t = machine();
    t.offer("", &offer()).unwrap();
    t.get("", &get(0, 0)).unwrap();
    let chunks = served(&get(0, 0));
    t.chunk("", &chunks[0]).unwrap();
    // The transfer breaks off; the receiver resumes with chunk 0's token.
    let token = chunks[0].resume_token.clone();
    assert!(!token.is_empty());
    assert!(
        chunks[2].resume_token.is_empty(),
        "nothing to resume after the end"
    );
    assert_eq!(
        t.get("", &resume(&token)),
        Ok(Seen::Requested { resumed: true })
    );
    let rest = served(&resume(&token));
    assert_eq!(
        rest,
        chunks[1..].to_vec(),
        "the same chunks as the first time"
    );
    assert!(matches!(
        t.chunk("", &chunks[0]),
        Err(TransferError::OutOfOrder { .. })
    ));
    t.chunk("", &rest[0]).unwrap();
    assert_eq!(t.chunk("", &rest[1]), Ok(Seen::Complete { verified: true }));
    // Unknown tokens.
    let e = t.get("", &resume("r1.1.4.10.00000000")).unwrap_err();
    assert!(matches!(e, TransferError::UnknownResumeToken { .. }), "{e}");
    assert_eq!(e.reply_code(), codes::INVALID_RESUME_TOKEN);
    assert_eq!(
        source::serve(ID, &data(), 4, &resume("nope")),
        Err(ServeError::UnknownResumeToken)
    );
    // A foreign token seen on a chunk works; the same token for another point does not.
    let mut t = machine();
    t.offer("", &offer()).unwrap();
    t.get("", &get(0, 0)).unwrap();
    let mut c0 = chunks[0].clone();
    c0.resume_token = "opaque-1".into();
    t.chunk("", &c0).unwrap();
    let mut c1 = chunks[1].clone();
    c1.resume_token = "opaque-1".into();
    assert_eq!(
        t.chunk("", &c1),
        Err(TransferError::TokenReused("\"opaque-1\"".into()))
    );
    assert_eq!(
        t.get("", &resume("opaque-1")),
        Ok(Seen::Requested { resumed: true })
    );
    assert_eq!(t.chunk("", &chunks[1]), Ok(Seen::Chunk));
}

/// ARTIFACT-005: the library's tokens work after a reconnect (a fresh machine): the sender
/// needs no memory, and the receiver's verification restarts.
#[test]
fn resume_after_reconnect() {
    let token = served(&get(0, 0))[0].resume_token.clone();
    let mut t = machine();
    t.offer("", &offer()).unwrap();
    assert_eq!(
        t.get("", &resume(&token)),
        Ok(Seen::Requested { resumed: true })
    );
    let rest = served(&resume(&token));
    t.chunk("", &rest[0]).unwrap();
    assert_eq!(
        t.chunk("", &rest[1]),
        Ok(Seen::Complete { verified: false })
    );
    assert_eq!(
        parse_resume_token(ID, &token),
        Some(ResumePoint {
            next_index: 1,
            next_offset: 4,
            end: 10
        })
    );
    assert_eq!(
        parse_resume_token("other", &token),
        None,
        "bound to its artifact"
    );
}

/// ARTIFACT-005: resume by range restart: a GET from where the received octets stop
/// continues verification.
#[test]
fn resume_by_range() {
    let mut t = machine();
    t.offer("", &offer()).unwrap();
    t.get("", &get(0, 0)).unwrap();
    let chunks = served(&get(0, 0));
    t.chunk("", &chunks[0]).unwrap();
    t.get("", &get(4, 0)).unwrap();
    let rest = served(&get(4, 0));
    t.chunk("", &rest[0]).unwrap();
    assert_eq!(t.chunk("", &rest[1]), Ok(Seen::Complete { verified: true }));
}

/// Chunks and ACKs need an offer (size and hash, ARTIFACT-002); chunks need a GET; a GET
/// before the offer is resolved when the offer comes.
#[test]
fn offer_and_get_order() {
    let chunks = served(&get(0, 0));
    let mut t = machine();
    assert!(matches!(
        t.chunk("", &chunks[0]),
        Err(TransferError::NotOffered { .. })
    ));
    assert_eq!(
        t.get("", &get(0, 0)),
        Ok(Seen::Requested { resumed: false })
    );
    assert!(matches!(
        t.chunk("", &chunks[0]),
        Err(TransferError::NotOffered { .. })
    ));
    t.offer("", &offer()).unwrap();
    for c in &chunks {
        t.chunk("", c).unwrap();
    }
    let mut t = machine();
    t.offer("", &offer()).unwrap();
    assert!(matches!(
        t.chunk("", &chunks[0]),
        Err(TransferError::NoTransfer(_))
    ));
    assert!(matches!(
        t.ack(
            "",
            &ArtAck {
                artifact_id: "x".into(),
                chunk_index: 0
            }
        ),
        Err(TransferError::NotOffered { .. })
    ));
}

/// Bounded memory: artifacts with a transfer in progress are kept; a new one is refused
/// when all are busy (ERR_RATE_LIMIT_EXCEEDED); oversized chunks are refused.
#[test]
fn bounded() {
    let mut t = Transfers::new(Config {
        max_artifacts: 1,
        max_chunk_bytes: 3,
        ..Config::default()
    });
    t.offer("", &offer()).unwrap();
    t.get("", &get(0, 0)).unwrap();
    let mut b = offer();
    b.artifact_id = "b".into();
    let e = t.offer("", &b).unwrap_err();
    assert_eq!(
        (e.clone(), e.code()),
        (TransferError::Full(1), ErrorCode::RateLimitExceeded)
    );
    let chunks = served(&get(0, 0));
    assert!(matches!(
        t.chunk("", &chunks[0]),
        Err(TransferError::ChunkTooLarge { len: 4, max: 3 })
    ));
    let mut t = Transfers::new(Config {
        max_artifacts: 1,
        ..Config::default()
    });
    t.offer("", &offer()).unwrap();
    assert_eq!(
        t.offer("", &b),
        Ok(Seen::Offered),
        "the first had no transfer in progress"
    );
    assert_eq!(t.len(), 1);
}

proptest! {
    /// ARTIFACT-004: for any size, range and chunk size, the plan covers the range exactly,
    /// contiguously, with global indexes and one terminal chunk, and the source's chunks
    /// pass the machine and verify when the range is the whole artifact.
    #[test]
    fn chunking_is_deterministic(total in 1u64..200, a in 0u64..200, b in 0u64..200, c in 1u64..40) {
        let (start, end) = (a % total, b % (total + 1));
        let Ok((start, end)) = resolve_range(total, start, end) else { return Ok(()); };
        let specs: Vec<_> = plan(start, end, c).collect();
        let mut at = start;
        for (i, s) in specs.iter().enumerate() {
            prop_assert_eq!(s.offset, at);
            prop_assert_eq!(s.index, s.offset / c);
            prop_assert!(s.len >= 1 && s.len <= c);
            prop_assert_eq!(s.is_terminal, i + 1 == specs.len());
            at += s.len;
        }
        prop_assert_eq!(at, end);
        let data = Bytes::from((0..total).map(|x| x as u8).collect::<Vec<_>>());
        let mut t = Transfers::new(Config { chunk_size: Some(c), ..Config::default() });
        t.offer("", &source::offer("x", &data, HashAlg::Sha384, Bytes::new())).unwrap();
        let g = ArtGet { artifact_id: "x".into(), start, end: if end == total { 0 } else { end }, resume_token: String::new() };
        t.get("", &g).unwrap();
        let mut last = None;
        for ch in source::serve("x", &data, c, &g).unwrap() {
            last = Some(t.chunk("", &ch).unwrap());
        }
        prop_assert_eq!(last, Some(Seen::Complete { verified: start == 0 && end == total }));
    }

    /// Tokens name their point and their artifact, and nothing else parses.
    #[test]
    fn tokens_round_trip(i in 0u64..1000, o in 0u64..1000, len in 1u64..1000, id in "[a-z]{1,8}", junk in ".{0,40}") {
        let p = ResumePoint { next_index: i, next_offset: o, end: o + len };
        let tok = resume_token(&id, &p);
        prop_assert_eq!(parse_resume_token(&id, &tok), Some(p));
        prop_assert_eq!(parse_resume_token(&format!("{id}-"), &tok), None);
        prop_assert_eq!(parse_resume_token(&id, &junk), None);
    }
}
