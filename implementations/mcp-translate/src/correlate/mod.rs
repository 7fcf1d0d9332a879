//! State a translating intermediary keeps between messages, still without I/O: which
//! requests are awaiting a response (so a result can be typed by its request's method),
//! which split batches are awaiting their responses (to answer a 2025-03-26 peer with one
//! batch response), and, between a session version and the stateless 2026-07-28, what the
//! session established ([`Session`]) and the multi-round-trip requests in flight
//! ([`rounds`]).

pub mod rounds;
mod session;

pub use session::Session;

use crate::RequestLookup;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Requests in flight are bounded so a peer that never answers cannot grow the table
/// without limit; past the bound new requests are not recorded (their results then fail
/// to translate with a missing-context error instead of exhausting memory).
pub const MAX_PENDING: usize = 65_536;

/// A request id as a hashable key: strings and numbers are distinct id spaces.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdKey {
    /// A string id.
    Str(String),
    /// A number id, by its JSON text.
    Num(String),
}

impl IdKey {
    /// The key of `id`, when it is a valid request id.
    pub fn of(id: &Value) -> Option<IdKey> {
        match id {
            Value::String(s) => Some(IdKey::Str(s.clone())),
            Value::Number(n) => Some(IdKey::Num(n.to_string())),
            _ => None,
        }
    }
}

fn request_of(m: &Value) -> Option<(&Value, &str)> {
    Some((m.get("id")?, m.get("method")?.as_str()?))
}

fn requests(msg: &Value) -> Vec<(&Value, &str)> {
    match msg {
        Value::Array(items) => items.iter().filter_map(request_of).collect(),
        m => request_of(m).into_iter().collect(),
    }
}

fn response_id(m: &Value) -> Option<&Value> {
    if m.get("method").is_some() {
        return None;
    }
    m.get("id")
}

fn response_ids(msg: &Value) -> Vec<&Value> {
    match msg {
        Value::Array(items) => items.iter().filter_map(response_id).collect(),
        m => response_id(m).into_iter().collect(),
    }
}

/// The requests one side has sent and not yet seen answered.
#[derive(Debug, Default)]
pub struct Pending {
    map: HashMap<IdKey, String>,
}

impl Pending {
    /// Records the requests in `msg` (a message or a batch). Returns false when the bound
    /// was reached and some were not recorded.
    pub fn record(&mut self, msg: &Value) -> bool {
        let mut all = true;
        for (id, method) in requests(msg) {
            let Some(k) = IdKey::of(id) else { continue };
            if self.map.len() >= MAX_PENDING && !self.map.contains_key(&k) {
                all = false;
                continue;
            }
            self.map.insert(k, method.to_owned());
        }
        all
    }

    /// Forgets the requests that the responses in `msg` answer.
    pub fn complete(&mut self, msg: &Value) {
        for id in response_ids(msg) {
            if let Some(k) = IdKey::of(id) {
                self.map.remove(&k);
            }
        }
    }

    /// How many requests are awaiting a response.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no request is awaiting a response.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

impl RequestLookup for Pending {
    fn method_of(&self, id: &Value) -> Option<&str> {
        IdKey::of(id).and_then(|k| self.map.get(&k).map(String::as_str))
    }
}

/// What [`Batches::offer`] did with a response.
#[derive(Debug, PartialEq)]
pub enum Offer {
    /// The response does not belong to an open batch: deliver it alone.
    Single(Value),
    /// Held until the rest of its batch arrives.
    Held,
    /// The last response of its batch arrived: deliver this batch response.
    Complete(Value),
}

#[derive(Debug)]
struct Open {
    waiting: HashSet<IdKey>,
    got: Vec<Value>,
}

/// Batches that were split for a peer without batches, awaiting their responses.
#[derive(Debug, Default)]
pub struct Batches {
    open: Vec<Open>,
}

impl Batches {
    /// Records a batch that was split: its requests' responses will be reassembled.
    /// A batch of notifications only expects no response and is not recorded.
    pub fn open(&mut self, batch: &Value) {
        let waiting: HashSet<IdKey> = requests(batch)
            .into_iter()
            .filter_map(|(id, _)| IdKey::of(id))
            .collect();
        if !waiting.is_empty() && self.open.len() < MAX_PENDING {
            self.open.push(Open {
                waiting,
                got: Vec::new(),
            });
        }
    }

    /// Offers a response on its way to the batch's sender.
    pub fn offer(&mut self, response: Value) -> Offer {
        let Some(k) = response.get("id").and_then(IdKey::of) else {
            return Offer::Single(response);
        };
        let Some(i) = self.open.iter().position(|b| b.waiting.contains(&k)) else {
            return Offer::Single(response);
        };
        let b = &mut self.open[i];
        b.waiting.remove(&k);
        b.got.push(response);
        if b.waiting.is_empty() {
            let b = self.open.swap_remove(i);
            Offer::Complete(Value::Array(b.got))
        } else {
            Offer::Held
        }
    }

    /// How many batches await responses.
    pub fn len(&self) -> usize {
        self.open.len()
    }

    /// Whether no batch awaits responses.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pending_types_results_and_forgets_them() {
        let mut p = Pending::default();
        p.record(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
        p.record(&json!({"jsonrpc": "2.0", "id": "1", "method": "prompts/list"}));
        assert_eq!(p.method_of(&json!(1)), Some("tools/list"));
        assert_eq!(p.method_of(&json!("1")), Some("prompts/list"));
        p.complete(&json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        assert_eq!(p.method_of(&json!(1)), None);
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn batches_reassemble_in_arrival_order() {
        let mut b = Batches::default();
        b.open(&json!([
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        ]));
        let r2 = json!({"jsonrpc": "2.0", "id": 2, "result": {}});
        let r1 = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(b.offer(r2.clone()), Offer::Held);
        let other = json!({"jsonrpc": "2.0", "id": 9, "result": {}});
        assert_eq!(b.offer(other.clone()), Offer::Single(other));
        assert_eq!(b.offer(r1.clone()), Offer::Complete(json!([r2, r1])));
        assert!(b.is_empty());
    }
}
