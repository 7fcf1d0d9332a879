//! One published fixture, read, made into a catalog vector: one step with its octets (and
//! the end of the stream when they end inside a frame), the published expectation graded as
//! the catalog grades codes, the ruling's effect where one applies, and what it assumes of
//! the receiver as a `catalog::receiver::Receiver`.

use super::format::{Metadata, Outcome};
use super::octets::{self, Finding};
use super::read::{namespace_of, stamp, Raw};
use super::rulings::{self, Effect};
use crate::catalog::fixture::{Fixture, Published};
use crate::catalog::receiver::{Carried, PolicyRefusal, Receiver};
use crate::catalog::vector::{
    AcceptSpec, Applicability, Body, Data, ExtSpec, FieldsSpec, FrameExpect, FrameSpec, FramesBody,
    Header, Method, Num, Part, RejectFull, RejectSpec, Send, Shape, Step, UnknownProfile, Vector,
};
use crate::catalog::Catalog;
use crate::frames::limits::DEFAULT_MAX_CLOCK_SKEW_MS;
use crate::frames::{DecodeError, ErrorCode, FrameError, Limits};
use crate::p1::P1Form;
use bytes::Bytes;
use std::path::Path;
use std::sync::Arc;

/// Namespaces whose fixtures are about the core, not a profile: their accepts are core
/// accepts (SI-003), and they run without profile validation.
const CORE_LEVEL: [&str; 4] = ["core", "e1", "s1", "poc"];

/// `poc_*` fixtures have no catalog vector of their own id; each takes the requirements of
/// the catalog vector that covers the same case (the same-case test checks the octets).
pub const SAME_CASE: [(&str, &str); 6] = [
    (
        "poc_0001_valid_mcp_request",
        "core_0002_valid_typical_frame",
    ),
    (
        "poc_0002_valid_swprpc_request",
        "core_0002_valid_typical_frame",
    ),
    ("poc_0003_invalid_version", "core_0008_unsupported_version"),
    (
        "poc_0004_invalid_empty_msg_id",
        "e1_0005_empty_msg_id_invalid",
    ),
    (
        "poc_0005_invalid_truncated_frame",
        "core_0006_invalid_truncated_body",
    ),
    (
        "poc_0006_invalid_varint_overflow",
        "e1_0002_varint_too_long_invalid",
    ),
];

/// The codes the spec equally allows for the fault the octets carry (SI-005 to SI-011),
/// when the published code is one of them.
fn alternatives(finding: Option<&Finding>, off_clock: bool) -> &'static [ErrorCode] {
    use ErrorCode as C;
    match finding {
        Some(Finding::Frame(FrameError::TooLarge { .. }))
        | Some(Finding::Decode(DecodeError::BodyTooLarge { .. })) => {
            &[C::FrameTooLarge, C::InvalidFrame]
        }
        Some(Finding::Decode(DecodeError::Uvarint { .. })) => &[C::InvalidUvarint, C::InvalidFrame],
        Some(Finding::Decode(DecodeError::Missing(_))) => {
            &[C::InvalidEnvelope, C::InvalidFrame, C::InvalidUvarint]
        }
        Some(Finding::Decode(DecodeError::MsgIdLength { .. })) => {
            &[C::MsgIdInvalid, C::InvalidEnvelope]
        }
        Some(Finding::Decode(DecodeError::ExtTooLarge { .. })) => {
            &[C::ExtTooLarge, C::InvalidEnvelope]
        }
        Some(Finding::Decode(DecodeError::PayloadTooLarge { .. })) => {
            &[C::PayloadTooLarge, C::InvalidEnvelope]
        }
        Some(Finding::Decode(DecodeError::Truncated { .. } | DecodeError::Trailing(_))) => {
            &[C::InvalidFrame, C::InvalidEnvelope]
        }
        Some(Finding::Decoded(_)) if off_clock => &[C::InvalidEnvelope, C::SecurityPolicy],
        _ => &[],
    }
}

/// Which P1 forms a profile payload decodes in: (bare message, wrapper).
fn p1_forms(profile_id: u64, msg_type: u64, payload: &[u8]) -> Option<(bool, bool)> {
    let desc = crate::p1::pb::message_for(profile_id, msg_type)?;
    let bare = prost_reflect::DynamicMessage::decode(desc.clone(), payload).is_ok();
    let wrapped = P1Form::Wrapper
        .unwrap(profile_id, msg_type, payload)
        .is_ok_and(|inner| prost_reflect::DynamicMessage::decode(desc, &inner[..]).is_ok());
    Some((bare, wrapped))
}

fn describe_published(m: &Metadata) -> String {
    match &m.outcome {
        Some(Outcome::Accept) => "accept".into(),
        Some(Outcome::Reject(codes)) => {
            let mut s = format!(
                "reject {}",
                codes
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(" or ")
            );
            if let Some(c) = m.code.as_deref().filter(|c| !c.starts_with("ERR_")) {
                s.push_str(&format!(" (code {c})"));
            }
            s
        }
        Some(Outcome::Process) => "process check".into(),
        None => "(not understood)".into(),
    }
}

/// A fixture the harness cannot read: every method reports a harness error with `why`.
fn broken(r: &Raw, why: String) -> Vector {
    let mut v = skeleton(r, Vec::new());
    v.header.fixture = Some(Arc::new(Fixture {
        file: file_name(&r.path),
        published: Published {
            accept: false,
            codes: Vec::new(),
            allowed: Vec::new(),
            text: describe_published(&r.meta),
        },
        ruling: None,
        profile_level: false,
        receiver: Receiver {
            unreadable: Some(format!("{}: {why}", file_name(&r.path))),
            ..Receiver::default()
        },
        evidence: None,
    }));
    v
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn skeleton(r: &Raw, requirements: Vec<String>) -> Vector {
    Vector {
        header: Header {
            id: r.id.clone(),
            title: r
                .meta
                .description
                .clone()
                .unwrap_or_else(|| r.id.replace('_', " ")),
            namespace: namespace_of(&r.id),
            requirements,
            methods: vec![Method::Codec, Method::Session],
            applies_when: Applicability::default(),
            notes: None,
            // One frame, judged on its own: nothing another vector sends can change its
            // verdict (core_0016, the one fixture about a count, is not applicable).
            exclusive: false,
            fixture: None,
        },
        body: Body::Frames(FramesBody::default()),
    }
}

/// The catalog vector whose requirements a fixture takes.
fn counterpart<'c>(id: &str, reference: &'c Catalog) -> Option<&'c Vector> {
    let target = SAME_CASE
        .iter()
        .find(|(f, _)| *f == id)
        .map_or(id, |(_, c)| *c);
    reference
        .vectors
        .iter()
        .find(|lv| lv.vector.header.id == target)
        .map(|lv| &lv.vector)
}

/// The code requirements a catalog vector gives its first reject.
fn code_requirements(v: &Vector) -> Vec<String> {
    let Body::Frames(b) = &v.body else {
        return Vec::new();
    };
    b.steps
        .iter()
        .flat_map(|s| &s.expect)
        .find_map(|e| match e {
            FrameExpect::Reject(RejectSpec::Full(f)) if !f.code_requirements.is_empty() => {
                Some(f.code_requirements.clone())
            }
            _ => None,
        })
        .unwrap_or_default()
}

/// The catalog vector of fixture `r`: `clock` is its batch's clock, `reference` the
/// project's catalog, whose vector of the same case lends its requirements.
pub fn convert(r: &Raw, clock: Option<u64>, reference: &Catalog) -> Vector {
    if !r.meta.problems.is_empty() {
        return broken(r, r.meta.problems.join("; "));
    }
    let Some(outcome) = r.meta.outcome.clone() else {
        return broken(r, "the metadata states no outcome".into());
    };
    let peer = counterpart(&r.id, reference);
    let ns = namespace_of(&r.id);
    let published = Published {
        accept: outcome == Outcome::Accept,
        codes: match &outcome {
            Outcome::Reject(c) => c.clone(),
            _ => Vec::new(),
        },
        allowed: Vec::new(),
        text: describe_published(&r.meta),
    };
    let mut fx = Fixture {
        file: file_name(&r.path),
        published,
        ruling: rulings::named(&r.id),
        profile_level: r.meta.profile.is_some() || !CORE_LEVEL.contains(&ns.as_str()),
        receiver: Receiver {
            limits: r.meta.limits,
            ..Receiver::default()
        },
        evidence: None,
    };
    let mut v = skeleton(
        r,
        peer.map(|p| p.header.requirements.clone())
            .unwrap_or_default(),
    );
    v.header.notes = Some(
        [r.meta.group.as_deref(), r.meta.rejection_reason.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(": "),
    )
    .filter(|n| !n.is_empty());
    if outcome == Outcome::Process || r.meta.evidence_type.as_deref() == Some("process") {
        let evidence = r.meta.evidence_file.as_deref().unwrap_or("none named");
        fx.receiver.not_runnable = Some(format!(
            "a process vector, not testable at runtime: its evidence is {evidence}"
        ));
        fx.evidence = Some(evidence.to_owned());
        v.header.fixture = Some(Arc::new(fx));
        return v;
    }
    let (Some(octets), Some(reading)) = (&r.octets, &r.reading) else {
        return broken(r, "no octets".into());
    };
    let h = reading.header;
    fx.receiver.header = h;
    let decoded = match &reading.finding {
        Finding::Decoded(e) => Some(e.as_ref()),
        _ => None,
    };
    // The clock: a fixture's own stamp, unless its stamp is the point (stale, future, zero):
    // then the moment its batch was stamped.
    let mut off_clock = false;
    if let Some(ts) = stamp(r) {
        match clock.filter(|c| ts.abs_diff(*c) > DEFAULT_MAX_CLOCK_SKEW_MS) {
            Some(c) => {
                off_clock = true;
                fx.receiver.now_ms = Some(c);
                fx.receiver.stamp_offset = Some(ts.abs_diff(c));
                v.header.applies_when.timestamp_freshness = Some(!fx.published.accept);
            }
            None => fx.receiver.now_ms = Some(ts),
        }
    }
    // The profile the frame addresses: claimed by the SUT, unless it is the one the fixture
    // treats as unknown.
    if let Some(p) = h.profile_id.filter(|_| reading.complete) {
        if fx.published.codes.contains(&ErrorCode::UnknownProfile) {
            fx.receiver.unknown_profile = Some(p);
        } else {
            v.header.applies_when.profiles = vec![p];
        }
    }
    let forms = match (decoded, fx.profile_level) {
        (Some(e), true) => p1_forms(e.profile_id, e.msg_type, &e.payload),
        _ => None,
    };
    // A P1 payload valid in one form only: the form it is in, and the frame as the harness
    // carries it in either (SI-040); without that, it applies only to SUTs of its form.
    let mut carry_in = None;
    if let (Some((bare, wrapped)), Some(e)) = (forms, decoded) {
        let kit = if bare {
            P1Form::Message
        } else {
            P1Form::Wrapper
        };
        if bare != wrapped {
            carry_in = Some((kit, carry(e, octets, kit)));
        }
        let placeholder = e.payload.windows(r.id.len()).any(|w| w == r.id.as_bytes());
        if fx.ruling.is_none() {
            // A payload valid in neither form must be refused, whatever the kit expects.
            if !bare && !wrapped {
                fx.ruling = Some(&rulings::INVALID_P1);
            } else if placeholder {
                fx.ruling = Some(&rulings::PLACEHOLDER);
            }
        }
    }
    // The published expectation, with the codes the catalog's grading also allows.
    let group = alternatives(Some(&reading.finding), off_clock);
    let mut allowed = fx.published.codes.clone();
    if allowed.iter().any(|c| group.contains(c)) {
        allowed.extend(group.iter().filter(|c| !fx.published.codes.contains(c)));
    }
    fx.published.allowed = allowed.clone();
    let profile = decoded.map(|e| e.profile_id);
    if fx.profile_level {
        fx.receiver.validate_profiles.extend(profile);
    }
    let mut terminates = None;
    let mut expect = if fx.published.accept {
        match accept(r, decoded, fx.profile_level) {
            Ok(a) => Some(a),
            Err(why) => return broken(r, why),
        }
    } else {
        None
    };
    let mut code_reqs = peer.map(code_requirements).unwrap_or_default();
    match fx.ruling.map(|x| x.effect) {
        Some(Effect::SingleFrame(what)) => {
            fx.receiver.not_runnable = Some(format!("a single frame cannot show this: {what}"));
        }
        Some(Effect::UnknownProfilePath(path)) => {
            v.header.applies_when.unknown_profile = Some(path);
            if path == UnknownProfile::Close {
                terminates = Some(true);
            }
        }
        Some(Effect::Expect(ruled)) => {
            expect = None;
            allowed = ruled.codes.to_vec();
            v.header.requirements = owned(ruled.requirements);
            code_reqs = owned(ruled.code_requirements);
            if ruled.validate {
                fx.receiver.validate_profiles = profile.into_iter().collect();
            }
        }
        Some(Effect::DecodingOnly) => {
            // The core's acceptance and dispatch: the receiver is not asked to validate the
            // profile, and a refusal by the profile (an endpoint's always runs) still shows
            // the core dispatched the frame (SI-003).
            let Some(e) = decoded else {
                return broken(
                    r,
                    "a ruling on decoding for a frame that does not decode".into(),
                );
            };
            let mut a = expect.take().unwrap_or_else(|| core_accept(e));
            a.profile_may_refuse = true;
            expect = Some(a);
            fx.receiver.validate_profiles.clear();
            v.header.requirements = owned(rulings::DECODING_REQUIREMENTS);
            code_reqs.clear();
        }
        Some(Effect::EitherWay(requirements)) => {
            let Some(e) = decoded else {
                return broken(
                    r,
                    "a ruling on a choice for a frame that does not decode".into(),
                );
            };
            // Any refusal passes; one that comes after the quiet window (a slow close) is
            // judged as a frame the profile may refuse: inconclusive, never a failure.
            let mut a = expect.take().unwrap_or_else(|| core_accept(e));
            a.reject_allowed = true;
            a.profile_may_refuse = true;
            expect = Some(a);
            v.header.requirements = owned(requirements);
            code_reqs.clear();
        }
        Some(Effect::Explains) | None => {}
    }
    // Carried in the SUT's form only where nothing pins the kit's payload octets (an
    // asserted payload length compares them).
    let pinned = expect
        .as_ref()
        .and_then(|a| a.fields.as_ref())
        .is_some_and(|f| f.payload.is_some());
    let mut frame = None;
    match carry_in {
        Some((_, Some((spec, carried)))) if !pinned => {
            fx.receiver.carried = Some(carried);
            frame = Some(Box::new(spec));
        }
        Some((kit, _)) => v.header.applies_when.p1_payload = Some(kit),
        None => {}
    }
    let expectation = match expect {
        Some(a) => FrameExpect::Accept(Box::new(a)),
        None => {
            let Some((first, also)) = allowed.split_first() else {
                return broken(r, "a reject without a code".into());
            };
            FrameExpect::Reject(RejectSpec::Full(RejectFull {
                code: first.as_str().to_owned(),
                also: also.iter().map(|c| c.as_str().to_owned()).collect(),
                terminates,
                code_requirements: code_reqs,
            }))
        }
    };
    let send = Send {
        raw: frame
            .is_none()
            .then(|| vec![Part::Hex(hex::encode(octets))]),
        frame,
        identity_probe: false,
        slow_request: None,
        reply_to_forwarded: false,
        jsonrpc_line: None,
        translate: None,
    };
    let step = |send: Option<Send>, e: FrameExpect, note: &str| Step {
        note: Some(note.to_owned()),
        ..Step::new(send, vec![e])
    };
    let what = format!("the octets of {}", r.meta.bin_file.as_deref().unwrap_or(""));
    let steps = if reading.at_end {
        vec![
            step(Some(send), FrameExpect::Nothing, &what),
            step(None, expectation, "the stream ends"),
        ]
    } else {
        vec![step(Some(send), expectation, &what)]
    };
    v.body = Body::Frames(FramesBody {
        shape: Shape::of(&steps),
        steps,
        ..FramesBody::default()
    });
    let mut notes: Vec<String> = v.header.notes.take().into_iter().collect();
    if let Some(rl) = fx.ruling {
        notes.push(format!("Ruling ({}): {}", rl.si, rl.reading));
    }
    if let Some(c) = &fx.receiver.carried {
        notes.push(format!(
            "Carried in the P1 form the SUT declares (SI-040): the kit's {} octets for a {} SUT, else the same message {} by the harness",
            c.kit.as_str(),
            c.kit.as_str(),
            match c.kit {
                P1Form::Message => "in the annex's Payload wrapper",
                P1Form::Wrapper => "unwrapped",
            }
        ));
    }
    v.header.notes = (!notes.is_empty()).then(|| notes.join(". "));
    fx.receiver.policy_refusal = policy_refusal(&fx);
    v.header.fixture = Some(Arc::new(fx));
    v
}

/// The profile that may refuse a fixture judged on decoding only by policy, with
/// `ERR_SECURITY_POLICY` (`rulings::POLICY_REFUSALS`): on an endpoint, which always runs its
/// profile, the session judge would count that refusal against the core.
fn policy_refusal(fx: &Fixture) -> Option<PolicyRefusal> {
    if fx.ruling.map(|r| r.effect) != Some(Effect::DecodingOnly) {
        return None;
    }
    let profile = fx.receiver.header.profile_id?;
    let (_, clause) = rulings::POLICY_REFUSALS
        .iter()
        .find(|(id, _)| *id == profile)?;
    Some(PolicyRefusal { profile, clause })
}

fn owned(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

/// The frame of a profile fixture whose P1 payload is valid in the `kit` form only, as a
/// frame the harness encodes in the form the SUT declares: the payload is the msg_type's
/// message with no fields set and the bare message's octets appended, which the wrapper
/// form carries whole as its member (`P1Form::wrap`). Also the header of the frame in the
/// other form. `None` where the harness's encoding in the kit's form is not exactly the
/// kit's octets (a padded uvarint, say), or the other form does not carry the same message
/// octets: the fixture then runs only for SUTs of the kit's form.
fn carry(e: &crate::frames::Envelope, octets: &Bytes, kit: P1Form) -> Option<(FrameSpec, Carried)> {
    let desc = crate::p1::pb::message_for(e.profile_id, e.msg_type)?;
    let bare = kit.unwrap(e.profile_id, e.msg_type, &e.payload).ok()?;
    let mut spec = crate::p1::P1Spec::new();
    spec.insert(
        desc.full_name().to_owned(),
        serde_json::Value::Object(serde_json::Map::new()),
    );
    spec.insert(
        "unknown_fields".to_owned(),
        serde_json::Value::String(hex::encode(&bare)),
    );
    let frame = FrameSpec {
        version: Some(Num::Lit(e.version)),
        profile_id: Some(Num::Lit(e.profile_id)),
        msg_type: Some(Num::Lit(e.msg_type)),
        flags: Some(Num::Lit(e.flags)),
        ts_unix_ms: Some(Num::Lit(e.ts_unix_ms)),
        msg_id: Some(Data::Hex(hex::encode(&e.msg_id))),
        extensions: e
            .extensions
            .iter()
            .map(|(t, v)| ExtSpec {
                ext_type: Num::Lit(t),
                value: Data::Hex(hex::encode(&v)),
            })
            .collect(),
        payload: Some(Data::P1(spec)),
    };
    let build = |form: P1Form| {
        let mut p = crate::plan::expr::Params::new();
        p.insert("P1_WRAPPER", u64::from(form == P1Form::Wrapper));
        crate::plan::materialize::build_frame(&frame, &p, None).ok()
    };
    if build(kit)? != *octets {
        return None;
    }
    let other_form = match kit {
        P1Form::Message => P1Form::Wrapper,
        P1Form::Wrapper => P1Form::Message,
    };
    let other = build(other_form)?;
    let read = octets::read(&other, &Limits::unbounded()).ok()?;
    let Finding::Decoded(o) = &read.finding else {
        return None;
    };
    if other_form
        .unwrap(o.profile_id, o.msg_type, &o.payload)
        .ok()?
        != bare
    {
        return None;
    }
    Some((
        frame,
        Carried {
            kit,
            other: read.header,
        },
    ))
}

/// The core's accept of a decoded frame: its own version, profile and msg_type (a reject
/// fixture's metadata describes the receiver, not the frame).
fn core_accept(e: &crate::frames::Envelope) -> AcceptSpec {
    AcceptSpec {
        fields: Some(FieldsSpec {
            version: Some(Num::Lit(e.version)),
            profile_id: Some(Num::Lit(e.profile_id)),
            msg_type: Some(Num::Lit(e.msg_type)),
            ..FieldsSpec::default()
        }),
        unknown_flags: None,
        profile_may_refuse: false,
        reject_allowed: false,
        answered: false,
    }
}

/// The accept a fixture expects: the envelope values it asserts; the payload exactly as the
/// frame carries it where the metadata asserts its length. A core-level accept lets the
/// profile refuse the payload (SI-003: the core dispatched it).
fn accept(
    r: &Raw,
    decoded: Option<&crate::frames::Envelope>,
    profile_level: bool,
) -> Result<AcceptSpec, String> {
    let a = r.meta.asserted;
    let lit = |v: Option<u64>| v.map(Num::Lit);
    let mut fields = FieldsSpec {
        version: lit(a.version),
        profile_id: lit(a.profile_id),
        msg_type: lit(a.msg_type),
        ..FieldsSpec::default()
    };
    if a.payload_len.is_some() || a.min_payload_len.is_some() {
        let Some(e) = decoded else {
            return Err("an accept whose frame the harness's codec cannot decode".into());
        };
        let len = e.payload.len() as u64;
        if a.payload_len.is_some_and(|n| n != len) || a.min_payload_len.is_some_and(|n| len < n) {
            return Err(format!(
                "the metadata asserts a payload of {} octets, the frame carries {len}",
                a.payload_len.map_or_else(
                    || format!("at least {}", a.min_payload_len.unwrap_or(0)),
                    |n| n.to_string()
                )
            ));
        }
        fields.payload = Some(Data::Hex(hex::encode(&e.payload)));
    }
    Ok(AcceptSpec {
        fields: Some(fields),
        unknown_flags: None,
        profile_may_refuse: !profile_level,
        reject_allowed: false,
        answered: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::{e1, Envelope};

    fn frame(payload: &[u8]) -> (Envelope, Bytes) {
        let env = Envelope {
            version: 1,
            profile_id: 12,
            msg_type: 1,
            ts_unix_ms: 1_771_513_334_692,
            msg_id: Bytes::from_static(b"12345678abcdefgh"),
            extensions: crate::frames::e1::Extensions::from_entries([(16u64, b"x")]),
            payload: Bytes::copy_from_slice(payload),
            ..Envelope::default()
        };
        let octets = e1::frame_bytes(&env).unwrap();
        (env, octets)
    }

    fn built(spec: &FrameSpec, form: P1Form) -> Bytes {
        let mut p = crate::plan::expr::Params::new();
        p.insert("P1_WRAPPER", u64::from(form == P1Form::Wrapper));
        crate::plan::materialize::build_frame(spec, &p, None).unwrap()
    }

    /// The kit's bare RpcReq (rpc_id "rpc", method "m") is sent as it is to a message-form
    /// SUT and as the wrapper's member 1 to the other, every other field unchanged.
    #[test]
    fn a_bare_payload_is_carried_in_either_form() {
        let bare = [0x0a, 3, b'r', b'p', b'c', 0x12, 1, b'm'];
        let (env, octets) = frame(&bare);
        let (spec, carried) = carry(&env, &octets, P1Form::Message).unwrap();
        assert_eq!(built(&spec, P1Form::Message), octets);
        let wrapped = built(&spec, P1Form::Wrapper);
        let mut member = vec![0x0a, 8];
        member.extend_from_slice(&bare);
        let (body, _) = crate::frames::frame::take_frame(&wrapped, &Limits::default())
            .unwrap()
            .unwrap();
        let got = e1::decode(&body, &Limits::default()).unwrap();
        assert_eq!(got.payload.to_vec(), member);
        assert_eq!(
            Envelope {
                payload: env.payload.clone(),
                ..got
            },
            env
        );
        assert_eq!(carried.kit, P1Form::Message);
        assert_eq!(carried.other.payload, Some(10));
        assert_eq!(carried.other.frame, Some(body.len() as u64));
        let r = Receiver {
            carried: Some(carried),
            ..Receiver::default()
        };
        assert_eq!(r.header_in(P1Form::Wrapper).payload, Some(10));
        assert_eq!(r.header_in(P1Form::Message).payload, None);
    }

    /// Octets the harness would not write the same way (a padded uvarint) are not carried:
    /// sending its own encoding would not be the kit's fixture.
    #[test]
    fn octets_the_harness_would_encode_otherwise_are_not_carried() {
        let (env, octets) = frame(&[0x0a, 3, b'r', b'p', b'c']);
        let mut padded = octets.to_vec();
        // flags 0 written as 0x80 0x00: one octet more, so the prefix grows by one.
        let at = 4 + 3;
        assert_eq!(padded[at], 0);
        padded.splice(at..=at, [0x80, 0x00]);
        let n = u32::from_be_bytes([padded[0], padded[1], padded[2], padded[3]]) + 1;
        padded[..4].copy_from_slice(&n.to_be_bytes());
        assert!(carry(&env, &Bytes::from(padded), P1Form::Message).is_none());
    }
}
