//! The MCP-native conversation's transport side: sending a message (a stdio line, an HTTP
//! POST, a WebSocket text frame), hand-written HTTP exchanges, closing stdin, and reading
//! the next message octets or HTTP event before a deadline.

use super::chan::{Got, TransportError};
use super::conv::{Chan, Conv, ExState, MAX_LINE_BYTES};
use super::eventids::UNIQUE_EVENT_IDS;
use super::http::{Exchange, HttpEvent, Verb};
use super::judge::{Inbound, Violation};
use super::stop::Stop;
use crate::connect::wire::Recv;
use crate::report::result::Dir;
use serde_json::json;
use std::time::{Duration, Instant};

/// One read from the transport.
pub(super) enum Raw {
    Text(Vec<u8>, Option<u16>),
    /// Something about an HTTP exchange (its status, its end) was recorded.
    Event,
    Timeout,
    Closed(String),
}

impl Conv<'_> {
    /// Sends one message: a line on stdio, a POST on HTTP, a text frame on WebSocket.
    pub fn send_text(&mut self, text: &str) -> Result<(), TransportError> {
        self.log(Dir::Sent, text);
        match &mut self.chan {
            Chan::Stdio(w) => {
                let mut b = text.as_bytes().to_vec();
                b.push(b'\n');
                w.send(&b)
                    .map_err(|e| TransportError(format!("cannot write to the server's stdin: {e}")))
            }
            Chan::Http(h) => {
                let ex = Exchange {
                    verb: Verb::Post,
                    body: text.as_bytes().to_vec(),
                    session: h.session(),
                    protocol_version: self.protocol_header.clone(),
                    headers: Vec::new(),
                };
                let cut = std::mem::take(&mut self.cut_next);
                let n = if cut { h.start_cut(ex) } else { h.start(ex) };
                self.last_exchange = Some(n);
                self.exchanges.insert(
                    n,
                    ExState {
                        traced: cut,
                        ..ExState::default()
                    },
                );
                // Like a real client, the next message waits until this one was taken:
                // the server's answer head (a 202, or the start of a JSON or SSE answer).
                let d = self.deadline(self.timing.step_ms);
                match self.wait_status(n, d) {
                    Ok(_) => Ok(()),
                    Err(stop) => Err(TransportError(stop.why)),
                }
            }
            Chan::Ws(w) => w.send(text.as_bytes()),
        }
    }

    /// Starts an HTTP exchange written by hand.
    pub fn http(&mut self, ex: Exchange) -> Result<u64, TransportError> {
        let Chan::Http(h) = &mut self.chan else {
            return Err(TransportError(
                "an HTTP exchange needs the http transport".into(),
            ));
        };
        let line = format!(
            "{} (Mcp-Session-Id: {}, MCP-Protocol-Version: {}{}) {}",
            ex.verb.as_str(),
            ex.session.as_deref().unwrap_or("none"),
            ex.protocol_version.as_deref().unwrap_or("none"),
            ex.headers
                .iter()
                .map(|(k, v)| format!(", {k}: {v}"))
                .collect::<String>(),
            String::from_utf8_lossy(&ex.body)
        );
        let n = h.start(ex);
        self.log(Dir::Sent, &line);
        self.last_exchange = Some(n);
        self.exchanges.insert(n, ExState::default());
        Ok(n)
    }

    /// Closes the write side (stdio: the server's stdin).
    pub fn close_input(&mut self) -> Result<(), TransportError> {
        self.log(Dir::Note, "closed the server's stdin");
        match &mut self.chan {
            Chan::Stdio(w) => w
                .half_close()
                .map_err(|e| TransportError(format!("cannot close stdin: {e}"))),
            _ => Err(TransportError("only stdio has a stdin to close".into())),
        }
    }

    /// The session id the HTTP server assigned.
    pub fn http_session(&self) -> Option<String> {
        match &self.chan {
            Chan::Http(h) => h.session(),
            _ => None,
        }
    }

    /// Forgets the HTTP session (a `DELETE` ended it).
    pub fn end_http_session(&mut self) {
        if let Chan::Http(h) = &self.chan {
            self.session_ended = h.session();
            h.forget_session();
        }
    }

    pub(super) fn http_event(&mut self, e: HttpEvent) -> Option<Raw> {
        let n = e.exchange();
        let st = self.exchanges.entry(n).or_default();
        match e {
            HttpEvent::Head {
                status,
                content_type,
                ..
            } => {
                st.status = Some(status);
                st.content_type = content_type.clone();
                // A status is an answer, though its note is no `received` entry.
                self.tl.transcript.mark_heard();
                let ct = if content_type.is_empty() {
                    "no Content-Type".to_owned()
                } else {
                    content_type
                };
                self.log(Dir::Note, &format!("HTTP {status} ({ct}), exchange {n}"));
                None
            }
            HttpEvent::Message {
                status,
                body,
                event_id,
                retry,
                ..
            } => {
                if retry.is_some() {
                    st.retry = retry;
                }
                if let Some(id) = &event_id {
                    if st.traced || body.is_empty() {
                        let what = if body.is_empty() { ", no data" } else { "" };
                        let r = retry.map_or(String::new(), |ms| format!(", retry {ms} ms"));
                        self.log(
                            Dir::Note,
                            &format!("exchange {n}: SSE event id {id:?}{r}{what}"),
                        );
                    }
                    self.event_id(id, &body);
                }
                self.read_total += body.len() as u64;
                Some(Raw::Text(body, Some(status)))
            }
            HttpEvent::Cut {
                last_event_id,
                dropped,
                ..
            } => {
                st.cut = Some(last_event_id.clone());
                self.log(
                    Dir::Note,
                    &format!("exchange {n}: the client dropped the connection after event id {last_event_id:?} ({dropped} later event(s) that had arrived dropped unread)"),
                );
                None
            }
            HttpEvent::End { what, .. } => {
                st.ended = Some(what.clone());
                self.log(Dir::Note, &format!("exchange {n}: {what}"));
                None
            }
            HttpEvent::Failed { why, .. } => {
                st.failed = Some(why.clone());
                self.log(Dir::Note, &format!("exchange {n} failed: {why}"));
                None
            }
        }
    }

    /// The server gave an SSE event `id` carrying `data`: judged for MCPN-076 against every
    /// id of the session, a reused one charged like any violation (the vector's when it
    /// tests the rule, else an incidental observation).
    fn event_id(&mut self, id: &str, data: &[u8]) {
        if !self
            .peer
            .as_mut()
            .is_some_and(|p| p.event_ids.reused(id, data))
        {
            return;
        }
        let v = Violation {
            rule: UNIQUE_EVENT_IDS,
            key: format!("{UNIQUE_EVENT_IDS} an SSE event id given to two events"),
            why: format!(
                "the server gave SSE event id {:?} to two different events of the session; an event id MUST be unique across all streams of the session",
                crate::support::transcript::clip_text(id, 80)
            ),
        };
        let what = json!({"SSE event id": id, "data": String::from_utf8_lossy(data)});
        self.charge(&Inbound::Garbage, v, &what);
    }

    /// The next message octets before `deadline`.
    pub(super) fn raw(&mut self, deadline: Instant) -> Result<Raw, Stop> {
        if let Chan::Http(_) = self.chan {
            let e = match &self.chan {
                Chan::Http(h) => h.next(deadline),
                _ => None,
            };
            let Some(e) = e else { return Ok(Raw::Timeout) };
            return Ok(self.http_event(e).unwrap_or(Raw::Event));
        }
        if let Chan::Ws(w) = &mut self.chan {
            return Ok(match w.next(deadline) {
                Got::Msg(m) => {
                    self.read_total += m.body.len() as u64;
                    Raw::Text(m.body, m.status)
                }
                Got::Timeout => Raw::Timeout,
                Got::Closed(why) => Raw::Closed(why),
            });
        }
        let Chan::Stdio(wire) = &mut self.chan else {
            return Ok(Raw::Timeout);
        };
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let mut l: Vec<u8> = self.buf.drain(..=i).collect();
                l.pop();
                if l.last() == Some(&b'\r') {
                    l.pop();
                }
                return Ok(Raw::Text(l, None));
            }
            if self.buf.len() > MAX_LINE_BYTES {
                return Err(Stop::fail(
                    format!("the server wrote a line longer than {MAX_LINE_BYTES} octets"),
                    "newline-delimited JSON-RPC messages",
                    "an unbounded line",
                ));
            }
            if let Some(c) = &self.closed {
                return Ok(Raw::Closed(c.clone()));
            }
            match wire.recv(deadline) {
                Recv::Data(d) => {
                    self.read_total += d.len() as u64;
                    if self.read_total > self.timing.max_read_bytes {
                        return Err(Stop::fail(
                            format!(
                                "the server wrote more than {} octets in one vector (harness bound)",
                                self.timing.max_read_bytes
                            ),
                            "",
                            "a flood",
                        ));
                    }
                    self.buf.extend_from_slice(&d);
                }
                Recv::Eof => {
                    let exit = self
                        .proc
                        .as_mut()
                        .and_then(|p| p.wait_exit(Duration::from_millis(200)));
                    self.closed = Some(match exit {
                        Some(st) => format!("the server closed its stdout and {st}"),
                        None => "the server closed its stdout".into(),
                    })
                }
                Recv::Broken(e) => self.closed = Some(format!("reading stdout failed: {e}")),
                Recv::Timeout => return Ok(Raw::Timeout),
            }
        }
    }
}
