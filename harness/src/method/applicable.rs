//! Whether a vector applies to a SUT at all, from what the manifest claims and declares:
//! methods, profiles, policies and the `holds` conditions over its parameters.

use super::contract::{unfilled, NotApplicable};
use crate::catalog::vector::{UnknownProfile, Vector};
use crate::sut::Sut;

/// Why a vector does not apply to this SUT, if it does not. A method the SUT is not driven
/// by, or a `holds` condition over a window or size the manifest does not declare, leaves the
/// vector untested; everything else is the SUT's declared choice.
pub fn applicability(v: &Vector, sut: &Sut) -> Option<NotApplicable> {
    // A vector's own receiver assumptions (a published fixture's process check, one frame
    // of multi-frame behaviour, its limits and clock) decide first.
    if let Some(na) = super::receiver::applicability(v, sut) {
        return Some(na);
    }
    let m = &sut.manifest;
    if !v.header.methods.iter().any(|x| m.methods.contains(x)) {
        let want: Vec<_> = v.header.methods.iter().map(|m| m.as_str()).collect();
        return Some(NotApplicable::untested(format!(
            "the SUT is not driven by any of the vector's methods ({})",
            want.join(", ")
        )));
    }
    if let Some(why) = declared(v, sut) {
        return Some(NotApplicable::choice(why));
    }
    conditions(v, sut)
}

/// The vector's `holds` conditions. One that is false is the SUT's choice (say, a replay
/// window too long to wait out); one over a value the SUT does not declare cannot be
/// decided, and the SUT owes the value (swp-rpc §6 asks it to document its replay window),
/// so the vector is untested and a class needing it stays incomplete.
fn conditions(v: &Vector, sut: &Sut) -> Option<NotApplicable> {
    let params = sut.params(super::codec::CODEC_NOW_MS);
    for c in &v.header.applies_when.holds {
        // A condition over an optional feature's value the SUT does not declare (SWP-AGDISC's
        // max-age, a SHOULD) is the SUT's choice, as an unfilled feature trigger is.
        if let Some(f) = crate::plan::features::FEATURE_PARAMS
            .iter()
            .find(|f| c.contains(&format!("${{{f}}}")) && !sut.manifest.params.contains_key(**f))
        {
            return Some(NotApplicable::choice(format!(
                "`{c}`: the manifest declares no params {f}: it claims no such optional feature"
            )));
        }
        match crate::plan::expr::holds(c, &params) {
            Ok(true) => {}
            Ok(false) => {
                return Some(NotApplicable::choice(format!(
                    "the SUT's parameters do not satisfy `{c}`"
                )))
            }
            Err(e @ crate::plan::expr::ExprError::Undeclared(_)) => {
                // A vector whose optional feature the SUT lacks is out by that choice
                // before any value it would owe for the feature is asked for (rpc_0111
                // needs RPC_REPLAY_WHILE_RUNNING only of a SUT with a slow method).
                if let Err(f @ crate::plan::placeholders::FillError::Missing(_)) =
                    crate::plan::placeholders::fill(v, &sut.manifest.params)
                {
                    let na = unfilled(f);
                    if na.cause == crate::report::result::NaCause::SutChoice {
                        return Some(na);
                    }
                }
                let crate::plan::expr::ExprError::Undeclared(name) = &e else {
                    return Some(NotApplicable::untested(format!("`{c}`: {e}")));
                };
                return Some(NotApplicable::undeclared(
                    format!("`{c}`: {e}"),
                    vec![name.clone()],
                ));
            }
            Err(e) => return Some(NotApplicable::choice(format!("`{c}`: {e}"))),
        }
    }
    None
}

/// The SUT's declared choices that put the vector out of scope.
fn declared(v: &Vector, sut: &Sut) -> Option<String> {
    let m = &sut.manifest;
    let a = &v.header.applies_when;
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
    if let Some(f) = a.p1_payload {
        if m.p1_payload != f {
            return Some(format!(
                "written for P1 payloads in the {} form; the SUT declares the {} form",
                f.as_str(),
                m.p1_payload.as_str()
            ));
        }
    }
    if a.error_frames == Some(true) {
        if let crate::sut::SutKind::Endpoint { session, .. } = &m.kind {
            if session.reject_signal.mode == crate::sut::file::RejectMode::Close {
                return Some(
                    "about what an error frame carries; the SUT signals rejects by closing, so it surfaces no core error as JSON-RPC (MCP mapping §6 applies only where errors are surfaced)"
                        .into(),
                );
            }
        }
    }
    if let Some(d) = a.reject_duplicate_msg_id {
        if m.policy.reject_duplicate_msg_id != d {
            return Some(if d {
                "needs a receiver that rejects duplicate in-flight msg_ids; the SUT declares no such policy (the spec obliges senders only)".into()
            } else {
                "needs a receiver without a duplicate msg_id policy; the SUT declares one".into()
            });
        }
    }
    if let Some(want) = a.gateway_envelope {
        // A SUT without MCP settings is no gateway; the method check has put it out already.
        let declared = match &m.kind {
            crate::sut::SutKind::McpServer { mcp_native, .. } => mcp_native.gateway_envelope,
            _ => crate::catalog::gateway::GatewayEnvelope::default(),
        };
        if declared != want {
            return Some(format!(
                "tests the {} envelope contract; the gateway declares `gateway_envelope: {}` (docs/spec-issues.md SI-032)",
                want.as_str(),
                declared.as_str()
            ));
        }
    }
    if a.rate_limit == Some(true) && m.policy.rate_limit.is_none() {
        return Some("needs a declared frame-rate limit; the SUT declares none".into());
    }
    None
}

fn name(u: UnknownProfile) -> &'static str {
    match u {
        UnknownProfile::ErrorReply => "error-reply",
        UnknownProfile::Close => "close",
    }
}
