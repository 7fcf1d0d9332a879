//! SWP-STATE (profile 17, swp-state.md): state ids and their consistency with the blob
//! (§4, §6) under the SUT's declared id scheme, parents that exist before the state naming
//! them (§4, §6), and immutability (§5), as docs/spec-issues-profiles.md reads them: the
//! store is shared by both sides of the connection, and a PUT or DELTA answering a pending
//! GET is judged by its id only, since the asker may never have seen its parents.

use super::common::{digest, lower_hex, show, trackable, Digest, Table};
use super::config::{Ctx, IdScheme};
use super::verdict::{decode, Level, Rule, Side, Violation};
use crate::p1::pb::types::state::{StateDelta, StateErr, StateGet, StatePut};
use sha2::{Digest as _, Sha256};

/// The profile_id of SWP-STATE.
pub(super) const PROFILE_ID: u64 = 17;

const MSG_TYPE: Rule = Rule {
    name: "state.msg-type-assigned",
    profile: "STATE",
    requirement: "STATE-006",
    level: Level::Must,
    section: "§3, §6",
    checks: "msg_type is 1 PUT, 2 GET, 3 DELTA or 4 ERR",
};
const NAMES_STATE: Rule = Rule {
    name: "state.names-state",
    profile: "STATE",
    requirement: "STATE-005",
    level: Level::Must,
    section: "§4, §6 (SI: required fields)",
    checks: "STATE_PUT, STATE_GET and STATE_DELTA carry a non-empty state_id",
};
const PARENT_ID_PRESENT: Rule = Rule {
    name: "state.parent-id-present",
    profile: "STATE",
    requirement: "STATE-003",
    level: Level::Must,
    section: "§4 (SI: required fields)",
    checks: "no parent id of a PUT or DELTA is empty",
};
const ID_FORM: Rule = Rule {
    name: "state.id-form",
    profile: "STATE",
    requirement: "STATE-005",
    level: Level::Must,
    section: "§4, §6 (SI: IdScheme, SI-P-STATE-1)",
    checks: "a PUT's or DELTA's id, and its parent ids unless it answers a GET, have the form STATE_ID_SCHEME gives (sha256: 32 octets; tagged: sha256:+64 hex)",
};
const ID_MATCHES_BLOB: Rule = Rule {
    name: "state.id-matches-blob",
    profile: "STATE",
    requirement: "STATE-005",
    level: Level::Must,
    section: "§4, §6 (SI: IdScheme)",
    checks: "a STATE_PUT's hash id is the SHA-256 of its blob, under a hashing STATE_ID_SCHEME",
};
const PARENT_EXISTS: Rule = Rule {
    name: "state.parent-exists",
    profile: "STATE",
    requirement: "STATE-003",
    level: Level::Must,
    section: "§4, §6",
    checks: "every parent a PUT or DELTA declares was stored before it (answers to a GET excepted)",
};
const IMMUTABLE: Rule = Rule {
    name: "state.immutable",
    profile: "STATE",
    requirement: "STATE-010",
    level: Level::Must,
    section: "§5 (SI: immutable)",
    checks: "a state_id, once stored, is never sent again with other content",
};

/// Every SWP-STATE rule.
pub(super) const RULES: &[&Rule] = &[
    &MSG_TYPE,
    &NAMES_STATE,
    &PARENT_ID_PRESENT,
    &ID_FORM,
    &ID_MATCHES_BLOB,
    &PARENT_EXISTS,
    &IMMUTABLE,
];

/// A stored state: a PUT or a DELTA.
pub(super) struct Entry {
    state_id: Vec<u8>,
    parents: Vec<Vec<u8>>,
    /// The blob of a PUT (its id may be its hash); `None` for a DELTA.
    blob: Option<Vec<u8>>,
    content: Digest,
}

/// A decoded SWP-STATE message whose own fields hold.
pub(super) enum Msg {
    Store(Entry),
    Get(Vec<u8>),
    Err,
}

fn content(kind: &[u8], body: &[u8], extra: &[u8], parents: &[Vec<u8>]) -> Digest {
    let mut parts: Vec<&[u8]> = vec![kind, body, extra];
    parts.extend(parents.iter().map(Vec::as_slice));
    digest(&parts)
}

/// Decodes by msg_type and checks the class's required fields.
pub(super) fn check(msg_type: u64, bare: &[u8]) -> Result<Msg, Violation> {
    let entry = match msg_type {
        1 => {
            let m: StatePut = decode(bare, "state.StatePut")?;
            let parents: Vec<Vec<u8>> = m.parent_ids.iter().map(|p| p.to_vec()).collect();
            Entry {
                content: content(b"put", &m.blob, &m.metadata, &parents),
                state_id: m.state_id.to_vec(),
                parents,
                blob: Some(m.blob.to_vec()),
            }
        }
        2 => {
            let m: StateGet = decode(bare, "state.StateGet")?;
            if m.state_id.is_empty() {
                return Err(NAMES_STATE.violation("STATE_GET without state_id"));
            }
            return Ok(Msg::Get(m.state_id.to_vec()));
        }
        3 => {
            let m: StateDelta = decode(bare, "state.StateDelta")?;
            let parents: Vec<Vec<u8>> = m.parent_ids.iter().map(|p| p.to_vec()).collect();
            Entry {
                content: content(b"delta", &m.delta, b"", &parents),
                state_id: m.state_id.to_vec(),
                parents,
                blob: None,
            }
        }
        4 => {
            let _: StateErr = decode(bare, "state.StateErr")?;
            return Ok(Msg::Err);
        }
        t => return Err(MSG_TYPE.violation(format!("msg_type {t} is not assigned in SWP-STATE"))),
    };
    if entry.state_id.is_empty() {
        return Err(NAMES_STATE.violation("STATE_PUT or STATE_DELTA without state_id"));
    }
    if entry.parents.iter().any(Vec::is_empty) {
        return Err(PARENT_ID_PRESENT.violation(format!(
            "state {} declares an empty parent id",
            show(&entry.state_id)
        )));
    }
    Ok(Msg::Store(entry))
}

const TAG: &[u8] = b"sha256:";

/// Whether an id has the form the scheme gives it.
fn id_form_ok(scheme: IdScheme, id: &[u8]) -> bool {
    match scheme {
        IdScheme::Sha256 => id.len() == 32,
        IdScheme::Tagged => match id.strip_prefix(TAG) {
            Some(hex) => hex.len() == 64 && lower_hex(hex),
            None => true,
        },
        IdScheme::Opaque => true,
    }
}

fn check_form(scheme: Option<IdScheme>, id: &[u8], what: &str) -> Result<(), Violation> {
    match scheme {
        Some(s) if !id_form_ok(s, id) => Err(ID_FORM.violation(format!(
            "{what} {} does not have the {} id form",
            show(id),
            s.as_str()
        ))),
        _ => Ok(()),
    }
}

/// The stored states (shared by both sides) and the GETs each side has pending.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct State {
    store: Table<Vec<u8>, Digest>,
    pending: Table<(Side, Vec<u8>), u32>,
}

impl State {
    /// Judges `msg` from `ctx.side`, then records it.
    pub(super) fn observe(&mut self, ctx: &Ctx, msg: Msg) -> Result<(), Violation> {
        let scheme = ctx.config.state_id_scheme;
        match msg {
            Msg::Get(id) => {
                // A GET's id is not held to the scheme's form (SI-P-STATE-1): it carries no
                // content to be consistent with, and an id no state can have is a missing
                // state, answered deterministically (STATE-007), not an invalid request.
                if trackable(&id) {
                    let key = (ctx.side, id);
                    let n = self.pending.get(&key).copied().unwrap_or(0);
                    self.pending.insert(key, n.saturating_add(1));
                }
                Ok(())
            }
            Msg::Store(e) => self.store(ctx, scheme, e),
            // STATE_ERR names no state: it is tied to nothing (SI).
            Msg::Err => Ok(()),
        }
    }

    fn store(&mut self, ctx: &Ctx, scheme: Option<IdScheme>, e: Entry) -> Result<(), Violation> {
        let answer_key = (ctx.side.other(), e.state_id.clone());
        let pending = if trackable(&e.state_id) {
            self.pending.get(&answer_key).copied().unwrap_or(0)
        } else {
            0
        };
        check_form(scheme, &e.state_id, "state id")?;
        // An answer to the peer's GET is judged by its id only (SI: judging an answer): its
        // parents are the stored state's, which the asker never saw stored, so neither their
        // existence nor their form is the answer's to prove. The same state again is a
        // duplicate, judged when it was first stored.
        let duplicate =
            trackable(&e.state_id) && self.store.get(&e.state_id).is_some_and(|c| *c == e.content);
        if pending == 0 && !duplicate {
            for p in &e.parents {
                check_form(scheme, p, "parent id")?;
            }
        }
        if let Some(blob) = &e.blob {
            let hash: [u8; 32] = Sha256::digest(blob).into();
            let consistent = match scheme {
                Some(IdScheme::Sha256) => e.state_id == hash,
                Some(IdScheme::Tagged) => match e.state_id.strip_prefix(TAG) {
                    Some(hex) => hex == hex::encode(hash).as_bytes(),
                    None => true,
                },
                Some(IdScheme::Opaque) | None => true,
            };
            if !consistent {
                return Err(ID_MATCHES_BLOB.violation(format!(
                    "state id {} is not the SHA-256 of its blob",
                    show(&e.state_id)
                )));
            }
        }
        if !trackable(&e.state_id) {
            return Ok(());
        }
        match self.store.get(&e.state_id) {
            Some(prev) if *prev != e.content => {
                return Err(IMMUTABLE.violation(format!(
                    "state {} sent again with other content",
                    show(&e.state_id)
                )))
            }
            // The same state again: a duplicate, judged when first stored.
            Some(_) => {}
            None if pending > 0 => {}
            None => {
                let missing = e
                    .parents
                    .iter()
                    .find(|p| trackable(p) && !self.store.contains(p) && !self.store.overflowed());
                if let Some(p) = missing {
                    return Err(PARENT_EXISTS.violation(format!(
                        "state {} declares parent {}, which was not stored before it",
                        show(&e.state_id),
                        show(p)
                    )));
                }
            }
        }
        self.store.insert(e.state_id.clone(), e.content);
        if pending > 1 {
            self.pending.insert(answer_key, pending - 1);
        } else if pending == 1 {
            self.pending.remove(&answer_key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{enc, full_config, sequence_property, Run, Step};
    use super::super::{Config, Side::*};
    use super::*;
    use proptest::prelude::*;

    fn sha(blob: &[u8]) -> Vec<u8> {
        Sha256::digest(blob).to_vec()
    }
    fn put(id: &[u8], blob: &[u8], parents: &[&[u8]]) -> StatePut {
        StatePut {
            state_id: id.to_vec().into(),
            blob: blob.to_vec().into(),
            parent_ids: parents.iter().map(|p| p.to_vec().into()).collect(),
            metadata: Default::default(),
        }
    }
    fn delta(id: &[u8], d: &[u8], parents: &[&[u8]]) -> StateDelta {
        StateDelta {
            state_id: id.to_vec().into(),
            delta: d.to_vec().into(),
            parent_ids: parents.iter().map(|p| p.to_vec().into()).collect(),
        }
    }
    fn get(id: &[u8]) -> StateGet {
        StateGet {
            state_id: id.to_vec().into(),
        }
    }
    fn with_scheme(s: IdScheme) -> Run {
        Run::with(
            PROFILE_ID,
            Config {
                state_id_scheme: Some(s),
                ..Config::default()
            },
        )
    }

    #[test]
    fn msg_type_must_be_assigned() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Harness, 5, &get(b"x"), "state.msg-type-assigned");
        r.ok(Harness, 2, &get(b"x"));
    }

    #[test]
    fn ids_and_parent_ids_are_present() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Harness, 1, &put(b"", b"b", &[]), "state.names-state");
        r.err(Harness, 2, &get(b""), "state.names-state");
        r.err(Harness, 3, &delta(b"", b"d", &[]), "state.names-state");
        r.ok(Harness, 1, &put(b"root", b"b", &[]));
        r.err(
            Harness,
            1,
            &put(b"x", b"b", &[b"root", b""]),
            "state.parent-id-present",
        );
        r.err(
            Harness,
            3,
            &delta(b"x", b"d", &[b""]),
            "state.parent-id-present",
        );
        r.ok(Harness, 3, &delta(b"x", b"d", &[b"root"]));
        r.ok(Endpoint, 4, &StateErr::default());
    }

    #[test]
    fn ids_have_the_declared_form() {
        let mut r = with_scheme(IdScheme::Sha256);
        r.err(Harness, 3, &delta(b"short", b"d", &[]), "state.id-form");
        let root = sha(b"root");
        r.ok(Harness, 1, &put(&root, b"root", &[]));
        r.err(
            Harness,
            3,
            &delta(&[7u8; 32], b"d", &[b"short"]),
            "state.id-form",
        );
        r.ok(Harness, 3, &delta(&[7u8; 32], b"d", &[&root]));
        let mut t = with_scheme(IdScheme::Tagged);
        t.err(Harness, 1, &put(b"sha256:ABC", b"b", &[]), "state.id-form");
        t.ok(Harness, 1, &put(b"a-name", b"b", &[]));
        // Undeclared or opaque: any id.
        Run::new(PROFILE_ID).ok(Harness, 3, &delta(b"short", b"d", &[]));
        with_scheme(IdScheme::Opaque).ok(Harness, 3, &delta(b"short", b"d", &[]));
    }

    #[test]
    fn a_get_for_an_id_no_state_can_have_asks_for_a_missing_state() {
        // Found by tests/rules_differential.rs, SI-P-STATE-1: a GET carries no content, so
        // its id has nothing to be consistent with; it is answered as missing (STATE-007).
        let mut r = with_scheme(IdScheme::Sha256);
        r.ok(Harness, 2, &get(b"short"));
        r.ok(Endpoint, 4, &StateErr::default());
        let mut t = with_scheme(IdScheme::Tagged);
        t.ok(Endpoint, 2, &get(b"sha256:ABC"));
    }

    #[test]
    fn a_hash_id_is_the_hash_of_the_blob() {
        let mut r = with_scheme(IdScheme::Sha256);
        r.err(
            Endpoint,
            1,
            &put(&sha(b"other"), b"root", &[]),
            "state.id-matches-blob",
        );
        r.ok(Endpoint, 1, &put(&sha(b"root"), b"root", &[]));
        let mut t = with_scheme(IdScheme::Tagged);
        let tagged = |b: &[u8]| format!("sha256:{}", hex::encode(sha(b))).into_bytes();
        t.err(
            Endpoint,
            1,
            &put(&tagged(b"other"), b"root", &[]),
            "state.id-matches-blob",
        );
        t.ok(Endpoint, 1, &put(&tagged(b"root"), b"root", &[]));
        t.ok(Endpoint, 1, &put(b"named", b"root", &[]));
    }

    #[test]
    fn parents_exist_before_the_state_naming_them() {
        let mut r = Run::new(PROFILE_ID);
        r.err(
            Harness,
            1,
            &put(b"child", b"c", &[b"root"]),
            "state.parent-exists",
        );
        r.err(
            Harness,
            1,
            &put(b"self", b"c", &[b"self"]),
            "state.parent-exists",
        );
        r.ok(Endpoint, 1, &put(b"root", b"r", &[]));
        // The store is shared: the other side's state is a parent too.
        r.ok(Harness, 1, &put(b"child", b"c", &[b"root"]));
        r.err(
            Endpoint,
            3,
            &delta(b"d", b"x", &[b"nope"]),
            "state.parent-exists",
        );
        r.ok(Endpoint, 3, &delta(b"d", b"x", &[b"child"]));
    }

    #[test]
    fn an_answer_to_a_get_is_judged_by_its_id_only() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 2, &get(b"leaf"));
        r.ok(Endpoint, 1, &put(b"leaf", b"l", &[b"unseen-parent"]));
        // Answered once; the same content again is a duplicate.
        r.ok(Endpoint, 1, &put(b"leaf", b"l", &[b"unseen-parent"]));
        r.err(
            Endpoint,
            1,
            &put(b"leaf2", b"l", &[b"unseen-parent"]),
            "state.parent-exists",
        );
    }

    #[test]
    fn an_answers_parent_ids_are_not_held_to_the_id_form() {
        // Found by tests/rules_differential.rs: the parents of an answer were held to the
        // scheme's id form although the reading (SI: judging an answer) checks its id only.
        let mut r = with_scheme(IdScheme::Sha256);
        let id = sha(b"l");
        r.ok(Harness, 2, &get(&id));
        r.ok(Endpoint, 1, &put(&id, b"l", &[b"name"]));
        // The same state again is a duplicate of the answer, not a new state to judge.
        r.ok(Endpoint, 1, &put(&id, b"l", &[b"name"]));
        // Its own id still is, and a state nobody asked for is held to both.
        let wrong = sha(b"x");
        r.ok(Harness, 2, &get(&wrong));
        r.err(
            Endpoint,
            1,
            &put(&wrong, b"l", &[]),
            "state.id-matches-blob",
        );
        let other = sha(b"m");
        r.err(Endpoint, 1, &put(&other, b"m", &[b"name"]), "state.id-form");
    }

    #[test]
    fn a_stored_state_never_changes() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &put(b"root", b"r", &[]));
        r.ok(Endpoint, 1, &put(b"root", b"r", &[]));
        r.err(Endpoint, 1, &put(b"root", b"other", &[]), "state.immutable");
        r.err(Endpoint, 3, &delta(b"root", b"r", &[]), "state.immutable");
    }

    fn step() -> impl Strategy<Value = Step> {
        let id = prop::sample::select(vec![&b"a"[..], b"b", b"c", b""]);
        let parents = prop::collection::vec(prop::sample::select(vec![&b"a"[..], b"b", b""]), 0..3);
        let side = prop::sample::select(vec![Harness, Endpoint]);
        let msg = prop_oneof![
            (
                id.clone(),
                prop::sample::select(vec![&b"x"[..], b"y"]),
                parents.clone()
            )
                .prop_map(|(i, b, p)| (1u64, enc(&put(i, b, &p)))),
            id.clone().prop_map(|i| (2u64, enc(&get(i)))),
            (id, parents).prop_map(|(i, p)| (3u64, enc(&delta(i, b"d", &p)))),
            (0u64..6, prop::collection::vec(any::<u8>(), 0..16)),
        ];
        (0u64..100, side, msg).prop_map(|(t, s, (mt, b))| (t, s, mt, b))
    }

    proptest! {
        #[test]
        fn sequences_keep_the_state_on_refusal(steps in prop::collection::vec(step(), 0..40)) {
            sequence_property(PROFILE_ID, &Config::default(), &steps);
            sequence_property(PROFILE_ID, &full_config(), &steps);
            sequence_property(PROFILE_ID, &Config { state_id_scheme: Some(IdScheme::Tagged), ..Config::default() }, &steps);
        }
    }
}
