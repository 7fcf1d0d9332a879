//! Materialisation: a vector plus one SUT's parameters becomes concrete octets, clock values
//! and expectations. Boundary vectors get their sizes here, per SUT.

use crate::catalog::vector::{
    Body, Data, ExtSpec, FieldsSpec, FrameExpect, FrameSpec, Num, Part, RejectSpec, Send, Vector,
};
use crate::frames::{e1, uvarint, Envelope, ErrorCode, Extensions};
use crate::plan::expr::{self, Params};
use bytes::{BufMut, Bytes};

pub use super::concrete::{
    Action, ConcreteStep, Expectation, Fields, FlowItem, MaterialiseError, ReplyPattern,
};

/// Largest octet string one vector may materialise; protects the harness from a vector
/// (or a SUT limit) that asks for gigabytes.
pub const MAX_MATERIALISED_BYTES: u64 = 64 * 1024 * 1024;

/// Largest total of octets all the steps of one vector may send (repeats included), so a
/// large `repeat` of a large frame cannot exhaust the harness either.
pub const MAX_VECTOR_BYTES: u64 = 256 * 1024 * 1024;

struct Ctx<'a> {
    params: &'a Params,
    /// The receiver clock origin; the default `ts_unix_ms` (a sender stamps its clock).
    now: u64,
    /// Counts frames built so far, for default msg_ids.
    ordinal: u64,
}

impl Ctx<'_> {
    fn num(&self, n: &Num) -> Result<u64, MaterialiseError> {
        match n {
            Num::Lit(v) => Ok(*v),
            Num::Expr(s) => Ok(expr::eval(s, self.params)?),
        }
    }

    fn opt(&self, n: &Option<Num>, default: u64) -> Result<u64, MaterialiseError> {
        n.as_ref().map_or(Ok(default), |n| self.num(n))
    }

    fn size(&self, n: &Num, what: &str) -> Result<usize, MaterialiseError> {
        let v = self.num(n)?;
        if v > MAX_MATERIALISED_BYTES {
            return Err(MaterialiseError::HarnessBound(format!(
                "{what} of {v} octets exceeds the harness bound of {MAX_MATERIALISED_BYTES}"
            )));
        }
        Ok(v as usize)
    }

    /// The octets of a data value; `Fill` with `body_len` yields `None` (sized later).
    fn data(&self, d: &Data) -> Result<Option<Bytes>, MaterialiseError> {
        Ok(Some(match d {
            Data::Hex(h) => hex_bytes(h)?,
            Data::Text(t) => Bytes::copy_from_slice(t.as_bytes()),
            Data::Json(v) => Bytes::from(
                serde_json::to_vec(v).map_err(|e| MaterialiseError::Invalid(e.to_string()))?,
            ),
            Data::Fill(f) => match &f.len {
                Some(n) => Bytes::from(vec![f.byte; self.size(n, "fill")?]),
                None => return Ok(None),
            },
            Data::Valid(_) => {
                return Err(MaterialiseError::Invalid(
                    "`valid` is a frame payload only".into(),
                ))
            }
            Data::P1(spec) => {
                // In the form the SUT declares (its manifest's `p1_payload`).
                let form = if self.params.get("P1_WRAPPER").copied() == Some(1) {
                    crate::p1::P1Form::Wrapper
                } else {
                    crate::p1::P1Form::Message
                };
                let spec = run_params_in_p1(spec, self.params)?;
                Bytes::from(
                    crate::p1::encode_in(&spec, form)
                        .map_err(|e| MaterialiseError::Invalid(e.to_string()))?,
                )
            }
        }))
    }
}

/// A P1 spec with the run's expression parameters (`${NOW_MS}`, the limits) written into
/// its field values: the manifest's params were filled before materialisation, but the
/// receiver clock is only known now, and an expiry or deadline field is written relative
/// to it (`expires_at_unix_ms: "${NOW_MS} + 60000"`). A parameter the run does not have is
/// undeclared, so the vector is untested rather than encoded with a wrong value.
fn run_params_in_p1(
    spec: &crate::p1::P1Spec,
    params: &Params,
) -> Result<crate::p1::P1Spec, MaterialiseError> {
    fn walk(j: &mut serde_json::Value, params: &Params) -> Result<(), MaterialiseError> {
        match j {
            serde_json::Value::String(s) if s.contains("${") => {
                for name in expr::param_names() {
                    let pat = format!("${{{name}}}");
                    if s.contains(&pat) {
                        let v = params.get(name).ok_or_else(|| {
                            MaterialiseError::Undeclared {
                                why: format!(
                                    "the P1 payload uses ${{{name}}}, which this SUT does not declare"
                                ),
                                name: (*name).to_owned(),
                            }
                        })?;
                        *s = s.replace(&pat, &v.to_string());
                    }
                }
                Ok(())
            }
            serde_json::Value::Array(a) => a.iter_mut().try_for_each(|x| walk(x, params)),
            serde_json::Value::Object(m) => m.values_mut().try_for_each(|x| walk(x, params)),
            _ => Ok(()),
        }
    }
    let mut out = spec.clone();
    out.values_mut().try_for_each(|x| walk(x, params))?;
    Ok(out)
}

/// Decodes hex digits, ignoring whitespace.
pub fn hex_bytes(h: &str) -> Result<Bytes, MaterialiseError> {
    let clean: String = h.chars().filter(|c| !c.is_whitespace()).collect();
    hex::decode(clean)
        .map(Bytes::from)
        .map_err(|e| MaterialiseError::Invalid(format!("hex {h:?}: {e}")))
}

/// The default msg_id of the `n`th frame of a vector: 16 octets, unique within the vector.
pub fn default_msg_id(n: u64) -> Bytes {
    Bytes::from(format!("swp-msg-{:08}", n % 100_000_000).into_bytes())
}

/// Which field of a frame is sized by `body_len`.
enum Pad {
    MsgId,
    Payload,
    Ext(usize),
}

fn body(ctx: &mut Ctx<'_>, f: &FrameSpec) -> Result<Bytes, MaterialiseError> {
    ctx.ordinal += 1;
    let mut pad: Option<(Pad, u8, u64)> = None;
    let mut take = |d: &Data, which: Pad, ctx: &Ctx<'_>| -> Result<Bytes, MaterialiseError> {
        if let Data::Fill(fl) = d {
            if let (None, Some(target)) = (&fl.len, &fl.body_len) {
                pad = Some((which, fl.byte, ctx.num(target)?));
                return Ok(Bytes::new());
            }
        }
        ctx.data(d)?
            .ok_or_else(|| MaterialiseError::Invalid("fill needs `len` or `body_len`".into()))
    };
    let msg_id = match &f.msg_id {
        Some(d) => take(d, Pad::MsgId, ctx)?,
        None => default_msg_id(ctx.ordinal),
    };
    // A generated valid payload is sized once the profile and msg_type are known.
    let valid = match &f.payload {
        Some(Data::Valid(sz)) => Some(sz),
        _ => None,
    };
    let payload = match &f.payload {
        Some(Data::Valid(_)) | None => Bytes::new(),
        Some(d) => take(d, Pad::Payload, ctx)?,
    };
    let mut exts: Vec<(u64, Bytes)> = Vec::with_capacity(f.extensions.len());
    for (i, x) in f.extensions.iter().enumerate() {
        let t = ctx.num(&x.ext_type)?;
        exts.push((t, take(&x.value, Pad::Ext(i), ctx)?));
    }
    let mut env = Envelope {
        version: ctx.opt(&f.version, 1)?,
        profile_id: match &f.profile_id {
            Some(n) => ctx.num(n)?,
            None => ctx.num(&Num::Expr("${CORE_PROFILE_ID}".into()))?,
        },
        msg_type: ctx.opt(&f.msg_type, 1)?,
        flags: ctx.opt(&f.flags, 0)?,
        ts_unix_ms: ctx.opt(&f.ts_unix_ms, ctx.now)?,
        msg_id,
        extensions: Extensions::from_entries(exts.iter().map(|(t, v)| (*t, v.as_ref()))),
        payload,
    };
    if let Some(sz) = valid {
        let form = if ctx.params.get("P1_WRAPPER").copied() == Some(1) {
            crate::p1::P1Form::Wrapper
        } else {
            crate::p1::P1Form::Message
        };
        let len = match (&sz.len, &sz.body_len) {
            (Some(n), _) => Some(ctx.size(n, "payload")?),
            (None, Some(t)) => Some(solve_pad(&env, &Pad::Payload, ctx.num(t)?)?),
            (None, None) => None,
        };
        if len.is_some_and(|l| l as u64 > MAX_MATERIALISED_BYTES) {
            return Err(MaterialiseError::HarnessBound(
                "a payload this large exceeds the harness bound".into(),
            ));
        }
        env.payload = Bytes::from(
            crate::p1::valid::payload(env.profile_id, env.msg_type, form, ctx.ordinal, len)
                .map_err(|e| MaterialiseError::NotBuildable(e.to_string()))?,
        );
    }
    if let Some((which, byte, target)) = pad {
        let len = solve_pad(&env, &which, target)?;
        if len as u64 > MAX_MATERIALISED_BYTES {
            return Err(MaterialiseError::HarnessBound(format!(
                "padding of {len} octets exceeds the harness bound"
            )));
        }
        let fill = Bytes::from(vec![byte; len]);
        match which {
            Pad::MsgId => env.msg_id = fill,
            Pad::Payload => env.payload = fill,
            Pad::Ext(i) => {
                exts[i].1 = fill;
                env.extensions =
                    Extensions::from_entries(exts.iter().map(|(t, v)| (*t, v.as_ref())));
            }
        }
        debug_assert_eq!(env.encoded_len() as u64, target);
    }
    let mut out = Vec::with_capacity(env.encoded_len());
    e1::encode_body(&env, &mut out);
    Ok(Bytes::from(out))
}

/// The recommended code of the first reject the steps expect, for the report.
pub fn first_reject_code(steps: &[ConcreteStep]) -> Option<String> {
    steps.iter().flat_map(|s| &s.expect).find_map(|e| match e {
        Expectation::Reject { allowed, .. } => Some(allowed[0].as_str().to_owned()),
        _ => None,
    })
}

/// Finds the length `L` of the padded field that makes the body exactly `target` octets.
fn solve_pad(env: &Envelope, which: &Pad, target: u64) -> Result<usize, MaterialiseError> {
    let base = env.encoded_len() as u64;
    let total = |l: u64| -> u64 {
        let field = uvarint::encoded_len(l) as u64 + l;
        match which {
            // The empty field contributed a one-octet length prefix.
            Pad::MsgId | Pad::Payload => base - 1 + field,
            Pad::Ext(_) => {
                let e0 = env.extensions.len() as u64;
                let e = e0 - 1 + field;
                base - uvarint::encoded_len(e0) as u64 - e0 + uvarint::encoded_len(e) as u64 + e
            }
        }
    };
    if target < total(0) {
        return Err(MaterialiseError::NotApplicable(format!(
            "body_len {target} is smaller than the frame's other fields ({} octets)",
            total(0)
        )));
    }
    let est = target - total(0);
    (est.saturating_sub(24)..=est)
        .rev()
        .find(|&l| total(l) == target)
        .map(|l| l as usize)
        .ok_or_else(|| {
            MaterialiseError::NotApplicable(format!(
                "no field length gives a body of exactly {target} octets"
            ))
        })
}

fn send(ctx: &mut Ctx<'_>, s: &Send) -> Result<Bytes, MaterialiseError> {
    if s.jsonrpc_line.is_some() || s.translate.is_some() {
        return Err(MaterialiseError::Invalid(
            "`jsonrpc_line` and `translate` are for the mcp_native and translate methods only"
                .into(),
        ));
    }
    if let Some(f) = &s.frame {
        let b = body(ctx, f)?;
        return prefixed(b);
    }
    parts(ctx, s.raw.as_deref().unwrap_or_default())
}

fn parts(ctx: &mut Ctx<'_>, ps: &[Part]) -> Result<Bytes, MaterialiseError> {
    let mut out: Vec<u8> = Vec::new();
    for p in ps {
        match p {
            Part::Hex(h) => out.extend_from_slice(&hex_bytes(h)?),
            Part::Text(t) => out.extend_from_slice(t.as_bytes()),
            Part::U32be(n) => {
                let v = ctx.num(n)?;
                let v = u32::try_from(v).map_err(|_| {
                    MaterialiseError::NotApplicable(format!(
                        "{v} does not fit a 4-octet length prefix"
                    ))
                })?;
                out.put_u32(v);
            }
            Part::Uvarint(n) => uvarint::encode(ctx.num(n)?, &mut out),
            Part::Fill(f) => {
                let n = f
                    .len
                    .as_ref()
                    .ok_or_else(|| MaterialiseError::Invalid("a raw fill needs `len`".into()))?;
                let n = ctx.size(n, "fill")?;
                out.resize(out.len() + n, f.byte);
            }
            Part::Frame(f) => out.extend_from_slice(&prefixed(body(ctx, f)?)?),
            Part::Body(f) => out.extend_from_slice(&body(ctx, f)?),
            Part::Prefixed(inner) => {
                let b = parts(ctx, inner)?;
                out.extend_from_slice(&prefixed(b)?);
            }
        }
        if out.len() as u64 > MAX_MATERIALISED_BYTES {
            return Err(MaterialiseError::HarnessBound(
                "raw send exceeds the harness bound".into(),
            ));
        }
    }
    Ok(Bytes::from(out))
}

fn prefixed(body: Bytes) -> Result<Bytes, MaterialiseError> {
    let n = u32::try_from(body.len())
        .map_err(|_| MaterialiseError::NotApplicable("frame body does not fit u32".into()))?;
    let mut out = Vec::with_capacity(4 + body.len());
    out.put_u32(n);
    out.extend_from_slice(&body);
    Ok(Bytes::from(out))
}

fn code(s: &str) -> Result<ErrorCode, MaterialiseError> {
    s.parse()
        .map_err(|e: crate::frames::UnknownCodeName| MaterialiseError::Invalid(e.to_string()))
}

fn fields(ctx: &Ctx<'_>, f: &FieldsSpec) -> Result<Fields, MaterialiseError> {
    let n = |v: &Option<Num>| v.as_ref().map(|n| ctx.num(n)).transpose();
    let d = |v: &Option<Data>| -> Result<Option<Bytes>, MaterialiseError> {
        v.as_ref()
            .map(|d| {
                ctx.data(d)?.ok_or_else(|| {
                    MaterialiseError::Invalid("`body_len` cannot be used in an assertion".into())
                })
            })
            .transpose()
    };
    let exts = |v: &Option<Vec<ExtSpec>>| -> Result<Option<Vec<(u64, Bytes)>>, MaterialiseError> {
        v.as_ref()
            .map(|xs| {
                xs.iter()
                    .map(|x| {
                        let val = ctx.data(&x.value)?.ok_or_else(|| {
                            MaterialiseError::Invalid(
                                "`body_len` cannot be used in an assertion".into(),
                            )
                        })?;
                        Ok((ctx.num(&x.ext_type)?, val))
                    })
                    .collect()
            })
            .transpose()
    };
    Ok(Fields {
        version: n(&f.version)?,
        profile_id: n(&f.profile_id)?,
        msg_type: n(&f.msg_type)?,
        flags: n(&f.flags)?,
        ts_unix_ms: n(&f.ts_unix_ms)?,
        msg_id: d(&f.msg_id)?,
        payload: d(&f.payload)?,
        extensions: exts(&f.extensions)?,
    })
}

/// A `reject` (or the reject a `denied` allows) as an expectation.
fn reject(r: &RejectSpec) -> Result<Expectation, MaterialiseError> {
    Ok(match r {
        RejectSpec::Code(c) => Expectation::Reject {
            allowed: vec![code(c)?],
            terminates: None,
            code_requirements: Vec::new(),
        },
        RejectSpec::Full(f) => {
            let mut allowed = vec![code(&f.code)?];
            for c in &f.also {
                allowed.push(code(c)?);
            }
            Expectation::Reject {
                allowed,
                terminates: f.terminates,
                code_requirements: f.code_requirements.clone(),
            }
        }
    })
}

fn expectation(ctx: &Ctx<'_>, e: &FrameExpect) -> Result<Option<Expectation>, MaterialiseError> {
    Ok(Some(match e {
        FrameExpect::Accept(a) => Expectation::Accept {
            fields: a
                .fields
                .as_ref()
                .map(|f| fields(ctx, f))
                .transpose()?
                .unwrap_or_default(),
            unknown_flags: a.unknown_flags.as_ref().map(|n| ctx.num(n)).transpose()?,
            profile_may_refuse: a.profile_may_refuse,
            reject_allowed: a.reject_allowed,
            answered: a.answered,
        },
        FrameExpect::Reject(r) => reject(r)?,
        FrameExpect::Denied(r) => Expectation::Denied(Box::new(reject(r)?)),
        FrameExpect::Answer(a) => Expectation::Answer {
            code: a.err.code.clone(),
            also: a
                .err
                .also
                .iter()
                .map(|c| code(c))
                .collect::<Result<_, _>>()?,
        },
        // `nothing` is the empty list of events.
        FrameExpect::Nothing => return Ok(None),
        FrameExpect::Identity => Expectation::Identity,
        FrameExpect::Forwarded => Expectation::Forwarded,
        FrameExpect::ForwardedPayload => Expectation::ForwardedPayload,
        FrameExpect::Close => Expectation::Close,
        FrameExpect::Silence(s) => Expectation::Silence {
            ms: ctx.num(&s.ms)?,
            refusal_allowed: s.refusal_allowed,
        },
        FrameExpect::Reply(r) => Expectation::Reply(ReplyPattern {
            profile_id: r.profile_id.as_ref().map(|n| ctx.num(n)).transpose()?,
            msg_type: r.msg_type.as_ref().map(|n| ctx.num(n)).transpose()?,
            same_msg_id: r.same_msg_id,
            payload: r
                .payload
                .as_ref()
                .map(|d| {
                    ctx.data(d)?
                        .ok_or_else(|| MaterialiseError::Invalid("`body_len` in a reply".into()))
                })
                .transpose()?,
            payload_json: r.payload_json.clone(),
            payload_p1: r.payload_p1.clone(),
            p1_canonical: r.p1_canonical,
            when_silent: r.when_silent,
        }),
        FrameExpect::A2aTasks(t) => Expectation::A2aTasks(t.clone()),
        FrameExpect::Flow(items) => {
            let mut out = Vec::with_capacity(items.len());
            for m in items {
                let (profile_id, msg_type) = crate::p1::class_of(&m.p1)
                    .map_err(|e| MaterialiseError::Invalid(e.to_string()))?;
                // The fields are checked now (a placeholder-filled number that does not fit
                // is the vector's problem, not the SUT's).
                crate::p1::encode(&m.p1).map_err(|e| MaterialiseError::Invalid(e.to_string()))?;
                out.push(FlowItem {
                    spec: m.p1.clone(),
                    profile_id,
                    msg_type,
                    count: m
                        .repeat
                        .as_ref()
                        .map(|n| ctx.num(n))
                        .transpose()?
                        .unwrap_or(1),
                });
            }
            Expectation::Flow(out)
        }
        FrameExpect::Stream(st) => Expectation::Stream((**st).clone()),
        FrameExpect::ErrorJson(j) => Expectation::ErrorJson(j.clone()),
    }))
}

/// Builds one frame (prefix + body) from a frame spec, with `msg_id` overriding the spec's.
pub fn build_frame(
    f: &FrameSpec,
    params: &Params,
    msg_id: Option<Bytes>,
) -> Result<Bytes, MaterialiseError> {
    let mut ctx = Ctx {
        params,
        now: params.get("NOW_MS").copied().unwrap_or(0),
        ordinal: 0,
    };
    let mut spec = f.clone();
    if let Some(m) = msg_id {
        spec.msg_id = Some(Data::Hex(hex::encode(&m)));
    }
    prefixed(body(&mut ctx, &spec)?)
}

/// Materialises `v` against `params`.
pub fn materialise(v: &Vector, params: &Params) -> Result<Vec<ConcreteStep>, MaterialiseError> {
    let Body::Frames(b) = &v.body else {
        return Err(MaterialiseError::Invalid(format!(
            "a vector of the {} methods sends no frames",
            v.body.family().methods()
        )));
    };
    // A published fixture the front-end could not read has no steps worth sending.
    if let Some(why) = v
        .header
        .fixture
        .as_ref()
        .and_then(|f| f.receiver.unreadable.as_ref())
    {
        return Err(MaterialiseError::Invalid(why.clone()));
    }
    let now = params.get("NOW_MS").copied().unwrap_or(0);
    let mut ctx = Ctx {
        params,
        now,
        ordinal: 0,
    };
    let mut out = Vec::new();
    let mut total: u64 = 0;
    for (i, s) in b.steps.iter().enumerate() {
        let reps = ctx.opt(&s.repeat, 1)?;
        if reps > 100_000 {
            return Err(MaterialiseError::HarnessBound(format!(
                "step {i} repeats {reps} times; the harness bound is 100000"
            )));
        }
        let at = ctx.opt(&s.at_ms, 0)?;
        let now_ms = now
            .checked_add(at)
            .ok_or_else(|| MaterialiseError::Invalid(format!("step {i}: clock overflows")))?;
        let mut expect = Vec::new();
        for e in s.expect.as_slice() {
            expect.extend(expectation(&ctx, e)?);
        }
        for rep in 0..reps {
            // Checked before building the next frame: the previous ones are already held.
            if total > MAX_VECTOR_BYTES {
                return Err(MaterialiseError::HarnessBound(format!(
                    "the vector sends more than {MAX_VECTOR_BYTES} octets in all (harness bound)"
                )));
            }
            let action = match &s.send {
                Some(sd) if sd.identity_probe => Action::IdentityProbe,
                Some(sd) if sd.slow_request.is_some() => Action::SlowRequest(
                    sd.slow_request
                        .as_ref()
                        .map(|d| ctx.data(d))
                        .transpose()?
                        .flatten()
                        .unwrap_or_default(),
                ),
                Some(sd) if sd.reply_to_forwarded => Action::SendAsReply(send(&mut ctx, sd)?),
                Some(sd) => Action::Send(send(&mut ctx, sd)?),
                None if s.corrupt_record => Action::CorruptRecord,
                None if s.replay_record => Action::ReplayRecord,
                None => Action::End,
            };
            if let Action::Send(b) | Action::SendAsReply(b) = &action {
                total += b.len() as u64;
            }
            out.push(ConcreteStep {
                step: i,
                rep,
                note: s.note.clone(),
                upstream: s.side == Some(crate::catalog::vector::Side::Upstream),
                second: s.second_connection,
                now_ms,
                action,
                expect: expect.clone(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::vector::Vector;

    fn params() -> Params {
        let mut p = Params::new();
        p.insert("NOW_MS", 1);
        p.insert("CORE_PROFILE_ID", 1);
        p
    }

    #[test]
    fn a_vector_cannot_make_the_harness_allocate_without_bound() {
        let v: Vector = serde_saphyr::from_str(
            "id: core_9999_x\ntitle: t\nnamespace: core\nrequirements: [CORE-001]\nmethods: [codec]\nsteps:\n  - repeat: 100000\n    send: {raw: [{fill: {byte: 0, len: 33554432}}]}\n    expect: nothing\n",
        )
        .unwrap();
        let e = materialise(&v, &params()).unwrap_err();
        assert!(e.to_string().contains("harness bound"), "{e}");
        let v: Vector = serde_saphyr::from_str(
            "id: core_9999_x\ntitle: t\nnamespace: core\nrequirements: [CORE-001]\nmethods: [codec]\nsteps:\n  - send: {raw: [{fill: {byte: 0, len: 99999999999}}]}\n    expect: nothing\n",
        )
        .unwrap();
        assert!(materialise(&v, &params()).is_err());
    }

    #[test]
    fn body_len_padding_hits_the_target_exactly() {
        let v: Vector = serde_saphyr::from_str(
            "id: core_9999_x\ntitle: t\nnamespace: core\nrequirements: [CORE-001]\nmethods: [codec]\nsteps:\n  - send: {frame: {payload: {fill: {byte: 1, body_len: 300}}}}\n    expect: nothing\n",
        )
        .unwrap();
        let steps = materialise(&v, &params()).unwrap();
        let Action::Send(b) = &steps[0].action else {
            panic!("not a send")
        };
        assert_eq!(b.len(), 4 + 300);
        assert_eq!(u32::from_be_bytes([b[0], b[1], b[2], b[3]]), 300);
    }

    /// P1 field values may be relative to the run's receiver clock; a run parameter the SUT
    /// does not have leaves the vector untested instead of encoding a wrong value.
    #[test]
    fn p1_fields_take_the_runs_expression_parameters() {
        let spec: crate::p1::P1Spec = serde_json::from_str(
            r#"{"cred.CredDelegate": {"chain_id": "c", "delegation": "d", "expires_at_unix_ms": "${NOW_MS} + 60000"}}"#,
        )
        .unwrap();
        let mut p = params();
        p.insert("NOW_MS", 1_767_225_600_000);
        let filled = run_params_in_p1(&spec, &p).unwrap();
        let octets = crate::p1::encode(&filled).unwrap();
        let d = prost_reflect::DynamicMessage::decode(
            crate::p1::pb::message("cred.CredDelegate").unwrap(),
            &octets[..],
        )
        .unwrap();
        assert_eq!(
            d.get_field_by_name("expires_at_unix_ms").unwrap().as_u64(),
            Some(1_767_225_660_000)
        );
        let limits: crate::p1::P1Spec = serde_json::from_str(
            r#"{"cred.CredDelegate": {"chain_id": "c", "delegation": "d", "expires_at_unix_ms": "${RATE_LIMIT_WINDOW_MS}"}}"#,
        )
        .unwrap();
        assert!(matches!(
            run_params_in_p1(&limits, &p),
            Err(MaterialiseError::Undeclared { .. })
        ));
    }
}
