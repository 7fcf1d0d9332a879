//! SWP-OBS (profile 18, swp-obs.md): trace context carries a valid W3C traceparent (§4), and
//! a context document answering `OBS_GET` returns the context the asker set: the traceparent
//! octet for octet, every tracestate entry the answering side does not own unchanged and in
//! order, and the same correlation keys (§4, §6), as docs/spec-issues-profiles.md reads them.
//!
//! The context in effect is kept per setting side (the channel and the peer identity).

use super::common::{digest, lower_hex, show, Digest, PerSide, Queue};
use super::config::Ctx;
use super::verdict::{decode, Level, Rule, Side, Violation};
use crate::p1::pb::types::obs::{ObsDoc, ObsErr, ObsGet, ObsSet};

/// The profile_id of SWP-OBS.
pub(super) const PROFILE_ID: u64 = 18;

/// Longest tracestate the judge keeps to compare (W3C caps a tracestate at 32 members; a
/// longer one is not compared rather than cut).
const MAX_TRACESTATE: usize = 8192;
/// Most tracestate members compared when the SUT's own keys are undeclared.
const MAX_MEMBERS: usize = 64;

const MSG_TYPE: Rule = Rule {
    name: "obs.msg-type-assigned",
    profile: "OBS",
    requirement: "OBS-008",
    level: Level::Must,
    section: "§3, §6",
    checks: "msg_type is 1 SET, 2 GET, 3 DOC or 4 ERR",
};
const CONTEXT_HAS_TRACEPARENT: Rule = Rule {
    name: "obs.context-has-traceparent",
    profile: "OBS",
    requirement: "OBS-009",
    level: Level::Must,
    section: "§4 (SI: context present)",
    checks: "OBS_SET, and an OBS_DOC carrying a tracestate, carry a traceparent",
};
const TRACEPARENT_VALID: Rule = Rule {
    name: "obs.traceparent-valid",
    profile: "OBS",
    requirement: "OBS-006",
    level: Level::Must,
    section: "§4, §6 (SI: W3C format)",
    checks: "traceparent is W3C: version-traceid-parentid-flags, lower-case hex, no zero ids, version not ff",
};
const DOC_CARRIES_CONTEXT: Rule = Rule {
    name: "obs.doc-carries-context",
    profile: "OBS",
    requirement: "OBS-005",
    level: Level::Must,
    section: "§5, §6 (SI: include_current)",
    checks: "an OBS_DOC answering OBS_GET include_current=true carries the context the asker set",
};
const TRACEPARENT_PRESERVED: Rule = Rule {
    name: "obs.traceparent-preserved",
    profile: "OBS",
    requirement: "OBS-005",
    level: Level::Must,
    section: "§4, §6",
    checks: "an OBS_DOC returns the asker's traceparent octet for octet",
};
const TRACESTATE_PRESERVED: Rule = Rule {
    name: "obs.tracestate-preserved",
    profile: "OBS",
    requirement: "OBS-007",
    level: Level::Must,
    section: "§4, §6 (SI: own keys)",
    checks: "an OBS_DOC keeps every tracestate entry the answering side does not own, unchanged and in order",
};
const CORRELATION_PRESERVED: Rule = Rule {
    name: "obs.correlation-preserved",
    profile: "OBS",
    // Correlation keys are not trace context (§4 lists traceparent and tracestate as its
    // fields, and correlation as a SHOULD beside them): OBS-004, not OBS-005.
    requirement: "OBS-004",
    level: Level::Should,
    section: "§4, §5 (SI: current context)",
    checks: "an OBS_DOC carries the correlation keys of the asker's OBS_SET",
};

/// Every SWP-OBS rule.
pub(super) const RULES: &[&Rule] = &[
    &MSG_TYPE,
    &CONTEXT_HAS_TRACEPARENT,
    &TRACEPARENT_VALID,
    &DOC_CARRIES_CONTEXT,
    &TRACEPARENT_PRESERVED,
    &TRACESTATE_PRESERVED,
    &CORRELATION_PRESERVED,
];

/// A W3C Trace Context traceparent (SI): `vv-<32 hex>-<16 hex>-<2 hex>`, lower-case hex,
/// version `ff` invalid, all-zero trace-id or parent-id invalid; version 00 is exactly 55
/// characters, a later version may append `-…`.
pub(crate) fn traceparent_valid(tp: &str) -> bool {
    let b = tp.as_bytes();
    let field = |from: usize, to: usize| b.get(from..to).unwrap_or(&[]);
    let dash = |at: usize| b.get(at) == Some(&b'-');
    let version = field(0, 2);
    let trace_id = field(3, 35);
    let parent_id = field(36, 52);
    let flags = field(53, 55);
    let shape = lower_hex(version)
        && version.len() == 2
        && dash(2)
        && trace_id.len() == 32
        && lower_hex(trace_id)
        && dash(35)
        && parent_id.len() == 16
        && lower_hex(parent_id)
        && dash(52)
        && flags.len() == 2
        && lower_hex(flags);
    if !shape || version == b"ff" {
        return false;
    }
    if trace_id.iter().all(|c| *c == b'0') || parent_id.iter().all(|c| *c == b'0') {
        return false;
    }
    if version == b"00" {
        b.len() == 55
    } else {
        b.len() == 55 || dash(55)
    }
}

/// The tracestate members (trimmed of optional white space, empty ones skipped) with keys.
fn members(ts: &str) -> Vec<(&str, &str)> {
    ts.split(',')
        .map(|m| m.trim_matches(|c| c == ' ' || c == '\t'))
        .filter(|m| !m.is_empty())
        .map(|m| (m.split('=').next().unwrap_or("").trim(), m))
        .collect()
}

fn without<'a>(ms: &[(&'a str, &'a str)], keys: &[&str]) -> Vec<&'a str> {
    ms.iter()
        .filter(|(k, _)| !keys.contains(k))
        .map(|(_, m)| *m)
        .collect()
}

/// Whether `doc` keeps every member of `orig` the answering side does not own. Undeclared
/// own keys: one key, any one, may have changed (the W3C single-vendor entry).
fn tracestate_preserved(orig: &str, doc: &str, own: Option<&[String]>) -> bool {
    let (o, d) = (members(orig), members(doc));
    match own {
        Some(keys) => {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            without(&o, &keys) == without(&d, &keys)
        }
        None => {
            if o == d {
                return true;
            }
            if o.len().saturating_add(d.len()) > MAX_MEMBERS {
                return true;
            }
            o.iter()
                .chain(d.iter())
                .any(|(k, _)| without(&o, &[k]) == without(&d, &[k]))
        }
    }
}

/// A decoded SWP-OBS message whose own fields hold.
pub(super) enum Msg {
    Set(ObsSet),
    Get(bool),
    Doc(ObsDoc),
    Err,
}

fn check_context(traceparent: &str, tracestate: &str, class: &str) -> Result<(), Violation> {
    if traceparent.is_empty() {
        return Err(CONTEXT_HAS_TRACEPARENT.violation(format!(
            "{class} carries trace context ({}) without traceparent",
            if tracestate.is_empty() {
                "none"
            } else {
                "a tracestate"
            }
        )));
    }
    if !traceparent_valid(traceparent) {
        return Err(TRACEPARENT_VALID.violation(format!(
            "{class} traceparent {} is not a valid W3C traceparent",
            show(traceparent.as_bytes())
        )));
    }
    Ok(())
}

/// Decodes by msg_type and checks the trace context each class carries (§4).
pub(super) fn check(msg_type: u64, bare: &[u8]) -> Result<Msg, Violation> {
    match msg_type {
        1 => {
            let m: ObsSet = decode(bare, "obs.ObsSet")?;
            // OBS_SET exists to carry context: it always needs its traceparent (SI).
            check_context(&m.traceparent, &m.tracestate, "OBS_SET")?;
            Ok(Msg::Set(m))
        }
        2 => Ok(Msg::Get(
            decode::<ObsGet>(bare, "obs.ObsGet")?.include_current,
        )),
        3 => {
            let m: ObsDoc = decode(bare, "obs.ObsDoc")?;
            // A document with neither field is a valid "no context" answer (SI).
            if !m.traceparent.is_empty() || !m.tracestate.is_empty() {
                check_context(&m.traceparent, &m.tracestate, "OBS_DOC")?;
            }
            Ok(Msg::Doc(m))
        }
        4 => {
            let _: ObsErr = decode(bare, "obs.ObsErr")?;
            Ok(Msg::Err)
        }
        t => Err(MSG_TYPE.violation(format!("msg_type {t} is not assigned in SWP-OBS"))),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Context {
    traceparent: String,
    /// `None` when too long to keep: not compared.
    tracestate: Option<String>,
    keys: [Option<Digest>; 3],
}

fn key_digests(msg_id: &[u8], task_id: &[u8], rpc_id: &[u8]) -> [Option<Digest>; 3] {
    [msg_id, task_id, rpc_id].map(|k| (!k.is_empty()).then(|| digest(&[k])))
}

/// The context each side set, and the GETs each side has pending.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct State {
    context: PerSide<Option<Context>>,
    gets: PerSide<Queue<bool>>,
}

impl State {
    /// Judges `msg` from `ctx.side`, then records it.
    pub(super) fn observe(&mut self, ctx: &Ctx, msg: Msg) -> Result<(), Violation> {
        let side = ctx.side;
        match msg {
            Msg::Set(s) => {
                let tracestate = (s.tracestate.len() <= MAX_TRACESTATE).then_some(s.tracestate);
                // A traceparent longer than any tracestate kept is not compared either.
                let keep = s.traceparent.len() <= MAX_TRACESTATE;
                *self.context.get_mut(side) = keep.then(|| Context {
                    keys: key_digests(&s.msg_id, &s.task_id, &s.rpc_id),
                    traceparent: s.traceparent,
                    tracestate,
                });
                Ok(())
            }
            Msg::Get(include_current) => {
                self.gets.get_mut(side).push(include_current);
                Ok(())
            }
            Msg::Doc(d) => {
                let asker = side.other();
                // An unsolicited document is not judged against anything.
                let Some(include_current) = self.gets.get(asker).front().copied() else {
                    return Ok(());
                };
                if let Some(c) = self.context.get(asker) {
                    let own = match side {
                        Side::Endpoint => ctx.config.obs_own_tracestate_keys.as_deref(),
                        // The harness owns no tracestate key.
                        Side::Harness => Some(&[][..]),
                    };
                    judge_doc(c, &d, include_current, own)?;
                }
                self.gets.get_mut(asker).pop_front();
                Ok(())
            }
            Msg::Err => {
                // OBS_ERR may refuse a GET or an OBS_SET: it is tied to a GET only when just
                // one is pending; with several, which one it answered is unknown, and the
                // documents that follow are not tied to any.
                let q = self.gets.get_mut(side.other());
                if q.len() == 1 {
                    q.pop_front();
                } else {
                    q.clear();
                }
                Ok(())
            }
        }
    }
}

fn judge_doc(
    c: &Context,
    d: &ObsDoc,
    include_current: bool,
    own: Option<&[String]>,
) -> Result<(), Violation> {
    if d.traceparent.is_empty() && d.tracestate.is_empty() {
        if include_current {
            return Err(DOC_CARRIES_CONTEXT.violation(
                "OBS_DOC without context answers OBS_GET include_current=true after an OBS_SET",
            ));
        }
        return Ok(());
    }
    if d.traceparent != c.traceparent {
        return Err(TRACEPARENT_PRESERVED.violation(format!(
            "OBS_DOC traceparent {} is not the {} that was set",
            show(d.traceparent.as_bytes()),
            show(c.traceparent.as_bytes())
        )));
    }
    if let Some(ts) = &c.tracestate {
        if !tracestate_preserved(ts, &d.tracestate, own) {
            return Err(TRACESTATE_PRESERVED.violation(format!(
                "OBS_DOC tracestate {} does not keep the entries of {}",
                show(d.tracestate.as_bytes()),
                show(ts.as_bytes())
            )));
        }
    }
    if key_digests(&d.msg_id, &d.task_id, &d.rpc_id) != c.keys {
        return Err(CORRELATION_PRESERVED.violation(
            "OBS_DOC correlation keys (msg_id, task_id, rpc_id) differ from the OBS_SET's",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{enc, full_config, sequence_property, Run, Step};
    use super::super::{Config, Side::*};
    use super::*;
    use proptest::prelude::*;

    const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn set(tp: &str, ts: &str) -> ObsSet {
        ObsSet {
            traceparent: tp.into(),
            tracestate: ts.into(),
            msg_id: b"m".to_vec().into(),
            task_id: Default::default(),
            rpc_id: Default::default(),
        }
    }
    fn doc(tp: &str, ts: &str) -> ObsDoc {
        ObsDoc {
            traceparent: tp.into(),
            tracestate: ts.into(),
            msg_id: b"m".to_vec().into(),
            task_id: Default::default(),
            rpc_id: Default::default(),
        }
    }
    fn get(include: bool) -> ObsGet {
        ObsGet {
            include_current: include,
        }
    }

    #[test]
    fn traceparent_format() {
        assert!(traceparent_valid(TP));
        assert!(traceparent_valid(
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"
        ));
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(!traceparent_valid(bad), "{bad}");
        }
    }

    #[test]
    fn msg_type_must_be_assigned() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Harness, 5, &set(TP, ""), "obs.msg-type-assigned");
        r.ok(Harness, 1, &set(TP, ""));
    }

    #[test]
    fn context_carries_a_valid_traceparent() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Harness, 1, &set("", ""), "obs.context-has-traceparent");
        r.err(Harness, 1, &set("", "a=1"), "obs.context-has-traceparent");
        r.err(Harness, 1, &set("00-zz", ""), "obs.traceparent-valid");
        r.err(Endpoint, 3, &doc("", "a=1"), "obs.context-has-traceparent");
        r.err(Endpoint, 3, &doc("nope", ""), "obs.traceparent-valid");
        r.ok(Endpoint, 3, &doc("", ""));
        r.ok(Harness, 4, &ObsErr::default());
    }

    #[test]
    fn a_doc_answering_include_current_carries_the_context() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &set(TP, ""));
        r.ok(Harness, 2, &get(true));
        r.err(Endpoint, 3, &doc("", ""), "obs.doc-carries-context");
        r.ok(Endpoint, 3, &doc(TP, ""));
        r.ok(Harness, 2, &get(false));
        r.ok(Endpoint, 3, &doc("", ""));
    }

    #[test]
    fn a_doc_returns_the_traceparent_exactly() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &set(TP, ""));
        r.ok(Harness, 2, &get(true));
        let other = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b8-01";
        r.err(Endpoint, 3, &doc(other, ""), "obs.traceparent-preserved");
        r.ok(Endpoint, 3, &doc(TP, ""));
        // Unsolicited documents are not judged.
        r.ok(Endpoint, 3, &doc(other, ""));
    }

    #[test]
    fn a_doc_keeps_the_tracestate_entries_it_does_not_own() {
        let own = Config {
            obs_own_tracestate_keys: Some(vec!["sut".into()]),
            ..Config::default()
        };
        let mut r = Run::with(PROFILE_ID, own);
        r.ok(Harness, 1, &set(TP, "a=1,b=2"));
        r.ok(Harness, 2, &get(true));
        r.err(Endpoint, 3, &doc(TP, "b=2,a=1"), "obs.tracestate-preserved");
        r.err(Endpoint, 3, &doc(TP, "a=1"), "obs.tracestate-preserved");
        r.err(Endpoint, 3, &doc(TP, "a=9,b=2"), "obs.tracestate-preserved");
        r.ok(Endpoint, 3, &doc(TP, "sut=x, a=1 ,b=2"));
        // With no own key declared as such, one key may have changed, no more.
        let mut u = Run::new(PROFILE_ID);
        u.ok(Harness, 1, &set(TP, "a=1,b=2,c=3"));
        u.ok(Harness, 2, &get(true));
        u.err(
            Endpoint,
            3,
            &doc(TP, "a=9,b=9,c=3"),
            "obs.tracestate-preserved",
        );
        u.ok(Endpoint, 3, &doc(TP, "x=0,a=1,b=2,c=3"));
        u.ok(Harness, 2, &get(true));
        u.ok(Endpoint, 3, &doc(TP, "b=7,a=1,c=3"));
        // An empty own-key list asks for the members unchanged.
        let mut s = Run::with(
            PROFILE_ID,
            Config {
                obs_own_tracestate_keys: Some(vec![]),
                ..Config::default()
            },
        );
        s.ok(Harness, 1, &set(TP, "a=1"));
        s.ok(Harness, 2, &get(true));
        s.err(Endpoint, 3, &doc(TP, "x=0,a=1"), "obs.tracestate-preserved");
    }

    #[test]
    fn a_doc_carries_the_correlation_keys_of_the_set() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &set(TP, ""));
        r.ok(Harness, 2, &get(true));
        let mut d = doc(TP, "");
        d.msg_id = b"other".to_vec().into();
        r.err(Endpoint, 3, &d, "obs.correlation-preserved");
        d.msg_id = Default::default();
        r.err(Endpoint, 3, &d, "obs.correlation-preserved");
        r.ok(Endpoint, 3, &doc(TP, ""));
    }

    fn step() -> impl Strategy<Value = Step> {
        let tp = prop::sample::select(vec![
            TP,
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b8-01",
            "",
            "x",
        ]);
        let ts = prop::sample::select(vec!["", "a=1", "a=1,b=2", "own=3,a=1"]);
        let side = prop::sample::select(vec![Harness, Endpoint]);
        let msg = prop_oneof![
            (tp.clone(), ts.clone()).prop_map(|(p, s)| (1u64, enc(&set(p, s)))),
            any::<bool>().prop_map(|i| (2u64, enc(&get(i)))),
            (tp, ts).prop_map(|(p, s)| (3u64, enc(&doc(p, s)))),
            Just((4u64, enc(&ObsErr::default()))),
            (0u64..6, prop::collection::vec(any::<u8>(), 0..16)),
        ];
        (0u64..100, side, msg).prop_map(|(t, s, (mt, b))| (t, s, mt, b))
    }

    proptest! {
        #[test]
        fn sequences_keep_the_state_on_refusal(steps in prop::collection::vec(step(), 0..40)) {
            sequence_property(PROFILE_ID, &Config::default(), &steps);
            sequence_property(PROFILE_ID, &full_config(), &steps);
        }

        #[test]
        fn traceparent_validation_never_panics(s in ".{0,80}") {
            let _ = traceparent_valid(&s);
        }
    }
}
