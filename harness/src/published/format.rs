//! The two metadata shapes of the spec kit's published vectors, read into one typed form:
//! `<id>.json` with `vector_id` and `expected {outcome, code, expected_error_code,
//! evidence_type, rejection_reason, fixture, assertions}`, and the `poc_*` shape `{name, bin,
//! expect {ok, code, version, profile_id, msg_type, min_payload_len}}`. Keys under
//! `expected`, `expect` and `assertions` that are not understood are problems, never
//! skipped: an expectation the harness ignored would look like one it checked.

use crate::frames::ErrorCode;
use serde_json::{Map, Value};

/// What the fixture expects of its frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The frame is accepted.
    Accept,
    /// The frame is rejected with one of these canonical codes (never empty): the
    /// `expected_error_code`, or the codes the `code` alias stands for.
    Reject(Vec<ErrorCode>),
    /// A publication or process check, with no frame (`outcome: process_check`).
    Process,
}

pub use crate::catalog::receiver::StatedLimits;

/// Envelope values an accept asserts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Asserted {
    /// `version`.
    pub version: Option<u64>,
    /// `profile_id`.
    pub profile_id: Option<u64>,
    /// `msg_type`.
    pub msg_type: Option<u64>,
    /// `payload_len`: exactly this many payload octets.
    pub payload_len: Option<u64>,
    /// `min_payload_len` (poc): at least this many.
    pub min_payload_len: Option<u64>,
}

/// One fixture's metadata, whichever shape it came in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metadata {
    /// `vector_id` or `name`.
    pub id: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `group`.
    pub group: Option<String>,
    /// What it expects; `None` when the metadata does not say (a problem).
    pub outcome: Option<Outcome>,
    /// `code` as written (`OK`, an alias or a canonical code).
    pub code: Option<String>,
    /// `evidence_type`.
    pub evidence_type: Option<String>,
    /// `rejection_reason`.
    pub rejection_reason: Option<String>,
    /// The `.bin` file named by the metadata.
    pub bin_file: Option<String>,
    /// The `.evidence.md` file named by the metadata.
    pub evidence_file: Option<String>,
    /// Envelope values asserted.
    pub asserted: Asserted,
    /// Limits the fixture assumes.
    pub limits: StatedLimits,
    /// `policy.timestamp_required`.
    pub timestamp_required: Option<bool>,
    /// `assertions.profile` (`A2A`, `MCPMAP`, `RPC`, ...): the fixture is about a profile.
    pub profile: Option<String>,
    /// The `poc_*` shape.
    pub poc: bool,
    /// Everything that is not understood, each naming the key.
    pub problems: Vec<String>,
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Metadata {
    fn text(&mut self, m: &Map<String, Value>, key: &str, at: &str) -> Option<String> {
        match m.get(key)? {
            Value::String(s) => Some(s.clone()),
            other => {
                self.problems
                    .push(format!("{at}{key} is {}, expected a string", kind(other)));
                None
            }
        }
    }

    fn num(&mut self, m: &Map<String, Value>, key: &str, at: &str) -> Option<u64> {
        let v = m.get(key)?;
        match v.as_u64() {
            Some(n) => Some(n),
            None => {
                self.problems.push(format!(
                    "{at}{key} is {}, expected a non-negative integer",
                    if v.is_number() {
                        "negative or fractional"
                    } else {
                        kind(v)
                    }
                ));
                None
            }
        }
    }

    fn object<'v>(&mut self, v: &'v Value, at: &str) -> Option<&'v Map<String, Value>> {
        match v {
            Value::Object(m) => Some(m),
            other => {
                self.problems
                    .push(format!("{at} is {}, expected an object", kind(other)));
                None
            }
        }
    }

    fn only(&mut self, m: &Map<String, Value>, known: &[&str], at: &str) {
        for k in m.keys().filter(|k| !known.contains(&k.as_str())) {
            self.problems.push(format!(
                "{at}{k} is not understood (expected one of {})",
                known.join(", ")
            ));
        }
    }
}

/// Reads a metadata document; every problem found is in `problems`.
pub fn parse(doc: &Value) -> Metadata {
    let mut m = Metadata::default();
    let Some(top) = m.object(doc, "the metadata") else {
        return m;
    };
    if let Some(e) = top.get("expected") {
        m.id = m.text(top, "vector_id", "");
        m.description = m.text(top, "description", "");
        m.group = m.text(top, "group", "");
        if let Some(e) = m.object(e, "expected") {
            expected(&mut m, e);
        }
    } else if let Some(e) = top.get("expect") {
        m.poc = true;
        m.id = m.text(top, "name", "");
        m.bin_file = m.text(top, "bin", "");
        if let Some(e) = m.object(e, "expect") {
            poc(&mut m, e);
        }
    } else {
        m.problems.push(
            "neither `expected` (vector metadata) nor `expect` (poc shape) is present".into(),
        );
    }
    m
}

/// The published `code`/`expected_error_code` pair of a reject, as canonical codes.
fn reject_codes(m: &mut Metadata, code: Option<&str>, canonical: Option<&str>) -> Vec<ErrorCode> {
    let canonical = canonical.and_then(|c| match c.parse::<ErrorCode>() {
        Ok(c) => Some(c),
        Err(e) => {
            m.problems.push(format!("expected_error_code: {e}"));
            None
        }
    });
    // `code` is a runtime alias (error-codes.md §3) or, in places, a canonical name.
    let alias = code.and_then(|c| match c.parse::<ErrorCode>() {
        Ok(c) => Some(vec![c]),
        Err(_) => match ErrorCode::from_alias(c) {
            Ok(cs) => Some(cs.to_vec()),
            Err(e) => {
                m.problems.push(format!("code: {e}"));
                None
            }
        },
    });
    match (canonical, alias) {
        (Some(c), Some(a)) if !a.contains(&c) => {
            m.problems.push(format!(
                "code {:?} does not stand for expected_error_code {c}",
                code.unwrap_or_default()
            ));
            vec![c]
        }
        // The canonical code is the precise one; the alias may stand for several.
        (Some(c), _) => vec![c],
        (None, Some(a)) => a,
        (None, None) => {
            if m.problems.is_empty() {
                m.problems
                    .push("a reject names no code (expected_error_code or code)".into());
            }
            Vec::new()
        }
    }
}

fn expected(m: &mut Metadata, e: &Map<String, Value>) {
    m.only(
        e,
        &[
            "outcome",
            "code",
            "expected_error_code",
            "evidence_type",
            "rejection_reason",
            "fixture",
            "assertions",
        ],
        "expected.",
    );
    m.code = m.text(e, "code", "expected.");
    let eec = m.text(e, "expected_error_code", "expected.");
    m.evidence_type = m.text(e, "evidence_type", "expected.");
    m.rejection_reason = m.text(e, "rejection_reason", "expected.");
    if let Some(t) = &m.evidence_type {
        if !["runtime", "mixed", "process"].contains(&t.as_str()) {
            m.problems.push(format!(
                "expected.evidence_type {t:?} is not runtime, mixed or process"
            ));
        }
    }
    if let Some(f) = e
        .get("fixture")
        .and_then(|f| m.object(f, "expected.fixture"))
    {
        m.only(f, &["bin_file", "evidence_file"], "expected.fixture.");
        m.bin_file = m.text(f, "bin_file", "expected.fixture.");
        m.evidence_file = m.text(f, "evidence_file", "expected.fixture.");
    }
    let outcome = m.text(e, "outcome", "expected.");
    m.outcome = match outcome.as_deref() {
        Some("accept") => {
            if let Some(c) = m.code.as_deref().filter(|c| *c != "OK") {
                m.problems
                    .push(format!("expected.code is {c:?} on an accept, expected OK"));
            }
            Some(Outcome::Accept)
        }
        Some("reject") => {
            let code = m.code.clone();
            Some(Outcome::Reject(reject_codes(
                m,
                code.as_deref(),
                eec.as_deref(),
            )))
        }
        Some("process_check") => Some(Outcome::Process),
        Some(o) => {
            m.problems.push(format!(
                "expected.outcome {o:?} is not accept, reject or process_check"
            ));
            None
        }
        None => {
            m.problems.push("expected.outcome is missing".into());
            None
        }
    };
    if let Some(a) = e
        .get("assertions")
        .and_then(|a| m.object(a, "expected.assertions"))
    {
        // A process check's assertions name documents and reviews, not frames.
        if m.outcome != Some(Outcome::Process) {
            assertions(m, a);
        }
    }
}

fn assertions(m: &mut Metadata, a: &Map<String, Value>) {
    const AT: &str = "assertions.";
    m.only(
        a,
        &[
            "envelope",
            "limits",
            "policy",
            "encoding",
            "binding",
            "mapping",
            "scenario",
            "artifact",
            "profile",
            "profile_id",
            "msg_type",
            "semantic_case",
        ],
        AT,
    );
    if let Some(env) = a
        .get("envelope")
        .and_then(|x| m.object(x, "assertions.envelope"))
    {
        const ENV: &str = "assertions.envelope.";
        m.only(
            env,
            &[
                "version",
                "profile_id",
                "msg_type",
                "payload_len",
                "min_msg_id_bytes",
            ],
            ENV,
        );
        m.asserted.version = m.num(env, "version", ENV);
        m.asserted.profile_id = m.num(env, "profile_id", ENV);
        m.asserted.msg_type = m.num(env, "msg_type", ENV);
        m.asserted.payload_len = m.num(env, "payload_len", ENV);
        m.limits.min_msg_id_bytes = m.num(env, "min_msg_id_bytes", ENV);
    }
    if let Some(l) = a
        .get("limits")
        .and_then(|x| m.object(x, "assertions.limits"))
    {
        const LIM: &str = "assertions.limits.";
        m.only(
            l,
            &[
                "max_frame_bytes",
                "min_msg_id_bytes",
                "max_msg_id_bytes",
                "max_ext_bytes",
                "max_payload_bytes",
            ],
            LIM,
        );
        m.limits.max_frame_bytes = m.num(l, "max_frame_bytes", LIM);
        m.limits.max_msg_id_bytes = m.num(l, "max_msg_id_bytes", LIM);
        m.limits.max_ext_bytes = m.num(l, "max_ext_bytes", LIM);
        m.limits.max_payload_bytes = m.num(l, "max_payload_bytes", LIM);
        if let Some(n) = m.num(l, "min_msg_id_bytes", LIM) {
            m.limits.min_msg_id_bytes = Some(n);
        }
    }
    // Some fixtures state the policy in words ("timestamp freshness disabled and
    // documented"): a sentence about freshness is read for whether it is on; any other
    // sentence describes a process and asserts nothing about the receiver.
    if let Some(Value::String(text)) = a.get("policy") {
        let t = text.to_ascii_lowercase();
        if t.contains("freshness") || t.contains("timestamp") {
            let off = ["disabled", "off", "not enforced", "not required"]
                .iter()
                .any(|w| t.contains(w));
            let on = ["enabled", "enforced", "required"]
                .iter()
                .any(|w| t.contains(w));
            match (off, on) {
                (true, _) => m.timestamp_required = Some(false),
                (false, true) => m.timestamp_required = Some(true),
                (false, false) => m.problems.push(format!(
                    "assertions.policy {text:?} speaks of timestamps without saying whether freshness is enforced"
                )),
            }
        }
    } else if let Some(p) = a
        .get("policy")
        .and_then(|x| m.object(x, "assertions.policy"))
    {
        m.only(p, &["timestamp_required"], "assertions.policy.");
        match p.get("timestamp_required") {
            Some(Value::Bool(b)) => m.timestamp_required = Some(*b),
            Some(other) => m.problems.push(format!(
                "assertions.policy.timestamp_required is {}, expected a boolean",
                kind(other)
            )),
            None => {}
        }
    }
    // Profile fixtures name the envelope values at the top of `assertions`.
    if let Some(p) = m.num(a, "profile_id", AT) {
        m.asserted.profile_id = Some(p);
    }
    if let Some(t) = m.num(a, "msg_type", AT) {
        m.asserted.msg_type = Some(t);
    }
    m.profile = m.text(a, "profile", AT);
    for (key, want) in [("encoding", "E1"), ("binding", "S1")] {
        if let Some(v) = m.text(a, key, AT) {
            if v != want {
                m.problems.push(format!(
                    "assertions.{key} is {v:?}; this harness runs {want} fixtures only"
                ));
            }
        }
    }
}

fn poc(m: &mut Metadata, e: &Map<String, Value>) {
    const AT: &str = "expect.";
    m.only(
        e,
        &[
            "ok",
            "code",
            "version",
            "profile_id",
            "msg_type",
            "min_payload_len",
        ],
        AT,
    );
    m.code = m.text(e, "code", AT);
    m.asserted.version = m.num(e, "version", AT);
    m.asserted.profile_id = m.num(e, "profile_id", AT);
    m.asserted.msg_type = m.num(e, "msg_type", AT);
    m.asserted.min_payload_len = m.num(e, "min_payload_len", AT);
    m.outcome = match e.get("ok") {
        Some(Value::Bool(true)) => {
            if let Some(c) = m.code.as_deref().filter(|c| *c != "OK") {
                m.problems
                    .push(format!("expect.code is {c:?} with ok true, expected OK"));
            }
            Some(Outcome::Accept)
        }
        Some(Value::Bool(false)) => {
            let code = m.code.clone();
            Some(Outcome::Reject(reject_codes(m, code.as_deref(), None)))
        }
        Some(other) => {
            m.problems
                .push(format!("expect.ok is {}, expected a boolean", kind(other)));
            None
        }
        None => {
            m.problems.push("expect.ok is missing".into());
            None
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_shapes_read_into_one_form() {
        let m = parse(&json!({
            "vector_id": "core_0012_x", "category": "core",
            "expected": {"outcome": "reject", "code": "INVALID_ENVELOPE",
                "expected_error_code": "ERR_INVALID_ENVELOPE", "evidence_type": "runtime",
                "fixture": {"bin_file": "core_0012_x.bin"},
                "assertions": {"envelope": {"min_msg_id_bytes": 8, "version": 1},
                               "limits": {"max_payload_bytes": 1024}}}
        }));
        assert!(m.problems.is_empty(), "{:?}", m.problems);
        assert_eq!(
            m.outcome,
            Some(Outcome::Reject(vec![ErrorCode::InvalidEnvelope]))
        );
        assert_eq!(m.limits.max_payload_bytes, Some(1024));
        assert_eq!(m.limits.min_msg_id_bytes, Some(8));
        let p = parse(&json!({"name": "poc_0006_x", "bin": "poc_0006_x.bin",
            "expect": {"ok": false, "code": "INVALID_FRAME"}}));
        assert!(p.poc && p.problems.is_empty());
        assert_eq!(
            p.outcome,
            Some(Outcome::Reject(vec![
                ErrorCode::InvalidFrame,
                ErrorCode::FrameTooLarge
            ]))
        );
    }

    #[test]
    fn what_is_not_understood_is_named() {
        let m = parse(&json!({"vector_id": "x_1", "expected": {
            "outcome": "maybe", "latency": 3,
            "assertions": {"envelope": {"priority": 1}, "policy": {"rate": 2}, "encoding": "E2"}}}));
        assert_eq!(
            m.problems,
            [
                "expected.latency is not understood (expected one of outcome, code, expected_error_code, evidence_type, rejection_reason, fixture, assertions)",
                "expected.outcome \"maybe\" is not accept, reject or process_check",
                "assertions.envelope.priority is not understood (expected one of version, profile_id, msg_type, payload_len, min_msg_id_bytes)",
                "assertions.policy.rate is not understood (expected one of timestamp_required)",
                "assertions.encoding is \"E2\"; this harness runs E1 fixtures only",
            ]
        );
        let m = parse(
            &json!({"vector_id": "x_2", "expected": {"outcome": "reject",
            "code": "INVALID_FRAME", "expected_error_code": "ERR_UNSUPPORTED_VERSION"}}),
        );
        assert_eq!(
            m.problems,
            ["code \"INVALID_FRAME\" does not stand for expected_error_code ERR_UNSUPPORTED_VERSION"]
        );
        assert_eq!(
            parse(&json!([1])).problems,
            ["the metadata is an array, expected an object"]
        );
    }

    #[test]
    fn a_policy_in_words_is_read_for_freshness_only() {
        let with = |policy: &str| {
            parse(
                &json!({"vector_id": "s1_1", "expected": {"outcome": "accept",
                "assertions": {"binding": "S1", "policy": policy}}}),
            )
        };
        let m = with("timestamp freshness disabled and documented");
        assert!(m.problems.is_empty(), "{:?}", m.problems);
        assert_eq!(m.timestamp_required, Some(false));
        assert_eq!(
            with("timestamp freshness enforced").timestamp_required,
            Some(true)
        );
        let m = with("backward-compatibility-review");
        assert!(m.problems.is_empty() && m.timestamp_required.is_none());
        assert_eq!(with("timestamps, somehow").problems.len(), 1);
    }
}
