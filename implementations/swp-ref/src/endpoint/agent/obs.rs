//! The reference's SWP-OBS context (profile 18): one trace context per peer scope on the
//! connection, with no tracestate keys of its own. `OBS_SET` makes a context current, with
//! no reply; an invalid traceparent is rejected (`ERR_INVALID_PROFILE_PAYLOAD`) and the
//! context in effect stays. `OBS_GET` is answered with `OBS_DOC` on the request's msg_id:
//! the context in effect octet for octet, or an empty document when none was set.

use super::{reject, Action, Out};
use bytes::Bytes;
use swp_profiles::obs::{self, Contexts, ObsMessage, Seen};
use swp_profiles::p1::pb::obs::ObsDoc;
use swp_profiles::p1::P1Form;
use swp_profiles::{Ctx, Profile};

/// The OBS state of one connection.
#[derive(Debug)]
pub struct Agent {
    contexts: Contexts,
    form: P1Form,
}

impl Agent {
    /// The agent with the library's caps and no own tracestate keys.
    pub fn new(form: P1Form) -> Self {
        Agent {
            contexts: Contexts::new(obs::Config::default()),
            form,
        }
    }

    /// One envelope from the peer.
    pub fn handle(&mut self, msg_type: u64, msg_id: &Bytes, payload: &[u8], scope: &str) -> Action {
        let m = match obs::decode(self.form, msg_type, payload) {
            Ok(m) => m,
            Err(e) => return reject(e.code(), e),
        };
        match self.contexts.step(Ctx::scoped(scope), &m) {
            Err(e) => reject(e.code(), e),
            Ok(Seen::Snapshot { current, .. }) => {
                let doc = ObsMessage::Doc(current.map_or_else(ObsDoc::default, |c| c.to_doc()));
                // Our answer passes our own judge: the context comes back unchanged.
                if self.contexts.step(Ctx::scoped(scope), &doc).is_err() {
                    return Action::Nothing;
                }
                Action::Send(vec![Out {
                    profile_id: obs::PROFILE_ID,
                    msg_type: doc.msg_type(),
                    payload: obs::encode(self.form, &doc),
                    reply_to: Some(msg_id.clone()),
                }])
            }
            Ok(_) => Action::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{code, outs};
    use super::*;
    use swp_core::ErrorCode;
    use swp_profiles::p1::pb::obs::{ObsGet, ObsSet};

    const ID: Bytes = Bytes::from_static(b"msg-000000000001");
    const TP: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    fn set(tp: &str, ts: &str) -> Vec<u8> {
        obs::encode(
            P1Form::Message,
            &ObsMessage::Set(ObsSet {
                traceparent: tp.into(),
                tracestate: ts.into(),
                rpc_id: Bytes::from_static(b"r1"),
                ..Default::default()
            }),
        )
    }

    fn get(a: &mut Agent) -> ObsDoc {
        let g = obs::encode(
            P1Form::Message,
            &ObsMessage::Get(ObsGet {
                include_current: true,
            }),
        );
        let o = outs(a.handle(2, &ID, &g, ""));
        match obs::decode(P1Form::Message, o[0].msg_type, &o[0].payload).unwrap() {
            ObsMessage::Doc(d) => d,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn context_round_trips_exactly_and_invalid_ones_change_nothing() {
        let mut a = Agent::new(P1Form::Message);
        assert_eq!(get(&mut a), ObsDoc::default());
        assert_eq!(a.handle(1, &ID, &set(TP, "b=2, a=1"), ""), Action::Nothing);
        let d = get(&mut a);
        assert_eq!(
            (d.traceparent.as_str(), d.tracestate.as_str()),
            (TP, "b=2, a=1")
        );
        assert_eq!(&d.rpc_id[..], b"r1");
        assert_eq!(
            code(a.handle(1, &ID, &set(&TP.to_uppercase(), ""), "")),
            ErrorCode::InvalidProfilePayload
        );
        assert_eq!(get(&mut a).traceparent, TP);
        assert_eq!(
            code(a.handle(5, &ID, b"", "")),
            ErrorCode::UnsupportedMsgType
        );
    }
}
