//! The `translate` method: hands each step's MCP message to the SUT's translator (the
//! library in process, or a testee's `translate` operation) and judges the answer against
//! the exact expected translation or typed error.

use super::contract::{answered, Fatal, Outcome};
use crate::catalog::mcpx::{TranslateSend, TranslatedSpec, TranslationErrorSpec};
use crate::catalog::vector::{TranslateExpect, TranslateStep};
use crate::connect::driver::CodecDriver;
use crate::report::result::{Dir, TranscriptEntry, Verdict};
use crate::support::show::quoted;
use serde_json::Value;
use swp_testee_proto::{TranslateReply, TranslateRequest};

/// Characters of JSON shown per transcript entry.
const TRANSCRIPT_CHARS: usize = 2048;

fn clip(s: String) -> String {
    crate::support::transcript::clip_text(&s, TRANSCRIPT_CHARS)
}

fn request(t: &TranslateSend) -> TranslateRequest {
    TranslateRequest {
        from: t.from.as_str().into(),
        to: t.to.as_str().into(),
        direction: t.direction.as_str().into(),
        answers: t.answers.clone(),
        message: t.message.clone(),
    }
}

fn describe_translated(e: &TranslatedSpec) -> String {
    let w: Vec<String> = e
        .warnings
        .iter()
        .map(|w| format!("{} {}", w.kind.as_str(), quoted(&w.path)))
        .collect();
    format!(
        "{} message(s), {} reply(ies), warnings [{}]",
        e.messages.len(),
        e.replies.len(),
        w.join(", ")
    )
}

fn describe_error(e: &TranslationErrorSpec) -> String {
    format!(
        "error {}{}{}",
        e.kind.as_str(),
        e.message_type
            .as_ref()
            .map(|m| format!(" on {m}"))
            .unwrap_or_default(),
        e.path
            .as_ref()
            .map(|p| format!(" at {}", quoted(p)))
            .unwrap_or_default()
    )
}

fn describe_reply(r: &TranslateReply) -> String {
    match r {
        TranslateReply::Translated {
            messages,
            replies,
            warnings,
        } => {
            let w: Vec<String> = warnings
                .iter()
                .map(|w| format!("{} {:?}", w.kind, w.path))
                .collect();
            format!(
                "{} message(s), {} reply(ies), warnings [{}]",
                messages.len(),
                replies.len(),
                w.join(", ")
            )
        }
        TranslateReply::Error {
            kind,
            message_type,
            path,
            ..
        } => format!("error {kind} on {message_type} at {path:?}"),
    }
}

fn first_difference(what: &str, got: &[Value], want: &[Value]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} {what}, expected {}", got.len(), want.len()));
    }
    got.iter()
        .zip(want)
        .enumerate()
        .find_map(|(i, (g, w))| (g != w).then(|| clip(format!("{what}[{i}] is {g}, expected {w}"))))
}

/// Why `got` does not match `want`, if it does not.
fn judge(want: &TranslateExpect, got: &TranslateReply) -> Option<String> {
    match (want, got) {
        (TranslateExpect::OneOf(alts), _) => {
            let misses: Vec<String> = alts.iter().map_while(|a| judge(a, got)).collect();
            (misses.len() == alts.len()).then(|| {
                format!(
                    "none of the {} allowed outcomes: {}",
                    alts.len(),
                    misses
                        .iter()
                        .enumerate()
                        .map(|(i, m)| format!("({}) {m}", i + 1))
                        .collect::<Vec<_>>()
                        .join("; ")
                )
            })
        }
        (
            TranslateExpect::Translated(e),
            TranslateReply::Translated {
                messages,
                replies,
                warnings,
            },
        ) => {
            if let Some(d) = first_difference("messages", messages, &e.messages) {
                return Some(d);
            }
            if let Some(d) = first_difference("replies", replies, &e.replies) {
                return Some(d);
            }
            let g: Vec<(&str, &str)> = warnings
                .iter()
                .map(|w| (w.kind.as_str(), w.path.as_str()))
                .collect();
            let w: Vec<(&str, &str)> = e
                .warnings
                .iter()
                .map(|w| (w.kind.as_str(), w.path.as_str()))
                .collect();
            let show = |xs: &[(&str, &str)]| {
                crate::support::show::joined(xs.iter().map(|(k, p)| format!("{k} {}", quoted(p))))
            };
            (g != w).then(|| format!("warnings are {}, expected {}", show(&g), show(&w)))
        }
        (TranslateExpect::Translated(_), TranslateReply::Error { .. }) => {
            Some("the translator refused a message it must translate".into())
        }
        (TranslateExpect::TranslationError(_), TranslateReply::Translated { .. }) => {
            Some("the translator translated a message it must refuse with a typed error".into())
        }
        (
            TranslateExpect::TranslationError(e),
            TranslateReply::Error {
                kind,
                message_type,
                path,
                ..
            },
        ) => {
            if kind != e.kind.as_str() {
                return Some(format!("error kind {kind}, expected {}", e.kind.as_str()));
            }
            if let Some(m) = &e.message_type {
                if m != message_type {
                    return Some(format!(
                        "error names message type {message_type:?}, expected {m:?}"
                    ));
                }
            }
            match &e.path {
                Some(p) if p != path => Some(format!("error names path {path:?}, expected {p:?}")),
                _ => None,
            }
        }
    }
}

/// One line for an expectation (`one_of` lists its alternatives).
fn describe(want: &TranslateExpect) -> String {
    match want {
        TranslateExpect::Translated(e) => describe_translated(e),
        TranslateExpect::TranslationError(e) => describe_error(e),
        TranslateExpect::OneOf(alts) => format!(
            "one of: {}",
            alts.iter().map(describe).collect::<Vec<_>>().join(" | ")
        ),
    }
}

/// Runs the steps of a translate vector through `driver`.
pub fn run(driver: &mut dyn CodecDriver, steps: &[TranslateStep]) -> Result<Outcome, Fatal> {
    let mut o = Outcome::new(Verdict::Pass, None);
    for (i, s) in steps.iter().enumerate() {
        let label = if steps.len() > 1 {
            format!("step {}: ", i + 1)
        } else {
            String::new()
        };
        let (Some(t), [want]) = (
            s.send.as_ref().and_then(|x| x.translate.as_deref()),
            s.expect.as_slice(),
        ) else {
            return Ok(Outcome {
                verdict: Verdict::HarnessError,
                detail: Some(format!("{label}not a translate step")),
                ..o
            });
        };
        let req = request(t);
        o.transcript.push(TranscriptEntry {
            t_ms: 0,
            dir: Dir::Sent,
            data: clip(format!(
                "{} → {} {}: {}",
                req.from, req.to, req.direction, req.message
            )),
        });
        o.expected = format!("{label}{}", describe(want));
        let got = match answered(driver.translate(&req))? {
            Ok(g) => g,
            Err(stop) => {
                return Ok(Outcome {
                    expected: o.expected,
                    observed: o.observed,
                    ..stop.with_transcript(o.transcript)
                })
            }
        };
        o.transcript.push(TranscriptEntry {
            t_ms: 0,
            dir: Dir::Received,
            data: clip(serde_json::to_string(&got).unwrap_or_default()),
        });
        o.observed = format!("{label}{}", describe_reply(&got));
        if let Some(why) = judge(want, &got) {
            return Ok(Outcome {
                verdict: Verdict::Fail,
                detail: Some(format!("{label}{why}")),
                ..o
            });
        }
    }
    Ok(o)
}
