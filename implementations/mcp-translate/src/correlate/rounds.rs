//! The multi-round-trip requests of 2026-07-28 against the server requests of the session
//! versions, in both directions, without I/O. In 2026-07-28 a server that needs input
//! (sampling, roots, elicitation) answers the client's request with an `input_required`
//! result, and the client retries the request with the answers (`inputResponses`) and the
//! server's `requestState`. Before, the server sent JSON-RPC requests of its own while the
//! client's request was in flight.
//!
//! - [`ForSessionClient`] (a 2026-07-28 server, a session client): an `input_required`
//!   result becomes server requests to the client; once it has answered them all, the
//!   request goes back to the server with the answers.
//! - [`ForStatelessClient`] (a session server, a 2026-07-28 client): a server request made
//!   while one of the client's requests is in flight becomes that request's
//!   `input_required` answer; the client's retry answers the server request, and the
//!   server's result answers the retry.

use super::{IdKey, MAX_PENDING};
use crate::methods::{INPUT_CAPABLE, INPUT_REQUESTS};
use crate::outcome::{TranslateError, Warning};
use crate::stateless;
use crate::walk::Seg;
use crate::{validate, walk, Answering, Direction, Hop, Version};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// How many `input_required` answers one request may get before the bridge gives up: a
/// server that never stops asking would otherwise loop with the client forever.
pub const MAX_ROUNDS: u32 = 16;

const STATELESS: Version = Version::V2026_07_28;

fn error(id: &Value, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": message}})
}

fn method_of(v: &Value) -> Option<&str> {
    v.get("method").and_then(Value::as_str)
}

/// The request with the answers of one round: earlier answers and state replaced.
fn with_answers(request: &Value, answers: Map<String, Value>, state: Option<String>) -> Value {
    let mut r = request.clone();
    if let Some(Value::Object(p)) = r.get_mut("params") {
        p.shift_remove("inputResponses");
        p.shift_remove("requestState");
        if !answers.is_empty() {
            p.insert("inputResponses".into(), Value::Object(answers));
        }
        if let Some(s) = state {
            p.insert("requestState".into(), Value::String(s));
        }
    }
    r
}

#[derive(Debug)]
struct Round {
    /// Keys the client has not answered yet → their method.
    waiting: HashMap<String, String>,
    answers: Map<String, Value>,
    state: Option<String>,
}

/// The bridge for a session client in front of a 2026-07-28 server.
#[derive(Debug, Default)]
pub struct ForSessionClient {
    /// Requests that may be answered `input_required`, as sent to the server, with the
    /// number of rounds they took so far.
    requests: HashMap<IdKey, (Value, u32)>,
    rounds: HashMap<IdKey, Round>,
    /// Id of a server request sent to the client → (its request, its key).
    inputs: HashMap<IdKey, (IdKey, String)>,
}

/// What a server response did to a [`ForSessionClient`].
#[derive(Debug, PartialEq)]
pub enum Opened {
    /// Not an `input_required` answer to a noted request: translate and deliver it.
    No,
    /// A round opened: send `to_client` (server requests in the client's version); when
    /// nothing needed the client, `retry` goes to the server at once.
    Round {
        /// Server requests for the client.
        to_client: Vec<Value>,
        /// The retried request, when no input was left to the client.
        retry: Option<Value>,
        /// What was dropped or converted.
        warnings: Vec<Warning>,
    },
    /// The request cannot complete (too many rounds, or input requests that cannot be
    /// translated): answer the client with this.
    Failed(Value),
}

/// What a client response did to a [`ForSessionClient`].
#[derive(Debug, PartialEq)]
pub enum Answered {
    /// Not an answer to a server request of this bridge.
    NotOurs,
    /// Kept; more answers are awaited.
    Held,
    /// The round's last answer: send this retry to the server.
    Retry(Value),
    /// The client refused the input, or its answer cannot be translated: send this error
    /// to the client for its request; the server hears nothing more of it.
    Failed(Value),
}

impl ForSessionClient {
    /// Notes a request sent to the server (2026-07-28 form); only those that may be
    /// answered `input_required` are kept.
    pub fn note_request(&mut self, request: &Value) {
        let (Some(id), Some(m)) = (request.get("id").and_then(IdKey::of), method_of(request))
        else {
            return;
        };
        if INPUT_CAPABLE.contains(&m) && self.requests.len() < MAX_PENDING {
            let rounds = self.requests.get(&id).map_or(0, |r| r.1);
            self.requests.insert(id, (request.clone(), rounds));
        }
    }

    /// A response from the server, before it is translated. `client` is the client's
    /// version.
    pub fn on_server_response(&mut self, response: &Value, client: Version) -> Opened {
        let Some(id) = response.get("id") else {
            return Opened::No;
        };
        let Some(k) = IdKey::of(id) else {
            return Opened::No;
        };
        let input = response.pointer("/result/resultType") == Some(&json!("input_required"));
        if !input {
            self.requests.remove(&k);
            return Opened::No;
        }
        let Some((request, rounds)) = self.requests.get_mut(&k) else {
            return Opened::No;
        };
        *rounds += 1;
        let (request, rounds) = (request.clone(), *rounds);
        if rounds > MAX_ROUNDS {
            self.forget(id);
            return Opened::Failed(error(
                id,
                format!("the server asked for input more than {MAX_ROUNDS} times"),
            ));
        }
        let hop = Hop {
            from: STATELESS,
            to: client,
            direction: Direction::ServerToClient,
        };
        let mut r = response.get("result").cloned().unwrap_or_default();
        let method = method_of(&request).unwrap_or_default().to_owned();
        let out = walk(&hop, false, &format!("{method} result"), |cx| {
            cx.at(Seg::K("result"), |cx| {
                let o = cx.obj(&mut r, "result")?;
                stateless::input_requests(cx, id, o)
            })
        })
        .and_then(|(round, w)| {
            for (_, m) in &round.requests {
                validate(m, client, Direction::ServerToClient, &Answering(""))?;
            }
            Ok((round, w))
        });
        let (round, warnings) = match out {
            Ok(x) => x,
            Err(e) => {
                self.forget(id);
                return Opened::Failed(error(id, e.to_string()));
            }
        };
        let mut answers = Map::new();
        answers.extend(round.answered);
        if round.requests.is_empty() {
            return Opened::Round {
                to_client: Vec::new(),
                retry: Some(with_answers(&request, answers, round.state)),
                warnings,
            };
        }
        let mut waiting = HashMap::new();
        let mut to_client = Vec::new();
        for (key, m) in round.requests {
            if let Some(ik) = m.get("id").and_then(IdKey::of) {
                self.inputs.insert(ik, (k.clone(), key.clone()));
            }
            waiting.insert(key, method_of(&m).unwrap_or_default().to_owned());
            to_client.push(m);
        }
        self.rounds.insert(
            k,
            Round {
                waiting,
                answers,
                state: round.state,
            },
        );
        Opened::Round {
            to_client,
            retry: None,
            warnings,
        }
    }

    /// A response from the client, before it is translated.
    pub fn on_client_response(&mut self, response: &Value, client: Version) -> Answered {
        let Some(ik) = response.get("id").and_then(IdKey::of) else {
            return Answered::NotOurs;
        };
        let Some((k, key)) = self.inputs.remove(&ik) else {
            return Answered::NotOurs;
        };
        let Some(round) = self.rounds.get_mut(&k) else {
            return Answered::NotOurs;
        };
        let Some(method) = round.waiting.remove(&key) else {
            return Answered::Held;
        };
        let request_id = self
            .requests
            .get(&k)
            .and_then(|(r, _)| r.get("id").cloned())
            .unwrap_or_default();
        let Some(mut result) = response.get("result").cloned() else {
            let why = response
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("an error");
            self.forget(&request_id);
            return Answered::Failed(error(
                &request_id,
                format!("the client refused input request {key} ({method}): {why}"),
            ));
        };
        let up = Hop {
            from: client,
            to: STATELESS,
            direction: Direction::ClientToServer,
        };
        let check = Hop {
            from: STATELESS,
            ..up
        };
        let translated = walk(&up, false, &format!("{method} result"), |cx| {
            cx.at(Seg::K("result"), |cx| {
                stateless::input_response(cx, &method, &mut result)
            })
        })
        .and_then(|_| {
            walk(&check, true, &format!("{method} result"), |cx| {
                stateless::input_response(cx, &method, &mut result.clone())
            })
        });
        if let Err(e) = translated {
            self.forget(&request_id);
            return Answered::Failed(error(&request_id, e.to_string()));
        }
        round.answers.insert(key, result);
        if !round.waiting.is_empty() {
            return Answered::Held;
        }
        let Some(round) = self.rounds.remove(&k) else {
            return Answered::Held;
        };
        match self.requests.get(&k) {
            Some((request, _)) => {
                Answered::Retry(with_answers(request, round.answers, round.state))
            }
            None => Answered::Held,
        }
    }

    /// Forgets request `id` and its round (answered, failed or cancelled).
    pub fn forget(&mut self, id: &Value) {
        let Some(k) = IdKey::of(id) else { return };
        self.requests.remove(&k);
        self.rounds.remove(&k);
        self.inputs.retain(|_, (r, _)| *r != k);
    }

    /// How many requests are noted.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }
}

#[derive(Debug)]
struct Call {
    /// The request's id as the server knows it (the client's first id).
    id: Value,
    method: String,
    /// Where its answer goes: the first id, then each retry's.
    current: Value,
    /// An `input_required` answer went out and the retry has not come.
    awaiting: bool,
    /// Input requests not yet sent to the client: (key, input request).
    queued: Vec<(String, Value)>,
    /// Sent to the client, unanswered: key → (server request id, method).
    asked: Vec<(String, Value, String)>,
    /// The server's response, held until the retry it answers arrives.
    held: Option<Value>,
}

impl Call {
    fn token(&self) -> String {
        format!("upstream:{}", self.id)
    }

    fn has_key(&self, key: &str) -> bool {
        self.queued.iter().any(|(k, _)| k == key) || self.asked.iter().any(|(k, _, _)| k == key)
    }
}

/// The bridge for a 2026-07-28 client in front of a session server.
#[derive(Debug, Default)]
pub struct ForStatelessClient {
    /// In-flight client requests that may carry input, oldest first.
    calls: Vec<Call>,
}

/// What a server request did to a [`ForStatelessClient`].
#[derive(Debug, PartialEq)]
pub enum Asked {
    /// No client request can carry it: translate it alone (it is answered for the
    /// client).
    NoCall,
    /// Send these to the client (an `input_required` answer to its request).
    ToClient(Vec<Value>, Vec<Warning>),
    /// Kept until the client retries the request that carries it.
    Queued(Vec<Warning>),
}

/// A client retry of a request of a [`ForStatelessClient`].
#[derive(Debug, PartialEq)]
pub struct Retry {
    /// Responses to the server's requests.
    pub to_server: Vec<Value>,
    /// Answers for the client: the server's held result, or the next `input_required`.
    pub to_client: Vec<Value>,
}

impl ForStatelessClient {
    /// Notes a client request (2026-07-28 form) forwarded to the server; only those that
    /// may be answered `input_required` are kept.
    pub fn note_call(&mut self, request: &Value) {
        let (Some(id), Some(m)) = (request.get("id"), method_of(request)) else {
            return;
        };
        if INPUT_CAPABLE.contains(&m) && IdKey::of(id).is_some() && self.calls.len() < MAX_PENDING {
            self.calls.push(Call {
                id: id.clone(),
                method: m.to_owned(),
                current: id.clone(),
                awaiting: false,
                queued: Vec::new(),
                asked: Vec::new(),
                held: None,
            });
        }
    }

    fn input_required(call: &mut Call) -> Result<Value, TranslateError> {
        let mut reqs = Map::new();
        for (k, r) in call.queued.drain(..) {
            let sid = r.get("id").cloned().unwrap_or_default();
            let method = method_of(&r).unwrap_or_default().to_owned();
            let mut input = Map::new();
            input.insert("method".into(), Value::String(method.clone()));
            if let Some(p) = r.get("params") {
                input.insert("params".into(), p.clone());
            }
            reqs.insert(k.clone(), Value::Object(input));
            call.asked.push((k, sid, method));
        }
        call.awaiting = true;
        let m = json!({"jsonrpc": "2.0", "id": call.current, "result": {
            "resultType": "input_required", "inputRequests": reqs, "requestState": call.token()}});
        validate(
            &m,
            STATELESS,
            Direction::ServerToClient,
            &Answering(&call.method),
        )?;
        Ok(m)
    }

    /// A request from the server (in `server`'s form). The most recent client request in
    /// flight that may carry input carries it.
    pub fn on_server_request(
        &mut self,
        request: &Value,
        server: Version,
    ) -> Result<Asked, TranslateError> {
        let Some(method) = method_of(request).filter(|m| INPUT_REQUESTS.contains(m)) else {
            return Ok(Asked::NoCall);
        };
        let Some(call) = self.calls.last_mut() else {
            return Ok(Asked::NoCall);
        };
        let Some(sid) = request.get("id").filter(|i| IdKey::of(i).is_some()) else {
            return Ok(Asked::NoCall);
        };
        let hop = Hop {
            from: server,
            to: STATELESS,
            direction: Direction::ServerToClient,
        };
        let mut m = request.clone();
        let (_, warnings) = walk(&hop, false, &format!("{method} request"), |cx| {
            let o = cx.obj(&mut m, "request")?;
            stateless::input_request_up(cx, method, o).map(|_| ())
        })?;
        let mut key = match sid {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if call.has_key(&key) {
            key = sid.to_string();
        }
        call.queued.push((key, m));
        if call.awaiting {
            return Ok(Asked::Queued(warnings));
        }
        let ir = Self::input_required(call)?;
        Ok(Asked::ToClient(vec![ir], warnings))
    }

    /// A request from the client (2026-07-28 form): when it retries a request of this
    /// bridge (its `requestState` is one the bridge gave), it is not forwarded; its
    /// answers go to the server instead.
    pub fn on_client_request(
        &mut self,
        request: &Value,
        server: Version,
    ) -> Result<Option<Retry>, TranslateError> {
        let Some(state) = request
            .pointer("/params/requestState")
            .and_then(Value::as_str)
        else {
            return Ok(None);
        };
        let Some(i) = self
            .calls
            .iter()
            .position(|c| c.awaiting && c.token() == state)
        else {
            return Ok(None);
        };
        let empty = Map::new();
        let answers = request
            .pointer("/params/inputResponses")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let call = &mut self.calls[i];
        call.current = request.get("id").cloned().unwrap_or_default();
        call.awaiting = false;
        let down = Hop {
            from: STATELESS,
            to: server,
            direction: Direction::ClientToServer,
        };
        let mut to_server = Vec::new();
        for (key, sid, method) in call.asked.drain(..) {
            let Some(mut r) = answers.get(&key).cloned() else {
                to_server.push(error(
                    &sid,
                    format!("the client's retry carried no answer for {key}"),
                ));
                continue;
            };
            let out = walk(&down, false, &format!("{method} result"), |cx| {
                cx.at(Seg::K("params"), |cx| {
                    cx.at(Seg::K("inputResponses"), |cx| {
                        cx.at(Seg::O(key.clone()), |cx| {
                            stateless::input_response(cx, &method, &mut r)
                        })
                    })
                })
            })
            .and_then(|_| {
                let m = json!({"jsonrpc": "2.0", "id": sid, "result": r});
                validate(&m, server, Direction::ClientToServer, &Answering(&method))?;
                Ok(m)
            });
            to_server.push(out.unwrap_or_else(|e| error(&sid, e.to_string())));
        }
        let mut to_client = Vec::new();
        if let Some(mut held) = call.held.take() {
            if let Some(o) = held.as_object_mut() {
                o.insert("id".into(), call.current.clone());
            }
            to_client.push(held);
            self.calls.remove(i);
        } else if !call.queued.is_empty() {
            to_client.push(Self::input_required(call)?);
        }
        Ok(Some(Retry {
            to_server,
            to_client,
        }))
    }

    /// A response from the server, translated for the client. `None`: held until the
    /// client's retry (its request is waiting for the client's input); otherwise the
    /// response to deliver, answering the client's latest retry.
    pub fn on_server_response(&mut self, mut response: Value) -> Option<Value> {
        let k = response.get("id").and_then(IdKey::of);
        let Some(i) = self
            .calls
            .iter()
            .position(|c| k.is_some() && IdKey::of(&c.id) == k)
        else {
            return Some(response);
        };
        if self.calls[i].awaiting {
            self.calls[i].held = Some(response);
            return None;
        }
        let call = self.calls.remove(i);
        if let Some(o) = response.as_object_mut() {
            o.insert("id".into(), call.current);
        }
        Some(response)
    }

    /// A client's `notifications/cancelled`: a request of this bridge is cancelled under
    /// its first id (the one the server knows), and forgotten.
    pub fn on_client_cancel(&mut self, notification: &mut Value) {
        let Some(id) = notification.pointer("/params/requestId").cloned() else {
            return;
        };
        let k = IdKey::of(&id);
        let Some(i) = self
            .calls
            .iter()
            .position(|c| k.is_some() && (IdKey::of(&c.current) == k || IdKey::of(&c.id) == k))
        else {
            return;
        };
        let call = self.calls.remove(i);
        if let Some(Value::Object(p)) = notification.get_mut("params") {
            p.insert("requestId".into(), call.id);
        }
    }

    /// How many client requests are in flight.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V06: Version = Version::V2025_06_18;

    #[test]
    fn a_session_client_answers_an_input_required_round() {
        let mut b = ForSessionClient::default();
        let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "t", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}}});
        b.note_request(&call);
        let ir = json!({"jsonrpc": "2.0", "id": 5, "result": {"resultType": "input_required",
            "inputRequests": {
                "s": {"method": "sampling/createMessage", "params": {"messages": [
                    {"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 9}},
                "e": {"method": "elicitation/create", "params": {"message": "pick",
                    "requestedSchema": {"type": "object", "properties": {
                        "c": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}}}}},
            "requestState": "st"}});
        let Opened::Round {
            to_client, retry, ..
        } = b.on_server_response(&ir, V06)
        else {
            panic!("no round")
        };
        assert!(retry.is_none());
        // Multi-select has no 2025-06-18 form: declined for the client, only sampling goes.
        assert_eq!(to_client.len(), 1);
        assert_eq!(to_client[0]["id"], json!("input:5:s"));
        let answer = json!({"jsonrpc": "2.0", "id": "input:5:s", "result": {
            "role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}});
        let Answered::Retry(r) = b.on_client_response(&answer, V06) else {
            panic!("no retry")
        };
        assert_eq!(r["id"], json!(5));
        assert_eq!(r["params"]["requestState"], json!("st"));
        assert_eq!(
            r["params"]["inputResponses"]["e"],
            json!({"action": "decline"})
        );
        assert_eq!(r["params"]["inputResponses"]["s"]["model"], json!("m"));
        assert_eq!(
            b.on_client_response(&answer, V06),
            Answered::NotOurs,
            "an answer is folded once"
        );
        let done =
            json!({"jsonrpc": "2.0", "id": 5, "result": {"resultType": "complete", "content": []}});
        assert_eq!(b.on_server_response(&done, V06), Opened::No);
        assert!(b.is_empty());
    }

    #[test]
    fn a_server_that_never_stops_asking_fails_the_request() {
        let mut b = ForSessionClient::default();
        let call =
            json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "p"}});
        b.note_request(&call);
        let ir = json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "requestState": "again"}});
        for _ in 0..MAX_ROUNDS {
            let Opened::Round { retry: Some(_), .. } = b.on_server_response(&ir, V06) else {
                panic!("expected an immediate retry")
            };
        }
        assert!(matches!(b.on_server_response(&ir, V06), Opened::Failed(_)));
        assert!(b.is_empty());
    }

    #[test]
    fn a_stateless_client_carries_server_requests_of_its_call() {
        let mut b = ForStatelessClient::default();
        let call =
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "t"}});
        b.note_call(&call);
        let s1 = json!({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"});
        let Asked::ToClient(out, _) = b.on_server_request(&s1, V06).unwrap() else {
            panic!()
        };
        assert_eq!(out[0]["id"], json!(3));
        assert_eq!(
            out[0]["result"]["inputRequests"]["s1"],
            json!({"method": "roots/list"})
        );
        // A second request while the client has not retried waits for the next round.
        let s2 = json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list"});
        assert!(matches!(
            b.on_server_request(&s2, V06).unwrap(),
            Asked::Queued(_)
        ));
        let retry = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "t",
            "inputResponses": {"s1": {"roots": []}}, "requestState": "upstream:3"}});
        let r = b.on_client_request(&retry, V06).unwrap().unwrap();
        assert_eq!(
            r.to_server,
            vec![json!({"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}})]
        );
        assert_eq!(r.to_client[0]["id"], json!(4));
        assert_eq!(
            r.to_client[0]["result"]["inputRequests"]["7"]["method"],
            json!("roots/list")
        );
        // The server's result while the client owes a retry is held, then answers it.
        let done =
            json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [], "resultType": "complete"}});
        assert_eq!(b.on_server_response(done.clone()), None);
        let retry2 = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "t",
            "inputResponses": {"7": {"roots": []}}, "requestState": "upstream:3"}});
        let r = b.on_client_request(&retry2, V06).unwrap().unwrap();
        assert_eq!(r.to_server[0]["id"], json!(7));
        assert_eq!(r.to_client[0]["id"], json!(6));
        assert_eq!(r.to_client[0]["result"], done["result"]);
        assert!(b.is_empty());
    }
}
