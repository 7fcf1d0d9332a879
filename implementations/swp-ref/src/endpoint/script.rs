//! Requests the endpoint answers in several steps over time (the conformance fixtures'
//! tools that log, report progress, or ask the client for sampling or elicitation): each
//! is a [`Script`] of timed notifications and at most one server-to-client request, run
//! sans-IO by [`Scripts`] on the connection's clock. A server-to-client request travels as
//! a profile-1 request (msg_type 1) under a fresh msg_id of the endpoint's own, and the
//! client's answer comes back as a response (msg_type 2) on that msg_id (mapping §5).

use super::conformance::{self, Finish};
use bytes::Bytes;
use std::collections::VecDeque;

/// Most scripts one connection runs at once; more are refused (a peer must not make the
/// endpoint hold unbounded state by calling slow tools).
pub const MAX_SCRIPTS: usize = 64;

/// How long a server-to-client request waits for the client's answer before the tool call
/// ends with an error.
pub const ASK_TIMEOUT_MS: u64 = 30_000;

/// One step of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Wait `after_ms` after the previous step, then send this notification.
    Notify {
        /// The wait.
        after_ms: u64,
        /// The JSON-RPC notification.
        payload: Vec<u8>,
    },
    /// Send a server-to-client request and end the script with the response `finish`
    /// builds from the client's answer. Always the last step.
    Ask {
        /// The request's method.
        method: &'static str,
        /// Its params, JSON text.
        params: String,
        /// How the client's answer becomes the tool call's result.
        finish: Finish,
    },
    /// Wait `after_ms`, then send the terminal response. Always the last step.
    Reply {
        /// The wait.
        after_ms: u64,
        /// The JSON-RPC response.
        payload: Vec<u8>,
    },
}

/// A request's steps, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script(pub Vec<Step>);

/// What a script wants written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Out {
    /// A notification under a fresh msg_id.
    Notify(Vec<u8>),
    /// A server-to-client request under this msg_id.
    Ask {
        /// The msg_id its answer will carry.
        msg_id: Bytes,
        /// The JSON-RPC request.
        payload: Vec<u8>,
    },
    /// The terminal response on the client request's msg_id, which leaves flight.
    Reply {
        /// The client request's msg_id.
        msg_id: Bytes,
        /// The JSON-RPC response.
        payload: Vec<u8>,
    },
}

#[derive(Debug)]
struct Running {
    /// The client request's msg_id (its terminal response goes there).
    msg_id: Bytes,
    /// The client request's JSON-RPC id, raw JSON text.
    request_id: String,
    steps: VecDeque<Step>,
    /// When the previous step ran: the next one is due its wait later.
    base_ms: u64,
    /// When the server-to-client request gives up waiting.
    timeout_ms: u64,
    /// The msg_id of the server-to-client request waiting for its answer.
    waiting: Option<(Bytes, Finish)>,
}

/// The scripts of one connection.
#[derive(Debug)]
pub struct Scripts {
    running: Vec<Running>,
    /// Counter of the server-to-client requests sent (their msg_ids and JSON-RPC ids).
    asks: u64,
    /// The msg_id bounds the asks' msg_ids must meet.
    limits: swp_core::Limits,
}

/// The script table is full.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{MAX_SCRIPTS} multi-step requests are already running on this connection")]
pub struct Full;

impl Scripts {
    /// No script running; asks get msg_ids within `limits`.
    pub fn new(limits: swp_core::Limits) -> Self {
        Scripts {
            running: Vec::new(),
            asks: 0,
            limits,
        }
    }

    /// Whether any script is running.
    pub fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    /// Octets held for the running scripts (charged to the connection's budget).
    pub fn held_bytes(&self) -> usize {
        self.running
            .iter()
            .map(|r| {
                r.msg_id.len() + r.request_id.len() + r.steps.iter().map(step_size).sum::<usize>()
            })
            .sum()
    }

    /// Starts `script` for the request `request_id` received under `msg_id`; what is due
    /// at once is appended to `out`.
    pub fn start(
        &mut self,
        msg_id: Bytes,
        request_id: &str,
        script: Script,
        now_ms: u64,
        out: &mut Vec<Out>,
    ) -> Result<(), Full> {
        if self.running.len() >= MAX_SCRIPTS {
            return Err(Full);
        }
        self.running.push(Running {
            msg_id,
            request_id: request_id.to_owned(),
            steps: script.0.into(),
            base_ms: now_ms,
            timeout_ms: u64::MAX,
            waiting: None,
        });
        self.on_timer(now_ms, out);
        Ok(())
    }

    /// When [`Scripts::on_timer`] should next run.
    pub fn next_deadline(&self) -> Option<u64> {
        self.running
            .iter()
            .map(|r| match (&r.waiting, r.steps.front()) {
                (Some(_), _) => r.timeout_ms,
                (None, Some(s)) => r.base_ms.saturating_add(wait_of(s)),
                (None, None) => r.base_ms,
            })
            .min()
    }

    /// Runs every step that is due; asks that waited too long end their script with an
    /// error response.
    pub fn on_timer(&mut self, now_ms: u64, out: &mut Vec<Out>) {
        let mut k = 0;
        while k < self.running.len() {
            if self.advance(k, now_ms, out) {
                self.running.swap_remove(k);
            } else {
                k += 1;
            }
        }
    }

    /// Whether `msg_id` is a server-to-client request waiting for its answer.
    pub fn awaits(&self, msg_id: &[u8]) -> bool {
        self.running
            .iter()
            .any(|r| r.waiting.as_ref().is_some_and(|(m, _)| m[..] == *msg_id))
    }

    /// The client answered the server-to-client request sent under `msg_id`: its script
    /// ends with the response built from the answer.
    pub fn on_answer(&mut self, msg_id: &[u8], answer: &[u8], out: &mut Vec<Out>) {
        let Some(k) = self
            .running
            .iter()
            .position(|r| r.waiting.as_ref().is_some_and(|(m, _)| m[..] == *msg_id))
        else {
            return;
        };
        let r = self.running.swap_remove(k);
        if let Some((_, finish)) = r.waiting {
            out.push(Out::Reply {
                payload: conformance::finish(finish, &r.request_id, Some(answer)),
                msg_id: r.msg_id,
            });
        }
    }

    /// Runs script `k` as far as time allows; `true` when it ended.
    fn advance(&mut self, k: usize, now_ms: u64, out: &mut Vec<Out>) -> bool {
        let r = &mut self.running[k];
        if let Some((_, finish)) = &r.waiting {
            if now_ms < r.timeout_ms {
                return false;
            }
            out.push(Out::Reply {
                payload: conformance::finish(*finish, &r.request_id, None),
                msg_id: r.msg_id.clone(),
            });
            return true;
        }
        loop {
            let Some(front) = r.steps.front() else {
                return true;
            };
            let at = r.base_ms.saturating_add(wait_of(front));
            if at > now_ms {
                return false;
            }
            r.base_ms = at;
            match r.steps.pop_front() {
                None => return true,
                Some(Step::Notify { payload, .. }) => out.push(Out::Notify(payload)),
                Some(Step::Reply { payload, .. }) => {
                    out.push(Out::Reply {
                        msg_id: r.msg_id.clone(),
                        payload,
                    });
                    return true;
                }
                Some(Step::Ask {
                    method,
                    params,
                    finish,
                }) => {
                    self.asks += 1;
                    let n = self.asks;
                    let msg_id = super::reply::ask_msg_id(n, &self.limits);
                    let payload = format!(
                        "{{\"jsonrpc\":\"2.0\",\"id\":\"swp-ref-ask-{n}\",\"method\":\"{method}\",\"params\":{params}}}"
                    )
                    .into_bytes();
                    out.push(Out::Ask {
                        msg_id: msg_id.clone(),
                        payload,
                    });
                    r.waiting = Some((msg_id, finish));
                    r.timeout_ms = now_ms.saturating_add(ASK_TIMEOUT_MS);
                    return false;
                }
            }
        }
    }
}

/// How long a step waits after the one before it.
fn wait_of(s: &Step) -> u64 {
    match s {
        Step::Notify { after_ms, .. } | Step::Reply { after_ms, .. } => *after_ms,
        Step::Ask { .. } => 0,
    }
}

fn step_size(s: &Step) -> usize {
    match s {
        Step::Notify { payload, .. } | Step::Reply { payload, .. } => payload.len(),
        Step::Ask { params, .. } => params.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notify(after_ms: u64, n: u8) -> Step {
        Step::Notify {
            after_ms,
            payload: vec![n],
        }
    }

    #[test]
    fn steps_run_on_the_clock_in_order() {
        let mut s = Scripts::new(swp_core::Limits::default());
        let mut out = Vec::new();
        let script = Script(vec![
            notify(0, 1),
            notify(50, 2),
            Step::Reply {
                after_ms: 50,
                payload: b"done".to_vec(),
            },
        ]);
        s.start(Bytes::from_static(b"m1"), "1", script, 1000, &mut out)
            .unwrap();
        assert_eq!(out, vec![Out::Notify(vec![1])]);
        assert_eq!(s.next_deadline(), Some(1050));
        out.clear();
        s.on_timer(1049, &mut out);
        assert!(out.is_empty());
        s.on_timer(1050, &mut out);
        assert_eq!(out, vec![Out::Notify(vec![2])]);
        assert_eq!(s.next_deadline(), Some(1100));
        out.clear();
        s.on_timer(5000, &mut out);
        assert_eq!(
            out,
            vec![Out::Reply {
                msg_id: Bytes::from_static(b"m1"),
                payload: b"done".to_vec()
            }]
        );
        assert!(s.is_empty());
    }

    #[test]
    fn an_ask_waits_for_its_answer_or_times_out() {
        let mut s = Scripts::new(swp_core::Limits::default());
        let mut out = Vec::new();
        let ask = || {
            Script(vec![Step::Ask {
                method: "sampling/createMessage",
                params: "{}".into(),
                finish: Finish::Sampling,
            }])
        };
        s.start(Bytes::from_static(b"m1"), "7", ask(), 0, &mut out)
            .unwrap();
        let Out::Ask { msg_id, payload } = out.remove(0) else {
            panic!("no ask")
        };
        let v: serde_json::Value = serde_json::from_slice(&payload).unwrap();
        assert_eq!(v["method"], "sampling/createMessage");
        assert!(s.awaits(&msg_id));
        // An answer to some other msg_id ends nothing.
        s.on_answer(b"other", b"{}", &mut out);
        assert!(out.is_empty());
        let answer = br#"{"jsonrpc":"2.0","id":"swp-ref-ask-1","result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}"#;
        s.on_answer(&msg_id, answer, &mut out);
        let Out::Reply { msg_id: m, payload } = out.remove(0) else {
            panic!("no reply")
        };
        assert_eq!(&m[..], b"m1");
        let v: serde_json::Value = serde_json::from_slice(&payload).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["result"]["content"][0]["text"], "LLM response: hi");
        assert!(s.is_empty());

        // Unanswered: the call ends with an error once the timeout passes.
        s.start(Bytes::from_static(b"m2"), "8", ask(), 0, &mut out)
            .unwrap();
        out.clear();
        s.on_timer(ASK_TIMEOUT_MS - 1, &mut out);
        assert!(out.is_empty());
        s.on_timer(ASK_TIMEOUT_MS, &mut out);
        let Out::Reply { payload, .. } = out.remove(0) else {
            panic!("no reply")
        };
        let v: serde_json::Value = serde_json::from_slice(&payload).unwrap();
        assert_eq!(v["result"]["isError"], true);
    }

    #[test]
    fn the_table_is_bounded() {
        let mut s = Scripts::new(swp_core::Limits::default());
        let mut out = Vec::new();
        let long = || {
            Script(vec![Step::Reply {
                after_ms: 10,
                payload: vec![],
            }])
        };
        for _ in 0..MAX_SCRIPTS {
            s.start(Bytes::from_static(b"m"), "1", long(), 0, &mut out)
                .unwrap();
        }
        assert_eq!(
            s.start(Bytes::from_static(b"m"), "1", long(), 0, &mut out),
            Err(Full)
        );
    }
}
