//! The reference's SWP-OBS context (profile 18): one trace context per peer scope on the
//! connection, with no tracestate keys of its own. `OBS_SET` makes a context current, with
//! no reply; an invalid traceparent is rejected (`ERR_INVALID_PROFILE_PAYLOAD`) and the
//! context in effect stays. `OBS_GET` is answered with `OBS_DOC` on the request's msg_id:
//! the context in effect octet for octet, or an empty document when none was set.

use super::{step, Action, Config, Incoming, Out, ProfileAgent, Reject};
use swp_profiles::obs::{self, Contexts, ObsMessage, Seen};
use swp_profiles::p1::pb::obs::ObsDoc;
use swp_profiles::p1::P1Form;
use swp_profiles::Profile;

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
}

impl ProfileAgent for Agent {
    type Profile = Contexts;

    fn for_connection(_: &Config, form: P1Form) -> Self {
        Agent::new(form)
    }

    fn form(&self) -> P1Form {
        self.form
    }

    fn on_message(&mut self, m: ObsMessage, at: Incoming<'_>) -> Result<Action, Reject> {
        let Seen::Snapshot { current, .. } = step::<Self>(&mut self.contexts, at.ctx(), &m)? else {
            return Ok(Action::Nothing);
        };
        let doc = ObsMessage::Doc(current.map_or_else(ObsDoc::default, |c| c.to_doc()));
        // Our answer passes our own judge: the context comes back unchanged.
        if self.contexts.step(at.ctx(), &doc).is_err() {
            return Ok(Action::Nothing);
        }
        Ok(Action::Send(vec![Out::of::<Contexts>(
            self.form,
            &doc,
            Some(at.msg_id.clone()),
        )]))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{code, outs};
    use super::*;
    use bytes::Bytes;
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
        let o = outs(a.handle(2, &ID, &g, "", 0));
        match obs::decode(P1Form::Message, o[0].msg_type, &o[0].payload).unwrap() {
            ObsMessage::Doc(d) => d,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn context_round_trips_exactly_and_invalid_ones_change_nothing() {
        let mut a = Agent::new(P1Form::Message);
        assert_eq!(get(&mut a), ObsDoc::default());
        assert_eq!(
            a.handle(1, &ID, &set(TP, "b=2, a=1"), "", 0),
            Action::Nothing
        );
        let d = get(&mut a);
        assert_eq!(
            (d.traceparent.as_str(), d.tracestate.as_str()),
            (TP, "b=2, a=1")
        );
        assert_eq!(&d.rpc_id[..], b"r1");
        assert_eq!(
            code(a.handle(1, &ID, &set(&TP.to_uppercase(), ""), "", 0)),
            ErrorCode::InvalidProfilePayload
        );
        assert_eq!(get(&mut a).traceparent, TP);
        assert_eq!(
            code(a.handle(5, &ID, b"", "", 0)),
            ErrorCode::UnsupportedMsgType
        );
    }
}
