//! The codec method: a vector's whole stream goes to the SUT in one
//! `decode` request (with a virtual receiver clock), and the events each chunk produced are
//! judged step by step. The same method runs `translate` vectors, one `translate` request
//! per step.

use super::contract::{answered, step_results, Fatal, Judged, NotApplicable, Outcome, TestMethod};
use crate::catalog::vector::{Body, Method, Vector};
use crate::connect::driver::CodecDriver;
use crate::method::evaluate::{self, describe_expected};
use crate::plan::materialize::{self, Action, ConcreteStep, MaterialiseError};
use crate::report::result::{Dir, TranscriptEntry, Verdict};
use crate::support::cancel::Cancel;
use crate::support::transcript::{transcript_events, transcript_hex};
use crate::sut::{codec_config_of, Sut};
use swp_testee_proto::{Chunk, DecodeReply, DecodeRequest, Hex};

/// The receiver clock origin for the codec method: fixed so runs are reproducible.
pub const CODEC_NOW_MS: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/// The codec method over one connector (in process or a testee).
pub struct CodecMethod<'a> {
    /// The SUT.
    pub sut: &'a Sut,
    /// The connector.
    pub driver: Box<dyn CodecDriver + 'a>,
}

/// A vector made concrete for the codec method.
pub enum CodecWork {
    /// Octets with receiver clocks and expectations.
    Frames(Vec<ConcreteStep>),
    /// `translate` steps, used as they are.
    Translate,
}

impl<'a> CodecMethod<'a> {
    /// The codec method driving `driver` for `sut`.
    pub fn new(sut: &'a Sut, driver: Box<dyn CodecDriver + 'a>) -> Self {
        CodecMethod { sut, driver }
    }
}

impl TestMethod for CodecMethod<'_> {
    type Concrete = CodecWork;

    fn describe(&self) -> String {
        self.driver.describe()
    }

    fn admit(&self, v: &Vector) -> Result<Method, NotApplicable> {
        // The codec testee translates too: the translate family runs here.
        match &v.body {
            Body::Translate(_) => Ok(Method::Translate),
            Body::Frames(_) if v.header.methods.contains(&Method::Codec) => Ok(Method::Codec),
            _ => Err("only the session method applies; this run uses the codec method".into()),
        }
    }

    fn materialise(&mut self, v: &Vector, method: Method) -> Result<CodecWork, MaterialiseError> {
        if method == Method::Translate {
            return Ok(CodecWork::Translate);
        }
        // A published fixture brings its own receiver clock and limits.
        let params = super::receiver::codec_params(v, self.sut, CODEC_NOW_MS)
            .unwrap_or_else(|| self.sut.params(CODEC_NOW_MS));
        materialize::materialise(v, &params).map(CodecWork::Frames)
    }

    fn expected_code(c: &CodecWork) -> Option<String> {
        match c {
            CodecWork::Frames(steps) => materialize::first_reject_code(steps),
            CodecWork::Translate => None,
        }
    }

    fn drive(&mut self, v: &Vector, c: CodecWork, _cancel: &Cancel) -> Result<Outcome, Fatal> {
        match c {
            CodecWork::Translate => match &v.body {
                Body::Translate(b) => super::translate::run(self.driver.as_mut(), &b.steps),
                _ => Ok(Outcome::stop(
                    Verdict::HarnessError,
                    "admitted to translate a vector that is not a translate one",
                )),
            },
            CodecWork::Frames(steps) => {
                // A published fixture brings its own limits and profile validation.
                let config = match super::receiver::codec_config(v, self.sut) {
                    Some(c) => c,
                    None => {
                        // Payload validation is asked for only by vectors about a P1
                        // profile (A2A and the SWP-* profiles of C3 and C4), so testees
                        // without it still run every other vector.
                        let mut c = codec_config_of(&self.sut.manifest);
                        c.validate_profiles = v
                            .header
                            .applies_when
                            .profiles
                            .iter()
                            .copied()
                            .filter(|p| crate::p1::pb::is_p1(*p))
                            .collect();
                        c
                    }
                };
                let origin = super::receiver::of(v)
                    .and_then(|rx| rx.now_ms)
                    .unwrap_or(CODEC_NOW_MS);
                self.decode(v, &steps, config, origin)
            }
        }
    }
}

/// The label of step `s` of `n` in messages: empty for a one-step vector.
pub fn step_label(n: usize, s: &ConcreteStep) -> String {
    match (n, s.rep) {
        (1, _) => String::new(),
        (_, 0) => format!("step {}: ", s.step + 1),
        (_, r) => format!("step {} (repeat {}): ", s.step + 1, r + 1),
    }
}

impl CodecMethod<'_> {
    /// Sends the steps in one decode request; `origin` is the receiver clock transcripts
    /// count their times from.
    fn decode(
        &mut self,
        v: &Vector,
        steps: &[ConcreteStep],
        config: swp_testee_proto::CodecConfig,
        origin: u64,
    ) -> Result<Outcome, Fatal> {
        let mut transcript = Vec::new();
        let mut chunks = Vec::new();
        let mut end = false;
        for (i, s) in steps.iter().enumerate() {
            let t_ms = s.now_ms.saturating_sub(origin);
            match &s.action {
                Action::Send(b) => {
                    transcript.push(TranscriptEntry {
                        t_ms,
                        dir: Dir::Sent,
                        data: transcript_hex(b),
                    });
                    chunks.push(Chunk {
                        now_ms: s.now_ms,
                        bytes: Hex(b.clone()),
                    });
                }
                Action::End if i + 1 == steps.len() => {
                    transcript.push(TranscriptEntry {
                        t_ms,
                        dir: Dir::Note,
                        data: "end of stream".into(),
                    });
                    end = true;
                }
                Action::End => {
                    let why = format!(
                        "step {}: `end` must be the last step in the codec method",
                        s.step + 1
                    );
                    return Ok(
                        Outcome::stop(Verdict::HarnessError, why).with_transcript(transcript)
                    );
                }
                Action::CorruptRecord
                | Action::ReplayRecord
                | Action::IdentityProbe
                | Action::SlowRequest(_)
                | Action::SendAsReply(_) => {
                    let why = format!(
                        "step {}: forged TLS records, probes and intermediary replies need the session method",
                        s.step + 1
                    );
                    return Ok(
                        Outcome::stop(Verdict::HarnessError, why).with_transcript(transcript)
                    );
                }
            }
        }
        let req = DecodeRequest {
            config,
            chunks,
            end_of_stream: end,
        };
        let reply = match answered(self.driver.decode(&req))? {
            Ok(rep) => rep,
            Err(o) => return Ok(o.with_transcript(transcript)),
        };
        let sends = req.chunks.len();
        if reply.chunks.len() != sends {
            let why = format!(
                "the SUT answered for {} chunks, {} were sent",
                reply.chunks.len(),
                sends
            );
            return Ok(Outcome::stop(Verdict::HarnessError, why).with_transcript(transcript));
        }
        Ok(judge(v, steps, &reply, transcript, origin))
    }
}

/// The events of step `i`: its chunk's, or those at end of stream.
fn events_of<'r>(
    steps: &[ConcreteStep],
    reply: &'r DecodeReply,
    i: usize,
) -> &'r [swp_testee_proto::Event] {
    if matches!(steps[i].action, Action::End) {
        &reply.end
    } else {
        &reply.chunks[i]
    }
}

/// Judges a decode reply step by step: every step is judged (the SUT's answers to all of
/// them are in the reply), the first failing step decides the vector, and a vector that does
/// not pass lists each step's result so its requirements roll up per step.
fn judge(
    v: &Vector,
    steps: &[ConcreteStep],
    reply: &DecodeReply,
    mut transcript: Vec<TranscriptEntry>,
    origin: u64,
) -> Outcome {
    let mut o = Outcome::new(Verdict::Pass, None);
    let mut judged = Vec::with_capacity(steps.len());
    let mut decided = false;
    for (i, s) in steps.iter().enumerate() {
        let events = events_of(steps, reply, i);
        if !events.is_empty() {
            transcript.push(TranscriptEntry {
                t_ms: s.now_ms.saturating_sub(origin),
                dir: Dir::Received,
                data: transcript_events(events),
            });
        }
        let j = evaluate::judge_codec_step(&s.expect, events);
        let label = step_label(steps.len(), s);
        judged.push(Judged {
            step: s.step,
            verdict: Some(j.verdict),
            why: j.detail.as_ref().map(|d| format!("{label}{d}")),
            code_only: j.code_only.clone(),
        });
        if decided {
            continue;
        }
        o.expected = format!("{label}{}", j.expected);
        o.observed = format!("{label}{}", j.observed);
        if let Some(c) = j.observed_code {
            o.observed_error_code = Some(c.as_str().to_owned());
        }
        if let Some(a) = &j.observed_alias {
            o.observed_alias = Some(a.clone());
        }
        if j.verdict != Verdict::Pass {
            decided = true;
            o.verdict = j.verdict;
            o.code_only = j.code_only;
            o.detail = j.detail.map(|d| format!("{label}{d}"));
            if !s.expect.is_empty() {
                o.expected = format!("{label}{}", describe_expected(&s.expect));
            }
        }
    }
    if decided {
        if steps.len() > 1 {
            o.steps = step_results(v, &judged);
        }
        return o.with_transcript(transcript);
    }
    if steps.len() > 1 {
        o.expected = evaluate::fold_runs(steps.iter().map(|s| describe_expected(&s.expect)));
        o.observed = evaluate::fold_runs(
            (0..steps.len()).map(|i| evaluate::describe_observed(events_of(steps, reply, i))),
        );
    }
    o.with_transcript(transcript)
}
