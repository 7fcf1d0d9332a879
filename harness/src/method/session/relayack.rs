//! Publisher acknowledgements of a relay (SWP-RELAY, profile 19), set aside from what the
//! vectors read. swp-relay does not say whether a relay sends its publisher a `RELAY_ACK`
//! for a publish it took (SI-P19-2), so the relay vectors' flows list only what reaches the
//! consumer, and this ledger takes every `RELAY_ACK` the relay sends out of the stream: it
//! must name a delivery the harness published, and the manifest's `RELAY_PUBLISHER_ACK`
//! (`0`: never, `1`: every publish the relay delivered is acknowledged) is held at the end.
//! Undeclared, either choice passes.

use crate::frames::{e1, Envelope};
use crate::p1::pb::types::relay::{RelayAck, RelayPublish};
use crate::p1::P1Form;
use std::collections::BTreeSet;

const PROFILE: u64 = 19;
const PUBLISH: u64 = 1;
const ACK: u64 = 2;

/// What the relay was sent and acknowledged in one vector.
#[derive(Debug, Clone)]
pub struct PublisherAcks {
    /// `RELAY_PUBLISHER_ACK`: `Some(false)` never, `Some(true)` always, `None` either.
    declared: Option<bool>,
    form: P1Form,
    published: BTreeSet<Vec<u8>>,
    delivered: BTreeSet<Vec<u8>>,
    acked: Vec<Vec<u8>>,
}

fn bare<M: prost::Message + Default>(form: P1Form, msg_type: u64, payload: &[u8]) -> Option<M> {
    let b = form.unwrap(PROFILE, msg_type, payload).ok()?;
    M::decode(&b[..]).ok()
}

impl PublisherAcks {
    /// A ledger for a relay that declared `declared` and speaks P1 in `form`.
    pub fn new(declared: Option<bool>, form: P1Form) -> Self {
        PublisherAcks {
            declared,
            form,
            published: BTreeSet::new(),
            delivered: BTreeSet::new(),
            acked: Vec::new(),
        }
    }

    /// Octets the harness sent: the delivery_ids of the publishes among them.
    pub fn sent(&mut self, octets: &[u8], limits: &crate::frames::Limits) {
        let mut rest = bytes::Bytes::copy_from_slice(octets);
        while let Ok(Some((body, tail))) = crate::frames::take_frame(&rest, limits) {
            if let Ok(e) = e1::decode(&body, limits) {
                if (e.profile_id, e.msg_type) == (PROFILE, PUBLISH) {
                    if let Some(p) = bare::<RelayPublish>(self.form, PUBLISH, &e.payload) {
                        self.published.insert(p.delivery_id.to_vec());
                    }
                }
            }
            rest = tail;
        }
    }

    /// A frame from the relay: true when it is a publisher acknowledgement, which the caller
    /// sets aside; deliveries are noted and passed on.
    pub fn observe(&mut self, env: &Envelope) -> bool {
        if env.profile_id != PROFILE {
            return false;
        }
        match env.msg_type {
            ACK => match bare::<RelayAck>(self.form, ACK, &env.payload) {
                Some(a) => {
                    self.acked.push(a.delivery_id.to_vec());
                    true
                }
                // Not decodable: leave it to the flow, which reports it.
                None => false,
            },
            PUBLISH => {
                if let Some(p) = bare::<RelayPublish>(self.form, PUBLISH, &env.payload) {
                    self.delivered.insert(p.delivery_id.to_vec());
                }
                false
            }
            _ => false,
        }
    }

    /// Whether any acknowledgement was set aside (for the transcript).
    pub fn seen(&self) -> usize {
        self.acked.len()
    }

    /// The acknowledgements against what was published and what the manifest declares.
    pub fn check(&self) -> Result<(), String> {
        let show = |id: &[u8]| String::from_utf8_lossy(id).into_owned();
        if let Some(a) = self.acked.iter().find(|a| !self.published.contains(*a)) {
            return Err(format!(
                "the relay sent RELAY_ACK for delivery_id {:?}, which the harness never published",
                show(a)
            ));
        }
        match self.declared {
            Some(false) if !self.acked.is_empty() => Err(format!(
                "the relay acknowledged its publisher ({} RELAY_ACK) although the manifest declares RELAY_PUBLISHER_ACK: 0",
                self.acked.len()
            )),
            Some(true) => match self.delivered.iter().find(|d| {
                self.published.contains(*d) && !self.acked.contains(d)
            }) {
                Some(d) => Err(format!(
                    "the relay delivered delivery_id {:?} but never acknowledged its publisher, which the manifest declares (RELAY_PUBLISHER_ACK: 1)",
                    show(d)
                )),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use prost::Message;

    fn env(msg_type: u64, payload: Vec<u8>) -> Envelope {
        Envelope {
            version: 1,
            profile_id: PROFILE,
            msg_type,
            flags: 0,
            ts_unix_ms: 0,
            msg_id: Bytes::from_static(b"relay-msg-01"),
            extensions: crate::frames::Extensions::from_entries(Vec::<(u64, Vec<u8>)>::new()),
            payload: Bytes::from(payload),
        }
    }

    fn publish(id: &'static [u8]) -> Envelope {
        let p = RelayPublish {
            delivery_id: Bytes::from_static(id),
            ..Default::default()
        };
        env(PUBLISH, p.encode_to_vec())
    }

    fn ack(id: &'static [u8]) -> Envelope {
        let a = RelayAck {
            delivery_id: Bytes::from_static(id),
        };
        env(ACK, a.encode_to_vec())
    }

    fn ledger(declared: Option<bool>) -> PublisherAcks {
        let mut l = PublisherAcks::new(declared, P1Form::Message);
        let sent = e1::frame_bytes(&publish(b"d1")).unwrap();
        l.sent(&sent, &crate::method::session::conv::reply_limits(1 << 20));
        assert!(!l.observe(&publish(b"d1")), "deliveries are passed on");
        l
    }

    #[test]
    fn acknowledgements_are_set_aside_and_held_to_the_declaration() {
        // Undeclared: with or without the ACK.
        let mut l = ledger(None);
        assert_eq!(l.check(), Ok(()));
        assert!(l.observe(&ack(b"d1")));
        assert_eq!(l.check(), Ok(()));
        // Declared never: an ACK fails.
        let mut l = ledger(Some(false));
        assert!(l.observe(&ack(b"d1")));
        assert!(l.check().unwrap_err().contains("RELAY_PUBLISHER_ACK: 0"));
        // Declared always: a delivery without its ACK fails, with it passes.
        let mut l = ledger(Some(true));
        assert!(l.check().unwrap_err().contains("never acknowledged"));
        l.observe(&ack(b"d1"));
        assert_eq!(l.check(), Ok(()));
    }

    #[test]
    fn an_acknowledgement_of_nothing_published_fails() {
        let mut l = ledger(None);
        assert!(l.observe(&ack(b"made-up")));
        assert!(l.check().unwrap_err().contains("never published"));
    }
}
