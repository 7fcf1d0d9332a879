//! Where the messages the upstream originates go: notifications (progress, logs, list
//! changes) and server-to-client requests (sampling, elicitation) reach the client whose
//! request they belong to, and that client's answer goes back upstream on the msg_id the
//! request came with (mapping §5). Sans-IO tables behind one lock; the link task and the
//! transports call them.
//!
//! A message belongs to a client request when its `params._meta` names the request's
//! JSON-RPC id under [`RELATED_KEY`], or its `params.progressToken` is a token (or the id)
//! of a request in flight. Anything else goes to the clients' own server streams (the
//! Streamable HTTP GET stream, a WebSocket, stdio): a notification to all of them, a request
//! to the only one, or back upstream as an error when there is not exactly one.

use serde_json::Value;
use std::collections::HashMap;
use tokio::sync::mpsc;

/// The `_meta` key naming the client request a server message belongs to.
pub use crate::endpoint::conformance::RELATED_KEY;

/// Messages a client's sink holds before more are dropped (a client that does not read its
/// stream must not make the gateway buffer without bound).
pub const SINK_CAPACITY: usize = 64;

/// Most server-to-client requests waiting for their answer at once.
pub const MAX_ASKS: usize = 256;

/// A client's stream for server messages.
#[derive(Debug, Clone)]
pub struct Sink {
    /// The messages, in order.
    pub tx: mpsc::Sender<Vec<u8>>,
    /// Whether the client can answer server requests while a call of its own is in flight
    /// (Streamable HTTP: yes, with another POST; stdio and WebSocket here: no, they take one
    /// message at a time).
    pub answers: bool,
}

/// A new sink and the receiving end its transport drains.
pub fn sink(answers: bool) -> (Sink, mpsc::Receiver<Vec<u8>>) {
    let (tx, rx) = mpsc::channel(SINK_CAPACITY);
    (Sink { tx, answers }, rx)
}

/// Who a client is: a stdio or WebSocket connection, an HTTP session, or a sessionless
/// HTTP request.
pub type Owner = u64;

/// One JSON-RPC id in flight upstream.
#[derive(Debug)]
pub struct Route {
    /// Where its server messages go (`None`: the client cannot receive them).
    pub sink: Option<Sink>,
    /// Its client.
    pub owner: Owner,
    /// The progress token its request carried, raw JSON.
    pub token: Option<String>,
    /// Woken when the id is free again.
    pub freed: std::sync::Arc<tokio::sync::Notify>,
}

/// A server-to-client request waiting for its client's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ask {
    owner: Owner,
    msg_id: Vec<u8>,
}

/// The routing tables.
#[derive(Debug, Default)]
pub struct Table {
    /// In-flight client requests by raw JSON id.
    pub ids: HashMap<String, Route>,
    /// The clients' own server streams.
    streams: HashMap<Owner, Sink>,
    /// Server-to-client requests by (client, raw JSON id).
    asks: HashMap<(Owner, String), Ask>,
}

/// What to do with a message the upstream originated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Nothing (delivered, or a notification nobody can take).
    Done,
    /// A request nobody can answer: send this JSON-RPC error response upstream on its
    /// msg_id.
    Refuse(Vec<u8>),
}

/// Why a client's answer cannot go upstream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// No server request of this client waits for that id.
    #[error("no request of the server's is waiting for id {0}")]
    Unknown(String),
}

impl Table {
    /// Registers (or replaces) a client's own server stream.
    pub fn open_stream(&mut self, owner: Owner, sink: Sink) {
        self.streams.insert(owner, sink);
    }

    /// Forgets a client: its stream and the server requests waiting on it.
    pub fn close_stream(&mut self, owner: Owner) {
        self.streams.remove(&owner);
    }

    /// Forgets everything a client left (its session ended).
    pub fn forget(&mut self, owner: Owner) -> Vec<Vec<u8>> {
        self.streams.remove(&owner);
        let gone: Vec<(Owner, String)> = self
            .asks
            .keys()
            .filter(|(o, _)| *o == owner)
            .cloned()
            .collect();
        gone.into_iter()
            .filter_map(|k| self.asks.remove(&k))
            .map(|a| a.msg_id)
            .collect()
    }

    /// Routes one upstream message (`request`: msg_type 1, sent under `msg_id`).
    pub fn deliver(&mut self, payload: &[u8], request: Option<&[u8]>) -> Delivery {
        let parsed: Option<Value> = serde_json::from_slice(payload).ok();
        let related = parsed.as_ref().and_then(|v| {
            let p = v.get("params")?;
            p.get("_meta")
                .and_then(|m| m.get(RELATED_KEY))
                .or_else(|| p.get("progressToken"))
                .map(Value::to_string)
        });
        // A call without a sink of its own (its client takes no stream on the call) falls
        // back to the client's own stream, if it has one.
        let target = related.as_deref().and_then(|key| {
            self.ids
                .get(key)
                .or_else(|| self.ids.values().find(|r| r.token.as_deref() == Some(key)))
                .map(|r| {
                    let sink = r
                        .sink
                        .clone()
                        .or_else(|| self.streams.get(&r.owner).cloned());
                    (r.owner, sink)
                })
        });
        let Some(msg_id) = request else {
            match target {
                Some((_, Some(s))) => {
                    let _ = s.tx.try_send(payload.to_vec());
                }
                Some((_, None)) => {}
                // Unrelated: every client's own stream.
                None => {
                    for s in self.streams.values() {
                        let _ = s.tx.try_send(payload.to_vec());
                    }
                }
            }
            return Delivery::Done;
        };
        let id = parsed
            .as_ref()
            .and_then(|v| v.get("id"))
            .map_or_else(|| "null".to_owned(), Value::to_string);
        let refuse = |why: &str| {
            Delivery::Refuse(swp_profiles::mcp::jsonrpc::error(
                &id,
                swp_profiles::mcp::jsonrpc::INTERNAL_ERROR,
                &format!("Internal error: {why}"),
                None,
            ))
        };
        let target = match target {
            Some((owner, Some(s))) if s.answers => Some((owner, s)),
            // Related to a call whose client cannot answer meanwhile, or cannot receive.
            Some(_) => None,
            None if self.streams.len() == 1 => self
                .streams
                .iter()
                .next()
                .filter(|(_, s)| s.answers)
                .map(|(o, s)| (*o, s.clone())),
            None => None,
        };
        let Some((owner, s)) = target else {
            return refuse("no client of the gateway can answer this request");
        };
        if self.asks.len() >= MAX_ASKS {
            return refuse("too many server requests are waiting for their answers");
        }
        if s.tx.try_send(payload.to_vec()).is_err() {
            return refuse("the client is not reading its stream");
        }
        self.asks.insert(
            (owner, id),
            Ask {
                owner,
                msg_id: msg_id.to_vec(),
            },
        );
        Delivery::Done
    }

    /// The msg_id a client's answer (raw JSON id) goes upstream on.
    pub fn answer(&mut self, owner: Owner, id: &str) -> Result<Vec<u8>, AnswerError> {
        self.asks
            .remove(&(owner, id.to_owned()))
            .filter(|a| a.owner == owner)
            .map(|a| a.msg_id)
            .ok_or_else(|| AnswerError::Unknown(id.to_owned()))
    }
}

/// The progress token a client request carries (`params._meta.progressToken`), raw JSON.
pub fn progress_token(bytes: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    v.pointer("/params/_meta/progressToken")
        .map(Value::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(owner: Owner, sink: Option<Sink>, token: Option<&str>) -> Route {
        Route {
            sink,
            owner,
            token: token.map(str::to_owned),
            freed: Default::default(),
        }
    }

    #[test]
    fn related_messages_reach_their_call_and_answers_go_back_on_the_msg_id() {
        let mut t = Table::default();
        let (a, mut ra) = sink(true);
        let (b, mut rb) = sink(true);
        t.ids.insert("0".into(), route(1, Some(a), Some("\"p\"")));
        t.ids.insert("\"x\"".into(), route(2, Some(b), None));
        let log = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"d","_meta":{"swp-ref/relatedRequestId":0}}}"#;
        assert_eq!(t.deliver(log, None), Delivery::Done);
        assert_eq!(ra.try_recv().unwrap(), log);
        assert!(rb.try_recv().is_err());
        let progress = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#;
        t.deliver(progress, None);
        assert_eq!(ra.try_recv().unwrap(), progress);

        let ask = br#"{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"_meta":{"swp-ref/relatedRequestId":"x"}}}"#;
        assert_eq!(t.deliver(ask, Some(b"msg-0001")), Delivery::Done);
        assert_eq!(rb.try_recv().unwrap(), ask);
        // Only the client that was asked may answer, once.
        assert!(t.answer(1, "\"s1\"").is_err());
        assert_eq!(t.answer(2, "\"s1\"").unwrap(), b"msg-0001");
        assert!(t.answer(2, "\"s1\"").is_err());
    }

    #[test]
    fn unrelated_messages_go_to_the_clients_streams() {
        let mut t = Table::default();
        let ask = br#"{"jsonrpc":"2.0","id":5,"method":"roots/list"}"#;
        // Nobody to ask: refused upstream with the request's id.
        let Delivery::Refuse(e) = t.deliver(ask, Some(b"m")) else {
            panic!("not refused")
        };
        let v: Value = serde_json::from_slice(&e).unwrap();
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (5.into(), (-32603).into())
        );
        let (s, mut r) = sink(true);
        t.open_stream(9, s);
        assert_eq!(t.deliver(ask, Some(b"m")), Delivery::Done);
        assert_eq!(r.try_recv().unwrap(), ask);
        let (s2, mut r2) = sink(true);
        t.open_stream(10, s2);
        let n = br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
        t.deliver(n, None);
        assert_eq!(
            (r.try_recv().unwrap(), r2.try_recv().unwrap()),
            (n.to_vec(), n.to_vec())
        );
        // Two streams: a request has no one owner.
        assert!(matches!(t.deliver(ask, Some(b"m2")), Delivery::Refuse(_)));
        assert_eq!(t.forget(9), vec![b"m".to_vec()]);
    }

    #[test]
    fn a_call_without_a_stream_of_its_own_uses_the_clients_stream() {
        let mut t = Table::default();
        t.ids.insert("1".into(), route(4, None, None));
        let log = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":{"swp-ref/relatedRequestId":1}}}"#;
        // No stream either: dropped.
        t.deliver(log, None);
        let (s, mut r) = sink(true);
        t.open_stream(4, s);
        t.deliver(log, None);
        assert_eq!(r.try_recv().unwrap(), log);
    }

    #[test]
    fn a_client_that_cannot_answer_meanwhile_is_not_asked() {
        let mut t = Table::default();
        let (s, _r) = sink(false);
        t.ids.insert("1".into(), route(1, Some(s), None));
        let ask = br#"{"jsonrpc":"2.0","id":"s","method":"elicitation/create","params":{"_meta":{"swp-ref/relatedRequestId":1}}}"#;
        assert!(matches!(t.deliver(ask, Some(b"m")), Delivery::Refuse(_)));
    }

    #[test]
    fn progress_tokens_are_read_as_raw_json() {
        assert_eq!(
            progress_token(br#"{"params":{"_meta":{"progressToken":7}}}"#).as_deref(),
            Some("7")
        );
    }
}
