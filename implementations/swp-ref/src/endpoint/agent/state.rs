//! The reference's SWP-STATE store (profile 17): one store per connection, ids the raw
//! 32-octet SHA-256 of the blob (`state::IdScheme::Sha256`), holding from the start the
//! root state, blob `swp-test root` with no parents.
//!
//! A peer's `STATE_PUT` or `STATE_DELTA` is stored with no reply; one the store refuses (an
//! id that is not the blob's hash or not 32 octets, a declared parent it does not hold,
//! other content under a stored id) is rejected with an error frame,
//! `ERR_INVALID_PROFILE_PAYLOAD`. `STATE_GET` is answered on the request's msg_id with the
//! stored message unchanged, or with `STATE_ERR` `not_found` (`ERR_NOT_FOUND`), the same
//! every time.

use super::{refuse, Action, Config, Incoming, Out, ProfileAgent, Reject};
use bytes::Bytes;
use swp_profiles::p1::pb::state::{StateErr, StatePut};
use swp_profiles::p1::P1Form;
use swp_profiles::state::{self, IdScheme, Seen, StateMessage, Store, StoreError};
use swp_profiles::Profile;

/// The blob of the state the reference holds from the start.
pub const ROOT_BLOB: &[u8] = b"swp-test root";

/// The STATE state of one connection.
#[derive(Debug)]
pub struct Agent {
    store: Store,
    form: P1Form,
    /// What the store holds of the reference's own (the root state): not the peer's.
    own_bytes: usize,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Agent {
    /// A store holding the root state.
    pub fn new(form: P1Form) -> Self {
        let mut store = Store::new(state::Config {
            scheme: IdScheme::Sha256,
            ..state::Config::default()
        });
        let root = StatePut {
            state_id: IdScheme::Sha256.content_id(ROOT_BLOB),
            blob: Bytes::from_static(ROOT_BLOB),
            parent_ids: Vec::new(),
            metadata: Bytes::new(),
        };
        // An empty store with the default caps always takes it.
        let _ = store.put(&root);
        let own_bytes = store.bytes();
        Agent {
            store,
            form,
            own_bytes,
        }
    }

    fn answer(&self, m: &StateMessage, reply_to: &Bytes) -> Action {
        Action::Send(vec![Out::of::<Store>(self.form, m, Some(reply_to.clone()))])
    }
}

impl ProfileAgent for Agent {
    type Profile = Store;

    /// The states the peer stored (the root state is the reference's own).
    fn held_bytes(&self) -> usize {
        self.store.bytes().saturating_sub(self.own_bytes)
    }

    fn for_connection(_: &Config, form: P1Form) -> Self {
        Agent::new(form)
    }

    fn form(&self) -> P1Form {
        self.form
    }

    fn on_message(&mut self, m: StateMessage, at: Incoming<'_>) -> Result<Action, Reject> {
        // The peer's GET is answered here, not fed to the store's machine: that machine
        // judges one channel carrying both sides and records a GET as pending, so a PUT
        // answering it skips the parent check. The GETs this endpoint answers are the peer's
        // own; a PUT the peer sends after one answers nothing and is a store request whose
        // parents must exist (state_0105).
        let seen = match &m {
            StateMessage::Get(g) => match self.store.lookup(&g.state_id) {
                Some(entry) => Ok(Seen::Found(entry.clone())),
                None => Err(StoreError::NotFound(hex(&g.state_id))),
            },
            _ => self.store.step(at.ctx(), &m),
        };
        Ok(match seen {
            Ok(Seen::Found(entry)) => self.answer(&entry.to_message(), at.msg_id),
            Err(e @ StoreError::NotFound(_)) => {
                let id = match &m {
                    StateMessage::Get(g) => hex(&g.state_id),
                    _ => String::new(),
                };
                self.answer(
                    &StateMessage::Err(StateErr {
                        code: e.reply_code().into(),
                        message: format!("{}: no state {id}", e.code().as_str()),
                    }),
                    at.msg_id,
                )
            }
            Err(e) => return Err(refuse::<Self>(&e)),
            Ok(_) => Action::Nothing,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{code, outs};
    use super::*;
    use swp_core::ErrorCode;
    use swp_profiles::p1::pb::state::{StateDelta, StateGet};

    const ID: Bytes = Bytes::from_static(b"msg-000000000001");

    fn enc(m: StateMessage) -> Vec<u8> {
        state::encode(P1Form::Message, &m)
    }

    fn put(blob: &'static [u8], id: Bytes, parents: Vec<Bytes>) -> Vec<u8> {
        enc(StateMessage::Put(StatePut {
            state_id: id,
            blob: Bytes::from_static(blob),
            parent_ids: parents,
            metadata: Bytes::new(),
        }))
    }

    fn get(a: &mut Agent, id: &Bytes) -> StateMessage {
        let g = enc(StateMessage::Get(StateGet {
            state_id: id.clone(),
        }));
        let o = outs(a.handle(2, &ID, &g, "", 0));
        state::decode(P1Form::Message, o[0].msg_type, &o[0].payload).unwrap()
    }

    #[test]
    fn put_get_parents_and_deltas() {
        let mut a = Agent::new(P1Form::Message);
        let id = |b: &[u8]| IdScheme::Sha256.content_id(b);
        let root = id(ROOT_BLOB);
        assert!(matches!(get(&mut a, &root), StateMessage::Put(p) if p.blob == ROOT_BLOB));
        let child = id(b"c");
        assert_eq!(
            a.handle(1, &ID, &put(b"c", child.clone(), vec![root.clone()]), "", 0),
            Action::Nothing
        );
        assert!(
            matches!(get(&mut a, &child), StateMessage::Put(p) if p.parent_ids == [root.clone()])
        );
        // A delta is opaque: only its id's form is checked.
        let d = StateMessage::Delta(StateDelta {
            state_id: id(b"d"),
            delta: Bytes::from_static(b"\xff\x00 anything"),
            parent_ids: vec![child.clone()],
        });
        assert_eq!(a.handle(3, &ID, &enc(d.clone()), "", 0), Action::Nothing);
        assert_eq!(get(&mut a, &id(b"d")), d);
        // Missing: the same answer every time.
        let m1 = get(&mut a, &id(b"zz"));
        assert!(
            matches!(&m1, StateMessage::Err(e) if e.code == "not_found" && e.message.starts_with("ERR_NOT_FOUND"))
        );
        assert_eq!(get(&mut a, &id(b"zz")), m1);
    }

    #[test]
    fn bad_ids_and_missing_parents_are_rejected_and_not_stored() {
        let mut a = Agent::new(P1Form::Message);
        let id = |b: &[u8]| IdScheme::Sha256.content_id(b);
        assert_eq!(
            code(a.handle(1, &ID, &put(b"x", id(b"y"), vec![]), "", 0)),
            ErrorCode::InvalidProfilePayload
        );
        assert!(matches!(get(&mut a, &id(b"y")), StateMessage::Err(_)));
        assert_eq!(
            code(a.handle(1, &ID, &put(b"x", id(b"x"), vec![id(b"nope")]), "", 0)),
            ErrorCode::InvalidProfilePayload
        );
        assert!(matches!(get(&mut a, &id(b"x")), StateMessage::Err(_)));
        assert_eq!(
            code(a.handle(5, &ID, b"", "", 0)),
            ErrorCode::UnsupportedMsgType
        );
    }
}
