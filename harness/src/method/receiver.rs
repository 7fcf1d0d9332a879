//! A vector's receiver assumptions (`catalog::receiver::Receiver`), held against a SUT. A
//! codec SUT (built in, or a testee) takes a receiver configuration with every request, so
//! the stated limits, the clock and profile validation go into that configuration. An
//! endpoint takes no per-vector configuration: there the vector applies only where the SUT's
//! own declaration makes the same case, and otherwise is not applicable with the reason.

use super::contract::NotApplicable;
use crate::catalog::receiver::{Bounds, Receiver};
use crate::catalog::vector::Vector;
use crate::plan::expr::Params;
use crate::sut::{codec_config_of, Limits, Sut, SutKind};
use swp_testee_proto::CodecConfig;

/// Whether the SUT takes a receiver configuration per request (the codec method).
pub fn configurable(sut: &Sut) -> bool {
    matches!(sut.manifest.kind, SutKind::Builtin | SutKind::Testee { .. })
}

/// The receiver assumptions `v` carries, if any.
pub fn of(v: &Vector) -> Option<&Receiver> {
    v.header.fixture.as_deref().map(|f| &f.receiver)
}

/// The manifest's limits with the receiver's stated ones in place.
fn with_stated(m: Limits, rx: &Receiver) -> Limits {
    let b = rx.limits.over(Bounds {
        max_frame_bytes: m.max_frame_bytes,
        min_msg_id_bytes: m.min_msg_id_bytes,
        max_msg_id_bytes: m.max_msg_id_bytes,
        max_ext_bytes: m.max_ext_bytes,
        max_payload_bytes: m.max_payload_bytes,
    });
    Limits {
        max_frame_bytes: b.max_frame_bytes,
        min_msg_id_bytes: b.min_msg_id_bytes,
        max_msg_id_bytes: b.max_msg_id_bytes,
        max_ext_bytes: b.max_ext_bytes,
        max_payload_bytes: b.max_payload_bytes,
    }
}

/// The limits the receiver enforces for this vector.
pub fn effective(sut: &Sut, rx: &Receiver) -> Limits {
    if configurable(sut) {
        with_stated(sut.manifest.limits, rx)
    } else {
        sut.manifest.limits
    }
}

/// Whether `v` is a vector the harness could not read (its runs are harness errors, and
/// fail the run whatever its requirements).
pub fn unreadable(v: &Vector) -> bool {
    of(v).is_some_and(|rx| rx.unreadable.is_some())
}

/// Why a vector's receiver assumptions do not hold on this SUT, if they do not. Runs before
/// every other applicability check, so a vector that cannot run anywhere says so first.
pub fn applicability(v: &Vector, sut: &Sut) -> Option<NotApplicable> {
    let rx = of(v)?;
    // A vector the harness cannot read must show as a harness error, not vanish.
    if rx.unreadable.is_some() {
        return None;
    }
    if let Some(why) = &rx.not_runnable {
        return Some(NotApplicable::untested(why.clone()));
    }
    let m = &sut.manifest;
    if let Some(p) = rx.unknown_profile {
        if m.claims.profiles.contains(&p) {
            return Some(NotApplicable::choice(format!(
                "the fixture treats profile {p} as unknown, and the SUT claims it"
            )));
        }
    }
    if let Some(na) = policy_refusal(sut, rx) {
        return Some(na);
    }
    if let Some(na) = sizes(sut, rx) {
        return Some(na);
    }
    if let Some(off) = rx.stamp_offset {
        if off <= m.policy.max_clock_skew_ms {
            return Some(NotApplicable::choice(format!(
                "the fixture's stamp lies {off} ms from the clock, inside the SUT's MAX_CLOCK_SKEW_MS {}",
                m.policy.max_clock_skew_ms
            )));
        }
    }
    if let Some(now) = rx.now_ms {
        if !configurable(sut) && m.policy.timestamp_freshness {
            return Some(NotApplicable::untested(format!(
                "the fixture's frame is stamped {} and needs that receiver clock; this SUT's clock is its own wall clock and it enforces freshness, so it would judge the frame's age instead",
                crate::report::model::rfc3339(now / 1000)
            )));
        }
    }
    None
}

/// Why a vector judged on decoding only cannot be judged on this SUT: an endpoint always
/// runs its profile, and where the profile refuses by policy with `ERR_SECURITY_POLICY`,
/// the session judge would count that refusal against the core. A codec SUT is not asked to
/// validate the profile, so it is judged there.
fn policy_refusal(sut: &Sut, rx: &Receiver) -> Option<NotApplicable> {
    if configurable(sut) {
        return None;
    }
    // A SUT that does not claim the profile is not applicable by its own choice, said later.
    let r = rx
        .policy_refusal
        .as_ref()
        .filter(|r| sut.manifest.claims.profiles.contains(&r.profile))?;
    Some(NotApplicable::untested(format!(
        "judged on decoding only (a placeholder payload), and profile {} may refuse it by policy with ERR_SECURITY_POLICY ({}), which on an endpoint cannot show the core dispatched the frame; the codec method judges it",
        r.profile, r.clause
    )))
}

/// Whether the SUT's limits put each of the frame's sizes on the side of its bound the
/// vector assumes (its stated limits, else the spec's defaults).
fn sizes(sut: &Sut, rx: &Receiver) -> Option<NotApplicable> {
    // The frame as this SUT is sent it: a payload carried in its P1 form has other sizes.
    let h = rx.header_in(sut.manifest.p1_payload);
    let s = &rx.limits;
    let assumed = s.assumed();
    let got = effective(sut, rx);
    let us = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    // (name, size, assumed bound, SUT bound, stated, bound is a minimum)
    let dims = [
        (
            "MAX_FRAME_BYTES",
            "frame",
            h.frame,
            u64::from(assumed.max_frame_bytes),
            u64::from(got.max_frame_bytes),
            s.max_frame_bytes.is_some(),
            false,
        ),
        (
            "MIN_MSG_ID_BYTES",
            "msg_id",
            h.msg_id,
            us(assumed.min_msg_id_bytes.max(1)),
            got.min_msg_id_bytes.max(1),
            s.min_msg_id_bytes.is_some(),
            true,
        ),
        (
            "MAX_MSG_ID_BYTES",
            "msg_id",
            h.msg_id,
            us(assumed.max_msg_id_bytes),
            got.max_msg_id_bytes,
            s.max_msg_id_bytes.is_some(),
            false,
        ),
        (
            "MAX_EXT_BYTES",
            "extensions block",
            h.ext,
            us(assumed.max_ext_bytes),
            got.max_ext_bytes,
            s.max_ext_bytes.is_some(),
            false,
        ),
        (
            "MAX_PAYLOAD_BYTES",
            "payload",
            h.payload,
            us(assumed.max_payload_bytes),
            got.max_payload_bytes,
            s.max_payload_bytes.is_some(),
            false,
        ),
    ];
    for (name, what, size, want, have, stated, min) in dims {
        let Some(size) = size else { continue };
        let inside = |bound: u64| if min { size >= bound } else { size <= bound };
        if inside(want) == inside(have) {
            continue;
        }
        let side = if inside(want) { "within" } else { "outside" };
        return Some(if stated {
            NotApplicable::untested(format!(
                "the fixture states {name} {want} (its {what} of {size} octets is {side} it); the SUT declares {have}, and an endpoint takes no per-vector limits"
            ))
        } else {
            NotApplicable::choice(format!(
                "the fixture assumes the spec's default {name} {want} (its {what} of {size} octets is {side} it); the SUT's {name} {have} puts it on the other side"
            ))
        });
    }
    None
}

/// The receiver configuration of a decode request for `v`: the manifest's, with the
/// vector's stated limits and profile validation.
pub fn codec_config(v: &Vector, sut: &Sut) -> Option<CodecConfig> {
    let rx = of(v)?;
    let mut c = codec_config_of(&sut.manifest);
    let l = with_stated(sut.manifest.limits, rx);
    c.limits.max_frame_bytes = l.max_frame_bytes;
    c.limits.min_msg_id_bytes = l.min_msg_id_bytes;
    c.limits.max_msg_id_bytes = l.max_msg_id_bytes;
    c.limits.max_ext_bytes = l.max_ext_bytes;
    c.limits.max_payload_bytes = l.max_payload_bytes;
    c.validate_profiles.clone_from(&rx.validate_profiles);
    Some(c)
}

/// The parameters `v` is materialised with in the codec method: the vector's clock and
/// limits in place of the method's and the manifest's.
pub fn codec_params(v: &Vector, sut: &Sut, default_now: u64) -> Option<Params> {
    let rx = of(v)?;
    let mut p = sut.params(rx.now_ms.unwrap_or(default_now));
    let l = with_stated(sut.manifest.limits, rx);
    p.insert("MAX_FRAME_BYTES", u64::from(l.max_frame_bytes));
    p.insert("MIN_MSG_ID_BYTES", l.min_msg_id_bytes);
    p.insert("MAX_MSG_ID_BYTES", l.max_msg_id_bytes);
    p.insert("MAX_EXT_BYTES", l.max_ext_bytes);
    p.insert("MAX_PAYLOAD_BYTES", l.max_payload_bytes);
    Some(p)
}
