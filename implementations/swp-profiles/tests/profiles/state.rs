//! SWP-STATE (profile 17): content-addressed ids, parents that must exist, immutability,
//! deterministic missing state, opaque deltas, and answers to pending GETs.

use crate::FORMS;
use bytes::Bytes;
use prost::Message;
use swp_core::ErrorCode;
use swp_profiles::p1::pb::state::{StateDelta, StatePut};
use swp_profiles::payload::PayloadError;
use swp_profiles::state::id::IdError;
use swp_profiles::state::store::Config;
use swp_profiles::state::{self, codes, Entry, IdScheme, Seen, StateMessage, Store, StoreError};
use swp_profiles::{Ctx, Profile};

fn put(blob: &'static [u8], parents: &[&Bytes]) -> StatePut {
    StatePut {
        state_id: IdScheme::Sha256.content_id(blob),
        blob: Bytes::from_static(blob),
        parent_ids: parents.iter().map(|p| (*p).clone()).collect(),
        metadata: Bytes::new(),
    }
}

/// STATE-006: msg_types outside 1..=4 are ERR_UNSUPPORTED_MSG_TYPE.
#[test]
fn unassigned_msg_types_are_unsupported() {
    for form in FORMS {
        for t in [0, 5, 6] {
            assert_eq!(
                state::decode(form, t, b"").unwrap_err().code(),
                ErrorCode::UnsupportedMsgType
            );
        }
    }
}

/// STATE-001: the ids each class needs; blobs, deltas and metadata may be empty.
#[test]
fn required_fields() {
    for form in FORMS {
        let mut p = put(b"", &[]);
        assert!(state::decode(form, 1, &form.frame(1, p.encode_to_vec())).is_ok());
        p.parent_ids.push(Bytes::new());
        assert!(matches!(
            state::decode(form, 1, &form.frame(1, p.encode_to_vec())),
            Err(PayloadError::MissingField {
                field: "parent_ids[]",
                ..
            })
        ));
        for t in [1, 2, 3] {
            assert!(matches!(
                state::decode(form, t, &form.frame(t, vec![])),
                Err(PayloadError::MissingField {
                    field: "state_id",
                    ..
                })
            ));
        }
    }
}

/// STATE-002, STATE-005: under the default scheme every id is the SHA-256 of its blob;
/// the other schemes are parameters.
#[test]
fn ids_match_content() {
    let mut s = Store::default();
    assert_eq!(s.put(&put(b"hello", &[])), Ok(Seen::Stored));
    let mut wrong = put(b"hello", &[]);
    wrong.blob = Bytes::from_static(b"hellO");
    let e = s.put(&wrong).unwrap_err();
    assert!(
        matches!(
            e,
            StoreError::BadId {
                error: IdError::Mismatch,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        (e.code(), e.reply_code()),
        (ErrorCode::InvalidProfilePayload, codes::HASH_MISMATCH)
    );
    let mut named = put(b"x", &[]);
    named.state_id = Bytes::from_static(b"my-state");
    let e = s.put(&named).unwrap_err();
    assert_eq!(e.reply_code(), codes::INVALID_STATE_ID);
    // Tagged: "sha256:<hex>" is checked, other ids are names.
    let mut s = Store::new(Config {
        scheme: IdScheme::Tagged,
        ..Config::default()
    });
    let tagged_id = IdScheme::Tagged.content_id(b"x");
    assert_eq!(&tagged_id[..7], b"sha256:");
    let mut p = put(b"x", &[]);
    p.state_id = tagged_id;
    assert_eq!(s.put(&p), Ok(Seen::Stored));
    assert_eq!(s.put(&named), Ok(Seen::Stored));
    p.blob = Bytes::from_static(b"y");
    assert!(s.put(&p).is_err());
    // Opaque: anything.
    let mut s = Store::new(Config {
        scheme: IdScheme::Opaque,
        ..Config::default()
    });
    assert_eq!(s.put(&named), Ok(Seen::Stored));
}

/// STATE-003, STATE-004, state_0004: declared parents must exist; a valid DAG (a root, a
/// child, a merge of two) is accepted.
#[test]
fn parents_must_exist() {
    let mut s = Store::default();
    let root = put(b"root", &[]);
    let left = put(b"left", &[&root.state_id]);
    let right = put(b"right", &[&root.state_id]);
    let merge = put(b"merge", &[&left.state_id, &right.state_id]);
    let e = s.put(&left).unwrap_err();
    assert!(matches!(e, StoreError::MissingParent { .. }), "{e}");
    assert_eq!(e.reply_code(), codes::MISSING_PARENT);
    assert!(s.is_empty(), "a refused PUT stores nothing");
    for p in [&root, &left, &right, &merge] {
        assert_eq!(s.put(p), Ok(Seen::Stored));
    }
    // A state cannot name itself: it does not exist before it is stored.
    let mut selfish = put(b"self", &[]);
    selfish.parent_ids = vec![selfish.state_id.clone()];
    assert!(matches!(
        s.put(&selfish),
        Err(StoreError::MissingParent { .. })
    ));
}

/// States are immutable: the same state again is a duplicate, other content under its id
/// is refused.
#[test]
fn immutable() {
    let mut s = Store::default();
    let p = put(b"v1", &[]);
    s.put(&p).unwrap();
    assert_eq!(s.put(&p), Ok(Seen::Duplicate));
    let mut meta = p.clone();
    meta.metadata = Bytes::from_static(b"m");
    assert!(matches!(s.put(&meta), Err(StoreError::Conflicting(_))));
}

/// STATE-007: a missing state is ERR_NOT_FOUND, every time; a stored one comes back as it
/// was stored, in either form.
#[test]
fn get_is_deterministic() {
    let mut s = Store::default();
    let p = put(b"v1", &[]);
    for _ in 0..2 {
        let e = s.get(&p.state_id).unwrap_err();
        assert_eq!(
            (e.code(), e.reply_code()),
            (ErrorCode::NotFound, codes::NOT_FOUND)
        );
    }
    s.put(&p).unwrap();
    let Ok(Seen::Found(entry)) = s.get(&p.state_id) else {
        panic!()
    };
    assert_eq!(entry, Entry::Put(p.clone()));
    for form in FORMS {
        let m = entry.to_message();
        assert_eq!(state::decode(form, 1, &state::encode(form, &m)), Ok(m));
    }
}

/// state_0005: a delta's octets are opaque and come back unchanged; its id can only be
/// checked for form; its parents must exist.
#[test]
fn deltas_are_opaque() {
    let mut s = Store::default();
    let base = put(b"base", &[]);
    s.put(&base).unwrap();
    let d = StateDelta {
        state_id: IdScheme::Sha256.content_id(b"base+1"),
        delta: Bytes::from_static(b"\x00\xff not even utf-8 \xfe"),
        parent_ids: vec![base.state_id.clone()],
    };
    assert_eq!(s.delta(&d), Ok(Seen::Stored));
    assert_eq!(s.get(&d.state_id), Ok(Seen::Found(Entry::Delta(d.clone()))));
    assert_eq!(
        Entry::Delta(d.clone()).to_message(),
        StateMessage::Delta(d.clone())
    );
    let mut short = d.clone();
    short.state_id = Bytes::from_static(b"short");
    assert!(matches!(
        s.delta(&short),
        Err(StoreError::BadId {
            error: IdError::Malformed(_),
            ..
        })
    ));
    let mut orphan = d.clone();
    orphan.state_id = IdScheme::Sha256.content_id(b"other");
    orphan.parent_ids = vec![IdScheme::Sha256.content_id(b"nowhere")];
    assert!(matches!(
        s.delta(&orphan),
        Err(StoreError::MissingParent { .. })
    ));
}

/// Judging the other side: a PUT answering a pending GET is an answer, its parents
/// unknown to this side; its id must still fit.
#[test]
fn answers_to_pending_gets() {
    let mut s = Store::default();
    let parent = IdScheme::Sha256.content_id(b"history");
    let answer = put(b"tip", &[&parent]);
    assert!(s.get(&answer.state_id).is_err());
    assert_eq!(
        s.step(Ctx::default(), &StateMessage::Put(answer.clone())),
        Ok(Seen::Answer)
    );
    assert_eq!(s.put(&answer), Ok(Seen::Duplicate));
    let mut bad = put(b"tip2", &[]);
    let _ = s.get(&bad.state_id);
    bad.blob = Bytes::from_static(b"tampered");
    assert!(matches!(s.put(&bad), Err(StoreError::BadId { .. })));
}

/// Bounded memory: nothing is evicted; a full store refuses with ERR_RATE_LIMIT_EXCEEDED.
#[test]
fn bounded() {
    let mut s = Store::new(Config {
        max_states: 1,
        ..Config::default()
    });
    s.put(&put(b"a", &[])).unwrap();
    let e = s.put(&put(b"b", &[])).unwrap_err();
    assert_eq!(
        (e.clone(), e.code()),
        (StoreError::Full(1), ErrorCode::RateLimitExceeded)
    );
    let mut s = Store::new(Config {
        max_bytes: 40,
        ..Config::default()
    });
    s.put(&put(b"a", &[])).unwrap(); // 33 octets
    assert!(matches!(
        s.put(&put(b"bbbbbbbb", &[])),
        Err(StoreError::Full(_))
    ));
    assert_eq!(s.len(), 1);
}
