//! What an intermediary knows of one connection that a session-based peer states once and a
//! stateless 2026-07-28 peer states in every message: the client's capabilities and
//! identity, the server's capabilities and identity, the log level, and a stateless
//! client's open `subscriptions/listen` streams. The rules only read it
//! ([`crate::translate_with`]); the intermediary fills it from the messages it relays.

use super::{IdKey, MAX_PENDING};
use crate::stateless::{CLIENT_CAPS, CLIENT_INFO, SERVER_INFO};
use serde_json::{Map, Value};

/// One open `subscriptions/listen` stream of a stateless client, answered by the
/// intermediary for a session server.
#[derive(Debug, Clone, PartialEq)]
struct Listen {
    id: Value,
    /// The `SubscriptionFilter` the intermediary acknowledged.
    honoured: Value,
}

/// Per-connection facts, all written as 2026-07-28 writes them (capabilities as in
/// `_meta`, `Implementation` objects).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Session {
    /// The client's capabilities as the session server knows them: from a session
    /// client's `initialize`, or the first request of a stateless client (which the
    /// intermediary's `initialize` carried).
    pub client_capabilities: Option<Value>,
    /// The client's `Implementation`, from the same place.
    pub client_info: Option<Value>,
    /// The server's capabilities (from `server/discover`, or its `initialize` result).
    pub server_capabilities: Option<Value>,
    /// The server's `Implementation`.
    pub server_info: Option<Value>,
    /// The log level in force: set by a session client's `logging/setLevel`, or by the
    /// intermediary on a session server for a stateless client's `logLevel`.
    pub log_level: Option<String>,
    listens: Vec<Listen>,
}

impl Session {
    /// A session that knows nothing yet (what a lone message is translated with).
    pub const fn new() -> Session {
        Session {
            client_capabilities: None,
            client_info: None,
            server_capabilities: None,
            server_info: None,
            log_level: None,
            listens: Vec::new(),
        }
    }

    /// Records the client facts carried by a request in 2026-07-28 form (its
    /// `params._meta`), unless some are recorded already: the session server was told the
    /// first ones.
    pub fn note_client(&mut self, request: &Value) {
        if self.client_capabilities.is_some() {
            return;
        }
        let Some(meta) = request.pointer("/params/_meta").and_then(Value::as_object) else {
            return;
        };
        self.client_capabilities = meta.get(CLIENT_CAPS).cloned();
        self.client_info = meta.get(CLIENT_INFO).cloned();
    }

    /// Records the server facts of a `server/discover` result response (in 2026-07-28
    /// form: a stateless server's own, or a session server's `initialize` result as
    /// translated).
    pub fn note_server(&mut self, response: &Value) {
        let Some(r) = response.get("result") else {
            return;
        };
        self.server_capabilities = r.get("capabilities").cloned();
        self.server_info = r
            .pointer("/_meta")
            .and_then(|m| m.get(SERVER_INFO))
            .cloned();
    }

    /// The part of a `SubscriptionFilter` a session server can honour through an
    /// intermediary: the list_changed notifications whose capability it declared (it sends
    /// them unprompted). Resource subscriptions are not bridged (they would need
    /// `resources/subscribe` requests of the intermediary's own).
    pub fn honoured(&self, requested: &Value) -> Value {
        let mut out = Map::new();
        for (flag, cap) in [
            ("toolsListChanged", "/tools/listChanged"),
            ("promptsListChanged", "/prompts/listChanged"),
            ("resourcesListChanged", "/resources/listChanged"),
        ] {
            let asked = requested.get(flag) == Some(&Value::Bool(true));
            let offered = self
                .server_capabilities
                .as_ref()
                .and_then(|c| c.pointer(cap))
                == Some(&Value::Bool(true));
            if asked && offered {
                out.insert(flag.into(), Value::Bool(true));
            }
        }
        Value::Object(out)
    }

    /// Opens a listen stream that was acknowledged with `honoured`. Returns false when the
    /// bound on open streams was reached (it is then not recorded).
    pub fn open_listen(&mut self, id: &Value, honoured: Value) -> bool {
        if self.listens.len() >= MAX_PENDING {
            return false;
        }
        self.listens.retain(|l| !same_id(&l.id, id));
        self.listens.push(Listen {
            id: id.clone(),
            honoured,
        });
        true
    }

    /// Closes the listen stream `id`; false when there was none.
    pub fn close_listen(&mut self, id: &Value) -> bool {
        let before = self.listens.len();
        self.listens.retain(|l| !same_id(&l.id, id));
        self.listens.len() != before
    }

    /// Whether `id` names an open listen stream.
    pub fn is_listen(&self, id: &Value) -> bool {
        self.listens.iter().any(|l| same_id(&l.id, id))
    }

    /// The ids of the open listen streams that asked for `method`, in the order opened.
    pub fn listeners(&self, method: &str) -> Vec<&Value> {
        let flag = match method {
            "notifications/tools/list_changed" => "toolsListChanged",
            "notifications/prompts/list_changed" => "promptsListChanged",
            "notifications/resources/list_changed" => "resourcesListChanged",
            _ => return Vec::new(),
        };
        self.listens
            .iter()
            .filter(|l| l.honoured.get(flag) == Some(&Value::Bool(true)))
            .map(|l| &l.id)
            .collect()
    }
}

fn same_id(a: &Value, b: &Value) -> bool {
    IdKey::of(a).is_some() && IdKey::of(a) == IdKey::of(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn honours_only_declared_list_changes_and_routes_them() {
        let mut s = Session::new();
        s.note_server(
            &json!({"result": {"capabilities": {"tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": false}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}}),
        );
        assert_eq!(s.server_info, Some(json!({"name": "s", "version": "1"})));
        let h = s.honoured(
            &json!({"toolsListChanged": true, "resourcesListChanged": true,
            "promptsListChanged": true, "resourceSubscriptions": ["file:///a"]}),
        );
        assert_eq!(h, json!({"toolsListChanged": true}));
        assert!(s.open_listen(&json!(7), h));
        assert_eq!(
            s.listeners("notifications/tools/list_changed"),
            vec![&json!(7)]
        );
        assert!(s.listeners("notifications/prompts/list_changed").is_empty());
        assert!(s.is_listen(&json!(7)) && !s.is_listen(&json!("7")));
        assert!(s.close_listen(&json!(7)) && !s.close_listen(&json!(7)));
    }

    #[test]
    fn the_first_client_facts_stay() {
        let mut s = Session::new();
        let r = |caps: Value| {
            json!({"params": {"_meta": {
            "io.modelcontextprotocol/clientCapabilities": caps,
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}}})
        };
        s.note_client(&r(json!({"roots": {}})));
        s.note_client(&r(json!({})));
        assert_eq!(s.client_capabilities, Some(json!({"roots": {}})));
    }
}
