//! Confirming accepts. On the wire an accepted frame looks like nothing, so frames the
//! vector expects to be accepted stay pending until a quiet window passes with no error frame
//! and no close or, at the end of the vector (and on close-only endpoints), until the
//! manifest's probe is answered.

use super::conv::Conv;
use super::obs::{show_id, Obs};
use super::work::StepFailure;
use crate::catalog::vector::FrameSpec;
use crate::frames::Envelope;
use crate::plan::expr::Params;
use crate::plan::materialize::{self, MaterialiseError};
use crate::report::result::Verdict;
use crate::sut::{ProbeSpec, RejectMode};
use bytes::Bytes;

/// Frames one step sent and expects to be accepted, not yet confirmed.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The concrete step that sent them.
    pub step: usize,
    /// The step's label.
    pub label: String,
    /// The msg_ids it sent.
    pub ids: Vec<Bytes>,
    /// The addressed profile must refuse them while the core accepts them.
    pub profile_may_refuse: bool,
    /// They are requests whose answers confirm them (no probe, no quiet window).
    pub answered: bool,
}

/// Numbers the requests the harness builds from the manifest (probes, identity probes), so
/// each has a fresh msg_id within the run.
#[derive(Debug, Default)]
pub struct Requests(u64);

impl Requests {
    /// One of the manifest's request frames with a fresh msg_id, `<prefix><7 digits>` (16
    /// octets for the prefixes used).
    pub fn build(
        &mut self,
        f: &FrameSpec,
        params: &Params,
        prefix: &str,
    ) -> Result<(Bytes, Bytes), MaterialiseError> {
        self.0 += 1;
        let id = Bytes::from(format!("{prefix}{:07}", self.0 % 10_000_000).into_bytes());
        let frame = materialize::build_frame(f, params, Some(id.clone()))?;
        Ok((id, frame))
    }
}

/// Whether `e` answers the probe sent with msg_id `id`.
pub fn answers_probe(e: &Envelope, id: &Bytes, probe: &ProbeSpec) -> bool {
    e.msg_id == *id && e.profile_id == probe.reply_profile_id && e.msg_type == probe.reply_msg_type
}

/// Whether a code is decided above the core (by the profile the frame was dispatched to).
fn profile_level(code: &str) -> bool {
    code.parse::<crate::frames::ErrorCode>()
        .is_ok_and(|c| c.is_profile_level())
}

/// A frame that looks like the probe's answer but came on another msg_id, in words for the
/// failure when the probe goes unanswered: `None` for the answer itself, a frame of another
/// type, and the answer to a frame a step sent (which is no misdirected probe answer).
fn misdirected(conv: &Conv<'_>, e: &Envelope, id: &Bytes, probe: &ProbeSpec) -> Option<String> {
    let like = e.profile_id == probe.reply_profile_id && e.msg_type == probe.reply_msg_type;
    let a_steps = conv
        .ledger
        .frames
        .iter()
        .any(|f| f.step.is_some() && f.msg_id.as_ref() == Some(&e.msg_id));
    (like && e.msg_id != *id && !a_steps).then(|| {
        format!(
            "a reply came on msg_id {}, not the probe's {}",
            show_id(&e.msg_id),
            show_id(id)
        )
    })
}

/// Sends the probe and waits for its answer, skipping other frames: whether it was answered
/// within a step (used to tell "accepted" from "hung" when a reject was expected). Unanswered,
/// the error says so when a reply came on another msg_id.
pub fn probe_answered(
    conv: &mut Conv<'_>,
    params: &Params,
    requests: &mut Requests,
) -> Result<(), Option<String>> {
    let Some(probe) = conv.spec.probe.clone() else {
        return Err(None);
    };
    let Ok((id, f)) = requests.build(&probe.frame, params, "swp-probe") else {
        return Err(None);
    };
    if conv.send(&f).is_err() {
        return Err(None);
    }
    let t = conv.t();
    conv.ledger
        .sent(None, Some(id.clone()), super::ledger::Fate::Probe, t);
    let d = conv.step_deadline();
    let mut elsewhere = None;
    let answered = loop {
        match conv.next(d) {
            Some(Obs::Reply(e)) if answers_probe(&e, &id, &probe) => break Ok(()),
            Some(Obs::Reply(e)) => {
                elsewhere = misdirected(conv, &e, &id, &probe).or(elsewhere);
            }
            _ => break Err(elsewhere),
        }
    };
    conv.ledger.settle_probes();
    answered
}

/// At the end of a vector whose accepts were confirmed by quiet windows alone, a probe
/// (where the manifest has one, else one more quiet window) gives a slow refusal of them
/// the time to arrive: what arrives meanwhile is credited by the ledger, and the probe's
/// own answer, or its absence, is no verdict.
pub fn drain(conv: &mut Conv<'_>, params: &Params, requests: &mut Requests) {
    if !conv.ledger.unproven || conv.is_closed() {
        return;
    }
    conv.note("a last probe, so a refusal of an accept confirmed by a quiet window can arrive");
    if conv.spec.probe.is_some() {
        if probe_answered(conv, params, requests).is_ok() {
            conv.ledger.confirm_accepts(super::ledger::Proof::Probe);
        }
    } else {
        let deadline = conv.after(conv.spec.timing.silence_ms);
        while conv.next(deadline).is_some() {}
    }
}

/// Confirms pending accepts. Intermediate confirmations watch a quiet window (a probe would
/// count against the endpoint's rate limit and change what the next step tests); the final
/// one also sends the probe, proving the connection is alive after everything the vector
/// sent. A close-only endpoint always needs the probe: silence is all it shows otherwise.
pub fn confirm(
    conv: &mut Conv<'_>,
    pending: &mut Vec<Pending>,
    params: &Params,
    requests: &mut Requests,
    final_check: bool,
) -> Result<(), Box<StepFailure>> {
    if pending.is_empty() {
        return Ok(());
    }
    let exp = "accept";
    let label = pending.last().map(|p| p.label.clone()).unwrap_or_default();
    let last = pending.last().map(|p| p.step);
    let step_ms = conv.spec.timing.step_ms;
    if !final_check && pending.iter().all(|p| p.answered) {
        return by_answers(conv, pending, &label);
    }
    let probe = if final_check || conv.spec.reject_signal.mode == RejectMode::Close {
        conv.spec.probe.clone()
    } else {
        None
    };
    match probe {
        Some(probe) => {
            let (id, frame) = requests
                .build(&probe.frame, params, "swp-probe")
                .map_err(|e| {
                    StepFailure::new(
                        Verdict::HarnessError,
                        format!("probe cannot be built: {e}"),
                        exp,
                        "",
                    )
                })?;
            conv.note("probe: is the connection alive and were the frames above accepted?");
            if let Err(e) = conv.send(&frame) {
                let mut f = StepFailure::new(
                    Verdict::Fail,
                    format!("{label}the connection is closed (sending the probe failed: {e}); expected the frames to be accepted"),
                    exp,
                    "close",
                );
                f.at = last;
                pending.clear();
                return Err(f);
            }
            let t = conv.t();
            conv.ledger
                .sent(None, Some(id.clone()), super::ledger::Fate::Probe, t);
            let deadline = conv.step_deadline();
            let mut elsewhere = None;
            let r = loop {
                let o = conv.next(deadline);
                if let Some(Obs::Reply(e)) = &o {
                    if answers_probe(e, &id, &probe) {
                        break Ok(());
                    }
                    elsewhere = misdirected(conv, e, &id, &probe).or(elsewhere);
                }
                if o.is_none() {
                    let (why, observed) = match elsewhere.take() {
                        Some(m) => (
                            format!(
                                "{label}{m}, and nothing answered the probe within {step_ms} ms"
                            ),
                            "a reply on another msg_id",
                        ),
                        None => (
                            format!("{label}the probe was not answered within {step_ms} ms"),
                            "silence",
                        ),
                    };
                    let mut f = StepFailure::new(Verdict::Timeout, why, exp, observed);
                    f.at = last;
                    break Err(f);
                }
                if let Err(f) = against_accepts(conv, o, pending, &label) {
                    break Err(f);
                }
            };
            conv.ledger.settle_probes();
            if r.is_ok() {
                conv.ledger.confirm_accepts(super::ledger::Proof::Probe);
            }
            pending.clear();
            r
        }
        None => {
            let deadline = conv.after(conv.spec.timing.silence_ms);
            while let Some(o) = conv.next(deadline) {
                if let Err(f) = against_accepts(conv, Some(o), pending, &label) {
                    pending.clear();
                    return Err(f);
                }
            }
            conv.ledger.confirm_accepts(super::ledger::Proof::Quiet);
            pending.clear();
            Ok(())
        }
    }
}

/// Confirms requests by their answers: each pending msg_id must be answered (a frame
/// reusing it) before a step passes without one. Sends nothing, so a rate limit counts only
/// the vector's own frames.
fn by_answers(
    conv: &mut Conv<'_>,
    pending: &mut Vec<Pending>,
    label: &str,
) -> Result<(), Box<StepFailure>> {
    let step_ms = conv.spec.timing.step_ms;
    let mut open: std::collections::BTreeSet<Bytes> =
        pending.iter().flat_map(|p| p.ids.iter().cloned()).collect();
    conv.note(format!(
        "confirming {} accept(s) by their answers",
        open.len()
    ));
    let last = pending.last().map(|p| p.step);
    while !open.is_empty() {
        let deadline = conv.step_deadline();
        let r = match conv.next(deadline) {
            Some(Obs::Reply(e)) => {
                open.remove(&e.msg_id);
                Ok(())
            }
            None => {
                let mut f = StepFailure::new(
                    Verdict::Timeout,
                    format!(
                        "{label}{} request(s) unanswered after {step_ms} ms; expected each accepted and answered",
                        open.len()
                    ),
                    "accept",
                    "silence",
                );
                f.at = last;
                Err(f)
            }
            o => against_accepts(conv, o, pending, label),
        };
        if let Err(f) = r {
            pending.clear();
            return Err(f);
        }
    }
    conv.ledger.confirm_accepts(super::ledger::Proof::Answers);
    pending.clear();
    Ok(())
}

/// Judges one observation made while frames await confirmation as accepted: replies are
/// fine, profile-level rejects are fine for core vectors, anything else fails the accept.
fn against_accepts(
    conv: &mut Conv<'_>,
    o: Option<Obs>,
    pending: &[Pending],
    label: &str,
) -> Result<(), Box<StepFailure>> {
    let last = pending.last().map(|p| p.step);
    accept_broken(conv, o, pending, label).map_err(|mut f| {
        f.at = f.at.or(last);
        f
    })
}

fn accept_broken(
    conv: &mut Conv<'_>,
    o: Option<Obs>,
    pending: &[Pending],
    label: &str,
) -> Result<(), Box<StepFailure>> {
    let exp = "accept";
    // Where the manifest says the endpoint refuses with a profile's own error message, such a
    // message is a reject here too.
    let o = match o {
        Some(Obs::Reply(env)) if conv.spec.reject_signal.profile_errors => {
            super::refusal::profile_error(&env, conv.form).or(Some(Obs::Reply(env)))
        }
        o => o,
    };
    match o {
        None | Some(Obs::Reply(_)) => Ok(()),
        // A profile's own error message comes from the profile: the core took the frame and
        // dispatched it, which is all a frame its profile may refuse has to show.
        Some(Obs::Refused(what))
            if conv.core_layer || pending.iter().any(|p| p.profile_may_refuse) =>
        {
            conv.note(format!(
                "refused by its profile ({what}): the core accepted and dispatched the frame"
            ));
            Ok(())
        }
        Some(Obs::Refused(what)) => Err(StepFailure::new(
            Verdict::Fail,
            format!("{label}refused with {what}, expected accept"),
            exp,
            what,
        )),
        Some(Obs::Error { code, .. })
            if profile_level(&code)
                && (conv.core_layer || pending.iter().any(|p| p.profile_may_refuse)) =>
        {
            conv.note(format!(
                "{code} is a profile-level reject: the core accepted and dispatched the frame"
            ));
            Ok(())
        }
        Some(Obs::Error { code, msg_id, .. }) => {
            let hit = pending.iter().find(|p| p.ids.contains(&msg_id));
            let at = hit.map_or(label, |p| p.label.as_str());
            let mut f = StepFailure::new(
                Verdict::Fail,
                format!("{at}rejected with {code}, expected accept"),
                exp,
                format!("reject {code}"),
            );
            f.code = Some(code);
            f.at = hit.map(|p| p.step);
            Err(f)
        }
        Some(Obs::Closed(why))
            if pending.iter().any(|p| p.profile_may_refuse)
                && conv.spec.reject_signal.mode != RejectMode::ErrorFrame =>
        {
            Err(StepFailure::new(
                Verdict::Inconclusive,
                format!("{label}the connection {why} after a frame its profile must refuse and its core must accept: a close cannot show which layer refused it"),
                exp,
                "close",
            ))
        }
        Some(Obs::Closed(why)) => Err(StepFailure::new(
            Verdict::Fail,
            format!("{label}connection {why}, expected the frames to be accepted"),
            exp,
            "close",
        )),
        Some(Obs::Garbage(g)) => Err(StepFailure::new(Verdict::Fail, g, exp, "invalid output")),
    }
}
