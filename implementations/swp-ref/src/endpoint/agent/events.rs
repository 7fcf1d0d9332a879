//! The reference as an SWP-EVENTS producer and consumer (profile 13). Filters name
//! streams:
//!
//! | filter | what the reference sends when it is subscribed |
//! |---|---|
//! | `swp.test.ticks` | at once, three `EVT_PUBLISH`: `event_type` `swp.test.tick`, severity `info`, `ts_unix_ms` 1,700,000,000,000 + k, `msg_id` = the subscribe request's msg_id, body = decimal k |
//! | `swp.test.batch` | at once, one `EVT_BATCH` of three such events |
//! | `swp.test.echo` | from then on, every event the subscriber publishes on this connection, delivered back unchanged and in order (a publish as `EVT_PUBLISH`, a batch as `EVT_BATCH`) |
//! | other | `EVT_ERR` `unknown_filter` |
//!
//! event_ids of the events it originates are `tick-N`, N counting on the connection, so a
//! second subscription never reuses one. Unsubscribing an unknown filter gives `EVT_ERR`
//! `unknown_subscription`. Severities are the library's six (`trace` … `fatal`). A
//! published event with a missing field, an unknown severity or a reused event_id is
//! rejected (`ERR_INVALID_PROFILE_PAYLOAD`).

use super::{step, Action, Config, Incoming, Out, ProfileAgent, Reject};
use bytes::Bytes;
use swp_profiles::events::{self, codes, EventsMessage, Seen, Stream};
use swp_profiles::p1::pb::events::{EventRecord, EvtBatch, EvtErr, EvtPublish};
use swp_profiles::p1::P1Form;
use swp_profiles::payload::shown;
use swp_profiles::{Ctx, Profile};

/// Filter: three events at once.
pub const TICKS: &str = "swp.test.ticks";
/// Filter: one batch of three events at once.
pub const BATCH: &str = "swp.test.batch";
/// Filter: the subscriber's own events, delivered back.
pub const ECHO: &str = "swp.test.echo";
/// Events per `ticks` subscription and per `batch`.
pub const COUNT: u64 = 3;
/// The agent's own producer scope in its stream (a peer's scope is its identity).
const OWN: &str = "\u{0}swp-ref";

/// The EVENTS state of one connection.
#[derive(Debug)]
pub struct Agent {
    stream: Stream,
    form: P1Form,
    produced: u64,
}

impl Agent {
    /// The agent with the library's severities and caps.
    pub fn new(form: P1Form) -> Self {
        Agent {
            stream: Stream::new(events::Config::default()),
            form,
            produced: 0,
        }
    }

    fn out(&self, m: &EventsMessage, reply_to: Option<&Bytes>) -> Out {
        Out::of::<Stream>(self.form, m, reply_to.cloned())
    }

    fn error(&self, code: &str, message: String, reply_to: &Bytes) -> Action {
        let m = EventsMessage::Err(EvtErr {
            code: code.into(),
            message,
        });
        Action::Send(vec![self.out(&m, Some(reply_to))])
    }

    /// The next event the agent originates, correlated with the request `msg_id`.
    fn tick(&mut self, msg_id: &Bytes) -> EventRecord {
        self.produced += 1;
        let k = self.produced;
        EventRecord {
            event_id: format!("tick-{k}"),
            event_type: "swp.test.tick".into(),
            severity: "info".into(),
            ts_unix_ms: 1_700_000_000_000 + k,
            msg_id: msg_id.clone(),
            task_id: Bytes::new(),
            rpc_id: Bytes::new(),
            body: Bytes::from(k.to_string()),
        }
    }

    /// What a new subscription to `filter` sends at once.
    fn produce(&mut self, filter: &str, msg_id: &Bytes, now_ms: u64) -> Action {
        let mut outs = Vec::new();
        match filter {
            TICKS => {
                for _ in 0..COUNT {
                    let r = self.tick(msg_id);
                    let m = EventsMessage::Publish(EvtPublish { event: Some(r) });
                    // Our own events pass our own stream first.
                    if self.stream.step(Ctx::new(now_ms, OWN), &m).is_ok() {
                        outs.push(self.out(&m, None));
                    }
                }
            }
            BATCH => {
                let events = (0..COUNT).map(|_| self.tick(msg_id)).collect();
                let m = EventsMessage::Batch(EvtBatch { events });
                if self.stream.step(Ctx::new(now_ms, OWN), &m).is_ok() {
                    outs.push(self.out(&m, None));
                }
            }
            _ => {}
        }
        Action::from_outs(outs)
    }
}

impl ProfileAgent for Agent {
    type Profile = Stream;

    fn for_connection(_: &Config, form: P1Form) -> Self {
        Agent::new(form)
    }

    fn form(&self) -> P1Form {
        self.form
    }

    fn on_message(&mut self, m: EventsMessage, at: Incoming<'_>) -> Result<Action, Reject> {
        let Incoming {
            msg_id,
            scope,
            now_ms,
        } = at;
        let echoing = self.stream.is_subscribed(scope, ECHO);
        Ok(match &m {
            EventsMessage::Publish(_) | EventsMessage::Batch(_) => {
                step::<Self>(&mut self.stream, at.ctx(), &m)?;
                if echoing {
                    // Delivered back as it came, re-encoded: unknown fields do not travel,
                    // the known ones do unchanged (EVENTS-011, EVENTS-014).
                    Action::Send(vec![self.out(&m, None)])
                } else {
                    Action::Nothing
                }
            }
            EventsMessage::Subscribe(s) => {
                if ![TICKS, BATCH, ECHO].contains(&s.filter.as_str()) {
                    return Ok(self.error(
                        codes::UNKNOWN_FILTER,
                        format!("no stream named {}", shown(&s.filter)),
                        msg_id,
                    ));
                }
                match self.stream.subscribe(scope, &s.filter) {
                    Err(e) => self.error(e.reply_code(), e.to_string(), msg_id),
                    Ok(Seen::Subscribed) => self.produce(&s.filter, msg_id, now_ms),
                    Ok(_) => Action::Nothing,
                }
            }
            EventsMessage::Unsubscribe(u) => {
                match self.stream.unsubscribe(scope, &u.subscription_id) {
                    Err(e) => self.error(e.reply_code(), e.to_string(), msg_id),
                    Ok(_) => Action::Nothing,
                }
            }
            EventsMessage::Err(_) => Action::Nothing,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{code, outs};
    use super::*;
    use swp_core::ErrorCode;
    use swp_profiles::p1::pb::events::{EvtSubscribe, EvtUnsubscribe};

    const ID: Bytes = Bytes::from_static(b"msg-000000000001");

    fn enc(m: &EventsMessage) -> Vec<u8> {
        events::encode(P1Form::Message, m)
    }

    fn sub(filter: &str) -> Vec<u8> {
        enc(&EventsMessage::Subscribe(EvtSubscribe {
            filter: filter.into(),
        }))
    }

    fn event(id: &str, severity: &str) -> EventRecord {
        EventRecord {
            event_id: id.into(),
            event_type: "t".into(),
            severity: severity.into(),
            ts_unix_ms: 1,
            task_id: Bytes::from_static(b"task"),
            body: Bytes::from_static(b"b"),
            ..Default::default()
        }
    }

    fn publish(r: EventRecord) -> Vec<u8> {
        enc(&EventsMessage::Publish(EvtPublish { event: Some(r) }))
    }

    fn decoded(o: &[Out]) -> Vec<EventsMessage> {
        o.iter()
            .map(|x| events::decode(P1Form::Message, x.msg_type, &x.payload).unwrap())
            .collect()
    }

    #[test]
    fn streams_publish_at_once_with_fresh_ids() {
        let mut a = Agent::new(P1Form::Message);
        let o = decoded(&outs(a.handle(2, &ID, &sub(TICKS), "", 0)));
        assert_eq!(o.len(), 3);
        let EventsMessage::Publish(p) = &o[2] else {
            panic!()
        };
        let r = p.event.as_ref().unwrap();
        assert_eq!((r.event_id.as_str(), &r.msg_id[..]), ("tick-3", &ID[..]));
        // Subscribed already: nothing again.
        assert_eq!(a.handle(2, &ID, &sub(TICKS), "", 0), Action::Nothing);
        let o = decoded(&outs(a.handle(2, &ID, &sub(BATCH), "", 0)));
        let [EventsMessage::Batch(b)] = &o[..] else {
            panic!("{o:?}")
        };
        let ids: Vec<_> = b.events.iter().map(|e| e.event_id.as_str()).collect();
        assert_eq!(ids, ["tick-4", "tick-5", "tick-6"]);
        let o = decoded(&outs(a.handle(2, &ID, &sub("nope"), "", 0)));
        assert!(matches!(&o[..], [EventsMessage::Err(e)] if e.code == "unknown_filter"));
        let un = enc(&EventsMessage::Unsubscribe(EvtUnsubscribe {
            subscription_id: "nope".into(),
        }));
        let o = decoded(&outs(a.handle(3, &ID, &un, "", 0)));
        assert!(matches!(&o[..], [EventsMessage::Err(e)] if e.code == "unknown_subscription"));
    }

    #[test]
    fn echo_delivers_back_in_order_until_unsubscribed() {
        let mut a = Agent::new(P1Form::Message);
        assert_eq!(
            a.handle(1, &ID, &publish(event("e0", "info")), "", 0),
            Action::Nothing
        );
        assert_eq!(a.handle(2, &ID, &sub(ECHO), "", 0), Action::Nothing);
        let o = decoded(&outs(a.handle(
            1,
            &ID,
            &publish(event("e1", "info")),
            "",
            0,
        )));
        assert!(
            matches!(&o[..], [EventsMessage::Publish(p)] if p.event.as_ref().unwrap().event_id == "e1")
        );
        let b = enc(&EventsMessage::Batch(EvtBatch {
            events: vec![event("e2", "warn"), event("e3", "error")],
        }));
        let o = decoded(&outs(a.handle(4, &ID, &b, "", 0)));
        assert!(matches!(&o[..], [EventsMessage::Batch(b)] if b.events[1].event_id == "e3"));
        let un = enc(&EventsMessage::Unsubscribe(EvtUnsubscribe {
            subscription_id: ECHO.into(),
        }));
        assert_eq!(a.handle(3, &ID, &un, "", 0), Action::Nothing);
        assert_eq!(
            a.handle(1, &ID, &publish(event("e4", "info")), "", 0),
            Action::Nothing
        );
    }

    #[test]
    fn invalid_events_are_rejected() {
        let mut a = Agent::new(P1Form::Message);
        assert_eq!(
            code(a.handle(1, &ID, &publish(event("e1", "loud")), "", 0)),
            ErrorCode::InvalidProfilePayload
        );
        let mut no_key = event("e2", "info");
        no_key.task_id = Bytes::new();
        assert_eq!(
            code(a.handle(1, &ID, &publish(no_key), "", 0)),
            ErrorCode::InvalidProfilePayload
        );
        a.handle(1, &ID, &publish(event("e3", "info")), "", 0);
        assert_eq!(
            code(a.handle(1, &ID, &publish(event("e3", "warn")), "", 0)),
            ErrorCode::InvalidProfilePayload
        );
        // The same event again is a re-delivery.
        assert_eq!(
            a.handle(1, &ID, &publish(event("e3", "info")), "", 0),
            Action::Nothing
        );
        assert_eq!(
            code(a.handle(6, &ID, b"", "", 0)),
            ErrorCode::UnsupportedMsgType
        );
    }
}
