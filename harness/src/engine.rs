//! The engine: for each selected vector, check applicability, materialise it for the SUT,
//! drive the SUT through a connector, and judge what came back. It never formats output.

use crate::catalog::vector::{Method, UnknownProfile, Vector};
use crate::catalog::{Catalog, LoadedVector};
use crate::driver::{Answer, CodecDriver};
use crate::evaluate::{self, describe_expected};
use crate::materialize::{self, Action, ConcreteStep, MaterialiseError};
use crate::model::{Dir, TranscriptEntry, VectorResult, Verdict};
use crate::sut::{codec_config_of, Sut};
use swp_ref::testee::proto::{Chunk, DecodeRequest, Event, Hex};

/// The receiver clock origin for the codec method: fixed so runs are reproducible.
pub const CODEC_NOW_MS: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/// Octets of hex shown per transcript entry before it is abbreviated.
const TRANSCRIPT_HEX_OCTETS: usize = 256;

/// Renders octets for a transcript, abbreviated past [`TRANSCRIPT_HEX_OCTETS`].
pub fn transcript_hex(b: &[u8]) -> String {
    if b.len() <= TRANSCRIPT_HEX_OCTETS {
        hex::encode(b)
    } else {
        format!(
            "{}… ({} octets)",
            hex::encode(&b[..TRANSCRIPT_HEX_OCTETS]),
            b.len()
        )
    }
}

/// Renders events for a transcript: the SUT's answer with octet strings abbreviated, so a
/// multi-megabyte payload costs a few hundred octets of report, not its full hex.
pub fn transcript_events(events: &[Event]) -> String {
    events
        .iter()
        .map(|e| match e {
            Event::Accept {
                envelope: v,
                unknown_flags,
            } => {
                let exts: Vec<String> = v
                    .extensions
                    .iter()
                    .map(|x| format!("{}={}", x.ext_type, transcript_hex(&x.value.0)))
                    .collect();
                format!(
                    "accept version={} profile_id={} msg_type={} flags={:#x} ts_unix_ms={} msg_id={} extensions=[{}] payload={}{}",
                    v.version,
                    v.profile_id,
                    v.msg_type,
                    v.flags,
                    v.ts_unix_ms,
                    transcript_hex(&v.msg_id.0),
                    exts.join(","),
                    transcript_hex(&v.payload.0),
                    unknown_flags.map(|f| format!(" unknown_flags={f:#x}")).unwrap_or_default()
                )
            }
            Event::Reject {
                code,
                alias,
                detail,
                terminated,
            } => format!(
                "reject code={} alias={} terminated={} detail={}",
                code.as_deref().unwrap_or("-"),
                alias.as_deref().unwrap_or("-"),
                terminated.map_or("-".to_owned(), |t| t.to_string()),
                detail.as_deref().unwrap_or("-")
            ),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Why a vector does not apply to this SUT, if it does not.
pub fn applicability(v: &Vector, sut: &Sut) -> Option<String> {
    let m = &sut.manifest;
    if !v.methods.iter().any(|x| m.methods.contains(x)) {
        let want: Vec<_> = v
            .methods
            .iter()
            .map(|m| format!("{m:?}").to_lowercase())
            .collect();
        return Some(format!(
            "the SUT supports none of the vector's methods ({})",
            want.join(", ")
        ));
    }
    let a = &v.applies_when;
    for p in &a.profiles {
        if !m.claims.profiles.contains(p) {
            return Some(format!("the SUT does not claim profile {p}"));
        }
    }
    if let Some(f) = a.timestamp_freshness {
        if m.policy.timestamp_freshness != f {
            return Some(format!(
                "needs timestamp freshness {}; the SUT declares it {}",
                if f { "enforced" } else { "disabled" },
                if m.policy.timestamp_freshness {
                    "enforced"
                } else {
                    "disabled"
                }
            ));
        }
    }
    if let Some(u) = a.unknown_profile {
        if m.policy.unknown_profile != u {
            return Some(format!(
                "needs unknown-profile handling {}; the SUT declares {}",
                name(u),
                name(m.policy.unknown_profile)
            ));
        }
    }
    if a.rate_limit == Some(true) && m.policy.rate_limit.is_none() {
        return Some("needs a declared frame-rate limit; the SUT declares none".into());
    }
    let params = sut.params(CODEC_NOW_MS);
    for c in &a.holds {
        match crate::expr::holds(c, &params) {
            Ok(true) => {}
            Ok(false) => return Some(format!("the SUT's parameters do not satisfy `{c}`")),
            Err(e) => return Some(format!("`{c}`: {e}")),
        }
    }
    None
}

fn name(u: UnknownProfile) -> &'static str {
    match u {
        UnknownProfile::ErrorReply => "error-reply",
        UnknownProfile::Close => "close",
    }
}

/// The result scaffolding of a vector, shared by every engine: ids, canonical requirements,
/// whether a failure is absolute, the path; verdict not-applicable until it runs.
pub fn result_base(catalog: &Catalog, lv: &LoadedVector) -> VectorResult {
    let reg = &catalog.requirements;
    let resolve = |r: &str| reg.resolve(r).unwrap_or_default();
    // Code requirements are exercised too, but they do not decide whether the vector is
    // absolute: a code mapping is typically a SHOULD beside a MUST reject.
    let absolute = lv
        .vector
        .requirements
        .iter()
        .flat_map(|r| resolve(r))
        .any(|id| reg.level(&id).is_some_and(|l| l.is_absolute()));
    let mut reqs: Vec<String> = lv
        .vector
        .all_requirements()
        .into_iter()
        .flat_map(resolve)
        .collect();
    reqs.sort();
    reqs.dedup();
    let root = catalog.dir.parent().unwrap_or(&catalog.dir);
    let path = crate::model::display_path(root, &lv.path);
    let mut r = VectorResult::new(
        lv.vector.id.clone(),
        lv.vector.namespace.clone(),
        path,
        reqs,
        absolute,
    );
    r.verdict = Verdict::NotApplicable;
    r
}

/// Runs the catalog's `plan` against one codec-method SUT.
pub struct Engine<'a> {
    /// The catalog.
    pub catalog: &'a Catalog,
    /// The SUT.
    pub sut: &'a Sut,
    /// The connector.
    pub driver: &'a mut dyn CodecDriver,
}

impl Engine<'_> {
    /// The result scaffolding of a vector: ids, requirements, level, path.
    pub fn base(&self, lv: &LoadedVector) -> VectorResult {
        result_base(self.catalog, lv)
    }

    /// Runs one vector.
    pub fn run_one(&mut self, lv: &LoadedVector) -> VectorResult {
        let mut r = self.base(lv);
        if let Some(why) = applicability(&lv.vector, self.sut) {
            r.detail = Some(why);
            return r;
        }
        if lv.vector.methods.contains(&Method::Translate) {
            crate::translate::run(&mut *self.driver, &lv.vector, &mut r);
            return r;
        }
        if !lv.vector.methods.contains(&Method::Codec) {
            r.detail =
                Some("only the session method applies; this run uses the codec method".into());
            return r;
        }
        r.method = Some("codec".into());
        let params = self.sut.params(CODEC_NOW_MS);
        let steps = match materialize::materialise(&lv.vector, &params) {
            Ok(s) => s,
            Err(MaterialiseError::NotApplicable(why)) => {
                r.method = None;
                r.detail = Some(why);
                return r;
            }
            Err(MaterialiseError::Invalid(why)) => {
                r.verdict = Verdict::HarnessError;
                r.detail = Some(format!("vector cannot be materialised: {why}"));
                return r;
            }
        };
        r.expected_error_code = steps.iter().flat_map(|s| &s.expect).find_map(|e| match e {
            materialize::Expectation::Reject { allowed, .. } => {
                Some(allowed[0].as_str().to_owned())
            }
            _ => None,
        });
        // Payload validation is asked for only by vectors about a P1 profile (A2A), so
        // testees without it still run every other vector.
        let validate: Vec<u64> = lv
            .vector
            .applies_when
            .profiles
            .iter()
            .copied()
            .filter(|p| *p == swp_profiles::a2a::PROFILE_ID)
            .collect();
        self.run_codec(&mut r, &steps, validate);
        r.pass = r.verdict == Verdict::Pass;
        r
    }

    fn run_codec(&mut self, r: &mut VectorResult, steps: &[ConcreteStep], validate: Vec<u64>) {
        let mut chunks = Vec::new();
        let mut end = false;
        for (i, s) in steps.iter().enumerate() {
            match &s.action {
                Action::Send(b) => {
                    r.transcript.push(TranscriptEntry {
                        t_ms: s.now_ms - CODEC_NOW_MS,
                        dir: Dir::Sent,
                        data: transcript_hex(b),
                    });
                    chunks.push(Chunk {
                        now_ms: s.now_ms,
                        bytes: Hex(b.clone()),
                    });
                }
                Action::End if i + 1 == steps.len() => {
                    r.transcript.push(TranscriptEntry {
                        t_ms: s.now_ms - CODEC_NOW_MS,
                        dir: Dir::Note,
                        data: "end of stream".into(),
                    });
                    end = true;
                }
                Action::CorruptRecord
                | Action::ReplayRecord
                | Action::IdentityProbe
                | Action::SlowRequest(_) => {
                    r.verdict = Verdict::HarnessError;
                    r.detail = Some(format!(
                        "step {}: forged TLS records and identity probes need the session method",
                        s.step + 1
                    ));
                    return;
                }
                Action::End => {
                    r.verdict = Verdict::HarnessError;
                    r.detail = Some(format!(
                        "step {}: `end` must be the last step in the codec method",
                        s.step + 1
                    ));
                    return;
                }
            }
        }
        let mut config = codec_config_of(&self.sut.manifest);
        config.validate_profiles = validate;
        let req = DecodeRequest {
            config,
            chunks,
            end_of_stream: end,
        };
        let reply = match self.driver.decode(&req) {
            Ok(Answer::Ok(rep)) => rep,
            Ok(Answer::Unsupported(why)) => {
                r.verdict = Verdict::Unsupported;
                r.detail = Some(why);
                return;
            }
            Err(e) => {
                r.verdict = e.verdict();
                r.detail = Some(e.to_string());
                return;
            }
        };
        let sends = steps
            .iter()
            .filter(|s| matches!(s.action, Action::Send(_)))
            .count();
        if reply.chunks.len() != sends {
            r.verdict = Verdict::HarnessError;
            r.detail = Some(format!(
                "the SUT answered for {} chunks, {} were sent",
                reply.chunks.len(),
                sends
            ));
            return;
        }
        let mut last = None;
        for (i, s) in steps.iter().enumerate() {
            let events = if matches!(s.action, Action::End) {
                &reply.end
            } else {
                &reply.chunks[i]
            };
            if !events.is_empty() {
                r.transcript.push(TranscriptEntry {
                    t_ms: s.now_ms - CODEC_NOW_MS,
                    dir: Dir::Received,
                    data: transcript_events(events),
                });
            }
            let j = evaluate::judge_codec_step(&s.expect, events);
            let failed = j.verdict != Verdict::Pass;
            let label = match (steps.len(), s.rep) {
                (1, _) => String::new(),
                (_, 0) => format!("step {}: ", s.step + 1),
                (_, n) => format!("step {} (repeat {}): ", s.step + 1, n + 1),
            };
            r.expected = format!("{label}{}", j.expected);
            r.observed = format!("{label}{}", j.observed);
            if let Some(c) = j.observed_code {
                r.observed_error_code = Some(c.as_str().to_owned());
            }
            if let Some(a) = &j.observed_alias {
                r.observed_code = Some(a.clone());
            }
            if failed {
                if let Some(code_reqs) = &j.code_only {
                    // The reject itself happened; only the code differs. Its requirements
                    // (typically a SHOULD) decide whether the run fails.
                    if !code_reqs.is_empty() {
                        let reg = &self.catalog.requirements;
                        r.absolute = code_reqs
                            .iter()
                            .flat_map(|c| reg.resolve(c).unwrap_or_default())
                            .any(|id| reg.level(&id).is_some_and(|l| l.is_absolute()));
                    }
                }
                r.verdict = j.verdict;
                r.detail = j.detail.map(|d| format!("{label}{d}"));
                if !s.expect.is_empty() {
                    r.expected = format!("{label}{}", describe_expected(&s.expect));
                }
                return;
            }
            last = Some(j);
        }
        if last.is_some() || steps.is_empty() {
            r.verdict = Verdict::Pass;
        }
        if steps.len() > 1 {
            r.expected =
                crate::evaluate::fold_runs(steps.iter().map(|s| describe_expected(&s.expect)));
            r.observed = crate::evaluate::fold_runs(steps.iter().enumerate().map(|(i, s)| {
                let ev = if matches!(s.action, Action::End) {
                    &reply.end
                } else {
                    &reply.chunks[i]
                };
                evaluate::describe_observed(ev)
            }));
        }
    }

    /// Runs every vector of `plan`, calling `progress` after each.
    pub fn run(
        &mut self,
        plan: &[&LoadedVector],
        mut progress: impl FnMut(&VectorResult),
    ) -> Vec<VectorResult> {
        run_plan(plan, &mut progress, |lv| self.run_one(lv))
    }
}

/// Runs `one` over the plan in order, reporting each result; stops early, keeping the
/// results so far, when the user interrupts the run. Every engine runs its plan this way.
pub fn run_plan(
    plan: &[&LoadedVector],
    progress: &mut dyn FnMut(&VectorResult),
    mut one: impl FnMut(&LoadedVector) -> VectorResult,
) -> Vec<VectorResult> {
    let mut out = Vec::with_capacity(plan.len());
    for lv in plan {
        if crate::session::process::interrupted() {
            break;
        }
        let r = one(lv);
        progress(&r);
        out.push(r);
    }
    out
}
