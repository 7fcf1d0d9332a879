//! Evaluation: observed events against concrete expectations, step by step. Pure: no I/O,
//! no formatting beyond the one-line `expected`/`observed` strings the results carry.

use crate::frames::ErrorCode;
use crate::plan::materialize::{Expectation, Fields};
use crate::report::result::Verdict;
use swp_testee_proto::{EnvelopeView, Event};

/// The judgement of one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepJudgement {
    /// Verdict for the step.
    pub verdict: Verdict,
    /// What was expected.
    pub expected: String,
    /// What was observed.
    pub observed: String,
    /// Why it failed, when it did.
    pub detail: Option<String>,
    /// Canonical code observed, if any.
    pub observed_code: Option<ErrorCode>,
    /// Alias observed, if the SUT gave one.
    pub observed_alias: Option<String>,
    /// The step failed only because the reject carried another canonical code; these
    /// requirements (possibly empty: the vector's) govern that code.
    pub code_only: Option<Vec<String>>,
}

/// Joins per-step descriptions with ` | `, folding runs of identical ones (`accept ×64`).
pub fn fold_runs(items: impl IntoIterator<Item = String>) -> String {
    let mut out: Vec<(String, usize)> = Vec::new();
    for s in items {
        match out.last_mut() {
            Some((p, n)) if *p == s => *n += 1,
            _ => out.push((s, 1)),
        }
    }
    out.into_iter()
        .map(|(s, n)| if n > 1 { format!("{s} ×{n}") } else { s })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Describes an expectation list in one line.
pub fn describe_expected(exp: &[Expectation]) -> String {
    if exp.is_empty() {
        return "nothing".into();
    }
    exp.iter()
        .map(|e| match e {
            Expectation::Accept { .. } => "accept".to_owned(),
            Expectation::Reject {
                allowed,
                terminates,
                ..
            } => {
                let mut s = format!("reject {}", allowed[0]);
                if allowed.len() > 1 {
                    let rest: Vec<_> = allowed[1..].iter().map(|c| c.as_str()).collect();
                    s.push_str(&format!(" (or {})", rest.join(", ")));
                }
                if *terminates == Some(true) {
                    s.push_str(", stream terminated");
                }
                s
            }
            Expectation::Denied(r) => format!(
                "denied ({} or a refusing answer)",
                describe_expected(std::slice::from_ref(r))
            ),
            Expectation::Answer { code, also } => {
                let mut s = match code {
                    Some(c) => format!("answered with its profile's error message, code {c:?}"),
                    None => "answered with its profile's error message".into(),
                };
                if !also.is_empty() {
                    let codes: Vec<_> = also.iter().map(|c| c.as_str()).collect();
                    s.push_str(&format!(" (or an error frame {})", codes.join(", ")));
                }
                s
            }
            Expectation::Nothing => "nothing".into(),
            Expectation::Close => "close".into(),
            Expectation::Silence {
                ms,
                refusal_allowed: false,
            } => format!("silence {ms} ms"),
            Expectation::Silence {
                ms,
                refusal_allowed: true,
            } => format!("silence {ms} ms, or a refusal"),
            Expectation::Identity => "identity reported".into(),
            Expectation::Forwarded => "forwarded unchanged".into(),
            Expectation::ForwardedPayload => "forwarded with its payload unchanged".into(),
            Expectation::A2aTasks(tasks) => {
                let each: Vec<String> = tasks
                    .iter()
                    .map(|t| match t.events {
                        Some(n) => format!(
                            "task {}: {n} event(s) then Result ok={}",
                            t.task_id, t.ok
                        ),
                        None => format!("task {}: Result ok={}", t.task_id, t.ok),
                    })
                    .collect();
                each.join("; ")
            }
            Expectation::ErrorJson(j) => format!("error frame payload containing {j}"),
            Expectation::Flow(items) => {
                let each: Vec<String> = items
                    .iter()
                    .map(|f| {
                        let name = crate::p1::parts(&f.spec).map_or("?", |(n, _, _)| n);
                        if f.count == 1 {
                            name.to_owned()
                        } else {
                            format!("{} x {name}", f.count)
                        }
                    })
                    .collect();
                format!("{}, then nothing more", each.join(", "))
            }
            Expectation::Stream(st) => format!(
                "at least {} partial output(s){}, then the terminal response on the request's msg_id",
                st.min_partials,
                if st.partials_are_notifications { " as notifications" } else { "" }
            ),
            Expectation::Reply(r) => format!(
                "reply profile_id={} msg_type={}",
                r.profile_id.map_or("*".into(), |v| v.to_string()),
                r.msg_type.map_or("*".into(), |v| v.to_string())
            ),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Describes observed events in one line.
pub fn describe_observed(events: &[Event]) -> String {
    if events.is_empty() {
        return "nothing".into();
    }
    events
        .iter()
        .map(|e| match e {
            Event::Accept { envelope, .. } => format!(
                "accept profile_id={} msg_type={}",
                envelope.profile_id, envelope.msg_type
            ),
            Event::Reject {
                code,
                alias,
                terminated,
                ..
            } => {
                let c = code.as_deref().or(alias.as_deref()).unwrap_or("(no code)");
                if *terminated == Some(true) {
                    format!("reject {c}, stream terminated")
                } else {
                    format!("reject {c}")
                }
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn check_fields(f: &Fields, e: &EnvelopeView) -> Result<(), String> {
    fn num(name: &str, want: Option<u64>, got: u64) -> Result<(), String> {
        match want {
            Some(w) if w != got => Err(format!("{name} is {got}, expected {w}")),
            _ => Ok(()),
        }
    }
    num("version", f.version, e.version)?;
    num("profile_id", f.profile_id, e.profile_id)?;
    num("msg_type", f.msg_type, e.msg_type)?;
    num("flags", f.flags, e.flags)?;
    num("ts_unix_ms", f.ts_unix_ms, e.ts_unix_ms)?;
    if let Some(m) = &f.msg_id {
        if *m != e.msg_id.0 {
            return Err(format!(
                "msg_id is {}, expected {}",
                hex::encode(&e.msg_id.0),
                hex::encode(m)
            ));
        }
    }
    if let Some(p) = &f.payload {
        if *p != e.payload.0 {
            return Err(format!(
                "payload differs: {} octets observed, {} expected",
                e.payload.0.len(),
                p.len()
            ));
        }
    }
    if let Some(xs) = &f.extensions {
        let got: Vec<(u64, &[u8])> = e
            .extensions
            .iter()
            .map(|x| (x.ext_type, x.value.0.as_ref()))
            .collect();
        let want: Vec<(u64, &[u8])> = xs.iter().map(|(t, v)| (*t, v.as_ref())).collect();
        if got != want {
            let show = |xs: &[(u64, &[u8])]| {
                crate::support::show::joined(
                    xs.iter()
                        .map(|(t, v)| format!("type {t} = hex:{}", hex::encode(v))),
                )
            };
            return Err(format!(
                "extensions are {}, expected {}",
                show(&got),
                show(&want)
            ));
        }
    }
    Ok(())
}

/// Matches one observed event against one expectation.
fn judge_one(
    exp: &Expectation,
    ev: &Event,
) -> (Verdict, Option<String>, Option<ErrorCode>, Option<String>) {
    match (exp, ev) {
        (
            Expectation::Accept {
                fields,
                unknown_flags,
                ..
            },
            Event::Accept {
                envelope,
                unknown_flags: got,
            },
        ) => {
            if let Err(why) = check_fields(fields, envelope) {
                return (Verdict::Fail, Some(why), None, None);
            }
            match (unknown_flags, got) {
                (Some(w), Some(g)) if w != g => (
                    Verdict::Fail,
                    Some(format!("surfaced unknown flags {g:#x}, expected {w:#x}")),
                    None,
                    None,
                ),
                (Some(w), None) => (
                    Verdict::Fail,
                    Some(format!("unknown flags {w:#x} were not surfaced")),
                    None,
                    None,
                ),
                _ => (Verdict::Pass, None, None, None),
            }
        }
        (
            Expectation::Reject {
                allowed,
                terminates,
                ..
            },
            Event::Reject {
                code,
                alias,
                terminated,
                ..
            },
        ) => {
            let canonical = match code.as_deref().map(str::parse::<ErrorCode>) {
                Some(Ok(c)) => Some(c),
                Some(Err(_)) => {
                    return (
                        Verdict::Fail,
                        Some(format!(
                            "the SUT reported {:?}, which is not a canonical ERR_* code",
                            code.as_deref().unwrap_or_default()
                        )),
                        None,
                        alias.clone(),
                    )
                }
                None => None,
            };
            let codes: Vec<ErrorCode> = match (canonical, alias) {
                (Some(c), _) => vec![c],
                (None, Some(a)) => match ErrorCode::from_alias(a) {
                    Ok(cs) => cs.to_vec(),
                    Err(e) => {
                        return (
                            Verdict::Fail,
                            Some(format!("the SUT reported alias {a:?}: {e}")),
                            None,
                            Some(a.clone()),
                        )
                    }
                },
                (None, None) => {
                    return (
                        Verdict::RejectCodeNotObservable,
                        Some(format!(
                            "reject observed without a code; expected {}",
                            allowed[0]
                        )),
                        None,
                        None,
                    )
                }
            };
            let matched = codes.iter().find(|c| allowed.contains(c)).copied();
            // A profile's reject of a frame the core must refuse shows the core accepted it:
            // that is not the reject with another code, it is no core reject at all.
            let profile_instead_of_core = matched.is_none()
                && codes.iter().all(|c| c.is_profile_level())
                && allowed.iter().all(|c| !c.is_profile_level());
            if profile_instead_of_core {
                let shown: Vec<_> = codes.iter().map(|c| c.as_str()).collect();
                return (
                    Verdict::Fail,
                    Some(format!(
                        "the core accepted the frame: only its profile rejected it ({}); expected {}",
                        shown.join(" or "),
                        describe_expected(std::slice::from_ref(exp))
                    )),
                    None,
                    alias.clone(),
                );
            }
            let Some(c) = matched else {
                let shown: Vec<_> = codes.iter().map(|c| c.as_str()).collect();
                return (
                    Verdict::Fail,
                    Some(format!(
                        "rejected with {}, expected {}",
                        shown.join(" or "),
                        describe_expected(std::slice::from_ref(exp))
                    )),
                    codes.first().copied(),
                    alias.clone(),
                );
            };
            if let (Some(want), Some(got)) = (terminates, terminated) {
                if want != got {
                    return (
                        Verdict::Fail,
                        Some(format!("stream terminated = {got}, expected {want}")),
                        Some(c),
                        alias.clone(),
                    );
                }
            }
            (Verdict::Pass, None, Some(c), alias.clone())
        }
        // The spec leaves accepting open: a reject is conformant too.
        (
            Expectation::Accept {
                reject_allowed: true,
                ..
            },
            Event::Reject { code, alias, .. },
        ) => (
            Verdict::Pass,
            None,
            code.as_deref().and_then(|c| c.parse().ok()),
            alias.clone(),
        ),
        // The core accepted and dispatched the frame; the profile refused it, as it must.
        (
            Expectation::Accept {
                profile_may_refuse: true,
                ..
            },
            Event::Reject {
                code: Some(code), ..
            },
        ) if code
            .parse::<ErrorCode>()
            .is_ok_and(|c| c.is_profile_level()) =>
        {
            (Verdict::Pass, None, code.parse().ok(), None)
        }
        (
            Expectation::Accept { .. },
            Event::Reject {
                code,
                alias,
                detail,
                ..
            },
        ) => (
            Verdict::Fail,
            Some(format!(
                "rejected ({}{}), expected accept",
                code.as_deref().or(alias.as_deref()).unwrap_or("no code"),
                detail
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default()
            )),
            code.as_deref().and_then(|c| c.parse().ok()),
            alias.clone(),
        ),
        (Expectation::Reject { .. }, Event::Accept { .. }) => (
            Verdict::Fail,
            Some("accepted, expected a reject".into()),
            None,
            None,
        ),
        // A valid request the endpoint answers (session): what a decoder shows of it is
        // that it takes the frame.
        (Expectation::Answer { .. }, Event::Accept { .. }) => (Verdict::Pass, None, None, None),
        (Expectation::Answer { .. }, Event::Reject { code, alias, .. }) => (
            Verdict::Fail,
            Some(format!(
                "rejected ({}), expected a valid request taken and answered",
                code.as_deref().or(alias.as_deref()).unwrap_or("no code")
            )),
            code.as_deref().and_then(|c| c.parse().ok()),
            alias.clone(),
        ),
        (other, _) => (
            Verdict::HarnessError,
            Some(format!(
                "expectation {:?} cannot be judged by the codec method",
                describe_expected(std::slice::from_ref(other))
            )),
            None,
            None,
        ),
    }
}

/// Judges one step's events against its expectations (same count, same order).
pub fn judge_codec_step(expected: &[Expectation], events: &[Event]) -> StepJudgement {
    let mut j = StepJudgement {
        verdict: Verdict::Pass,
        expected: describe_expected(expected),
        observed: describe_observed(events),
        detail: None,
        observed_code: None,
        observed_alias: None,
        code_only: None,
    };
    for (i, exp) in expected.iter().enumerate() {
        let Some(ev) = events.get(i) else {
            j.verdict = Verdict::Fail;
            j.detail = Some(format!(
                "expected {} event(s), observed {}",
                expected.len(),
                events.len()
            ));
            return j;
        };
        let (v, why, code, alias) = judge_one(exp, ev);
        j.observed_code = j.observed_code.or(code);
        j.observed_alias = j.observed_alias.take().or(alias);
        if v != Verdict::Pass {
            if let (
                Expectation::Reject {
                    allowed,
                    code_requirements,
                    ..
                },
                Some(c),
            ) = (exp, code)
            {
                if !allowed.contains(&c) {
                    j.code_only = Some(code_requirements.clone());
                }
            }
            j.verdict = v;
            j.detail = why.map(|w| {
                if expected.len() > 1 {
                    format!("event {}: {w}", i + 1)
                } else {
                    w
                }
            });
            return j;
        }
    }
    if events.len() > expected.len() {
        j.verdict = Verdict::Fail;
        j.detail = Some(format!(
            "unexpected extra event(s): expected {}, observed {}",
            expected.len(),
            events.len()
        ));
        if let Some(Event::Reject { code, .. }) = events.get(expected.len()) {
            j.observed_code = j
                .observed_code
                .or(code.as_deref().and_then(|c| c.parse().ok()));
        }
    }
    j
}
