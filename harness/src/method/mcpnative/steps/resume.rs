//! The `resume` step: SSE resumability on Streamable HTTP (MCPN-075). A request is POSTed
//! and its SSE stream dropped after the first event that carries an id, as a client that
//! lost its connection there; a `GET` carrying that id as `Last-Event-ID` resumes it, and
//! the response must arrive exactly once in all. Every choice the specification leaves the
//! server (a JSON answer, no event ids, no GET stream, no replay) makes the vector not
//! applicable with the reason, never a failure (docs/spec-issues.md SI-046).

use super::common::*;
use super::runner::Runner;
use crate::catalog::mcpnative::ResumeSpec;
use crate::method::mcpnative::conv::{short, Arrived, Chan, Conv, Pumped};
use crate::method::mcpnative::http::{Exchange, Verb};
use crate::method::mcpnative::judge;
use crate::method::mcpnative::stop::Stop;
use crate::report::result::{Dir, NaCause};
use serde_json::Value;
use std::time::Instant;

/// A resumed stream delivers the response once in all: not again after it was delivered,
/// not twice.
pub(super) const REDELIVERY: &str = "MCPN-075";

/// The media type of a `Content-Type`, lower case.
fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Takes the first queued response with `id`.
fn take_response(conv: &mut Conv<'_>, id: &Value) -> Option<Arrived> {
    let i = conv
        .inbox
        .iter()
        .position(|a| a.response_id() == Some(id))?;
    conv.inbox.remove(i)
}

/// Waits until the response with `id` is queued; `None` when it is not by `deadline`.
fn wait_queued(conv: &mut Conv<'_>, id: &Value, deadline: Instant) -> Result<bool, Stop> {
    loop {
        if conv.inbox.iter().any(|a| a.response_id() == Some(id)) {
            return Ok(true);
        }
        match conv.pump(deadline)? {
            Pumped::Got => {}
            Pumped::Timeout => return Ok(false),
            Pumped::Closed(why) => {
                return Err(Stop::fail(why.clone(), "the resumed stream", why));
            }
        }
    }
}

impl<'v> Runner<'v> {
    pub(super) fn resume(&mut self, conv: &mut Conv<'_>, r: &ResumeSpec) -> Result<Done, Stop> {
        if !matches!(conv.chan, Chan::Http(_)) {
            return Err(Stop::harness(
                "a `resume` step needs the http transport (declare `transport: http`)",
            ));
        }
        let method = r.method.as_str();
        let params = r.params.as_ref().map(|p| self.fill(p)).transpose()?;
        conv.cut_next = true;
        let sent = self.send_request(conv, method, params, None, false);
        conv.cut_next = false;
        let id = sent?;
        let Some(n) = conv.last_exchange else {
            return Err(Stop::harness("the request went out on no HTTP exchange"));
        };
        let st = conv.exchanges.get(&n).cloned().unwrap_or_default();
        let status = st.status.unwrap_or_default();
        if !(200..300).contains(&status) {
            return Err(Stop::fail(
                format!("{method} was refused with HTTP {status}: no stream to resume"),
                "a JSON answer or an SSE stream",
                format!("HTTP {status}"),
            )
            .breaking(&["MCPN-050".to_owned()])
            .keyed(format!("{method} refused at the HTTP level")));
        }
        if media_type(&st.content_type) != "text/event-stream" {
            let d = conv.answer_deadline();
            let a = conv.wait_response(&id, d)?;
            conv.log(Dir::Note, &format!("answered: {}", a.summary()));
            return Err(Stop::not_applicable(
                NaCause::SutChoice,
                format!(
                    "the server answered {method} with {:?}, not an SSE stream: there is no stream to resume (a server may answer either way)",
                    st.content_type
                ),
            ));
        }
        // The stream until the client cuts it (an event carried an id) or it ends.
        let d = conv.answer_deadline();
        let cut = loop {
            let x = conv.exchanges.get(&n).cloned().unwrap_or_default();
            if x.cut.is_some() || x.ended.is_some() || x.failed.is_some() {
                break x;
            }
            match conv.pump(d)? {
                Pumped::Got => {}
                Pumped::Timeout => break x,
                Pumped::Closed(why) => return Err(Stop::fail(why.clone(), "an SSE stream", why)),
            }
        };
        let Some(last) = cut.cut else {
            // No id on the stream: the response is owed all the same.
            let a = conv
                .wait_response(&id, d)
                .map_err(|s| s.or_breaking(judge::ONE_RESPONSE))?;
            conv.log(Dir::Note, &format!("answered: {}", a.summary()));
            return Err(Stop::not_applicable(
                NaCause::SutChoice,
                format!("the server's SSE stream for {method} carried no event id: it does not offer resumability (event ids are a MAY)"),
            ));
        };
        // The id as messages show it: a server's id may be long.
        let shown = crate::support::transcript::clip_text(&last, 80);
        let before = take_response(conv, &id);
        // A client MUST wait the `retry` the server gave before reconnecting (2025-11-25).
        if let Some(ms) = cut.retry {
            conv.drain(ms.min(self.spec.timing.step_ms))?;
        }
        let g = conv
            .http(Exchange {
                verb: Verb::Get,
                body: Vec::new(),
                session: conv.http_session(),
                protocol_version: conv.protocol_header.clone(),
                headers: vec![("Last-Event-ID".to_owned(), last.clone())],
            })
            .map_err(|e| Stop::harness(e.0))?;
        if let Some(x) = conv.exchanges.get_mut(&g) {
            x.traced = true;
        }
        let d = conv.answer_deadline();
        let gs = conv.wait_status(g, d)?;
        let got = gs.status.unwrap_or_default();
        if let (None, Some(why)) = (gs.status, &gs.failed) {
            return Err(Stop::fail(
                format!("the GET resuming the stream failed: {why}"),
                "an answer to the GET",
                why.clone(),
            ));
        }
        if got == 405 {
            return Err(Stop::not_applicable(
                NaCause::SutChoice,
                "the server offers no GET stream (405), so no stream is resumed",
            ));
        }
        if !(200..300).contains(&got) {
            return Err(Stop::not_applicable(
                NaCause::SutChoice,
                format!("the server refused to resume the stream with HTTP {got}; replaying is a MAY (docs/spec-issues.md SI-046)"),
            ));
        }
        if media_type(&gs.content_type) != "text/event-stream" {
            return Err(Stop::fail(
                format!(
                    "a GET answered HTTP {got} with {:?}; a GET is answered with text/event-stream or 405",
                    gs.content_type
                ),
                "Content-Type text/event-stream",
                format!("{:?}", gs.content_type),
            )
            .breaking(&["MCPN-054".to_owned()]));
        }
        let (first, where_) = match before {
            Some(a) => (a, "before the cut"),
            None => {
                if !wait_queued(conv, &id, d)? {
                    return Err(Stop::not_applicable(
                        NaCause::SutChoice,
                        format!("the server accepted the GET with Last-Event-ID {shown:?} but did not redeliver the response to {method}: replaying is a MAY, and the vector grades that reading (docs/spec-issues.md SI-046)"),
                    ));
                }
                let a = take_response(conv, &id)
                    .ok_or_else(|| Stop::harness("the queued response went away"))?;
                (a, "on the resumed stream")
            }
        };
        // A second copy is watched for as any late duplicate is: the manifest's quiet
        // window (a replay is written when the GET arrives, not later).
        conv.settle(self.spec.timing.silence_ms.min(self.spec.timing.step_ms))?;
        if let Some(again) = take_response(conv, &id) {
            // The judge saw the second copy break MCPN-021 too: one failure, both rules.
            let step = conv.focus.step;
            conv.charged
                .retain(|(k, s)| !(*k == step && s.broke.iter().any(|b| b == judge::ONE_RESPONSE)));
            return Err(Stop::fail(
                format!("{REDELIVERY}: the response to {method} arrived {where_} and again after the resumption from event id {shown:?}; a resumed stream replays only what follows the last event id, and a message goes on one stream only"),
                "the response exactly once",
                format!("{} and {}", first.summary(), again.summary()),
            )
            .breaking(&[REDELIVERY.to_owned(), judge::ONE_RESPONSE.to_owned()])
            .keyed(format!("{method} delivered twice across a resumption")));
        }
        Ok(Done {
            observed: format!(
                "cut after event id {shown:?}; the response arrived once, {where_}: {}",
                short(&first.msg.to_string())
            ),
            response: Some(first),
            exchange: Some(g),
            ..Done::default()
        })
    }
}
