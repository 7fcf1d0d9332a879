//! The vector file format's shape (`docs/vector-format.md`): the flat [`VectorFile`] and
//! [`StepFile`] a YAML file deserializes into and the checked-in JSON Schema is generated
//! from, and their conversion into the typed [`Vector`], whose body is its methods'
//! family's own. The file stays flat so every vector and the schema stay as they were.

use super::body::{Body, Family, FramesBody, JsonRpcBody, ProxyBody, Step, TranslateBody};
use super::expect::{Expect, Expectations};
use super::send::{Num, Send};
use super::terms::{Side, Topology};
use super::vector::{Applicability, ConnectSpec, Header, Method, Shape, Vector};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One test vector: one file under `vectors/<namespace>/`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "Vector")]
pub struct VectorFile {
    /// Unique id, `<namespace>_<4 digits>_<case>`; the file is named `<id>.yaml`.
    pub id: String,
    /// One line saying what is checked.
    pub title: String,
    /// The namespace (`core`, `e1`, ...); the vector lives in `vectors/<namespace>/`.
    pub namespace: String,
    /// Requirement IDs (or their spec-kit trace aliases) this vector exercises.
    pub requirements: Vec<String>,
    /// Methods the vector supports.
    pub methods: Vec<Method>,
    /// Conditions on what the SUT claims; the vector is not applicable otherwise.
    #[serde(default)]
    pub applies_when: Applicability,
    /// Why the vector exists or how to read it; free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// How the session method connects for this vector (TLS variants for S1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<ConnectSpec>,
    /// `intermediary`: the SUT sits between the harness's client and the harness's
    /// upstream server (relays, gateways, proxies). Default `endpoint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<Topology>,
    /// How an MCP proxy under test is configured for this vector (method `mcp_proxy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<super::mcpx::ProxySpec>,
    /// What the server must declare and which versions and transport the vector applies to
    /// (method `mcp_native`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<super::mcpnative::McpVectorSpec>,
    /// What a trivial SUT can pass of this vector (session method): `reject-only` when
    /// every step expects a reject (or nothing at all), `accept-only` when every step
    /// expects an accept confirmed without an answer, nothing or silence. The catalog check
    /// holds the mark
    /// to the steps, and the trivial-SUT test (`harness/tests/trivial.rs`) fails when a
    /// trivial SUT passes a vector not marked with its shape: a judge that credits the wrong
    /// frame shows up there first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
    /// The vector needs the SUT to itself: `run --jobs N` runs it alone, after the others
    /// (a rate limit counts every frame the SUT receives, not only this vector's).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclusive: bool,
    /// The steps, in order.
    pub steps: Vec<StepFile>,
}

/// One step: an action and what must be observed after it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "Step")]
pub struct StepFile {
    /// What this step does, for the transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Octets to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send: Option<Send>,
    /// End the stream (close the write side) instead of sending.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub end: bool,
    /// Write a forged TLS application-data record under the TLS layer (session, TLS only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub corrupt_record: bool,
    /// Send again the last TLS record the harness wrote (a replay; session, TLS only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replay_record: bool,
    /// Which connection sends (intermediary topology; default `client`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<Side>,
    /// This step sends and reads on a second connection to the endpoint, opened with the
    /// harness's second client identity (session, TLS, `tls.second_identity`) and open for
    /// the whole vector beside the first: what one peer does must not change what the
    /// other may do (tenant-scoped ids, authorization).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub second_connection: bool,
    /// The requirements this step tests, when narrower than the vector's (IDs or aliases):
    /// a failure of this step fails only these. Omitted, the step tests the vector's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requirements: Vec<String>,
    /// Run this step this many times (each with a fresh default msg_id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Num>,
    /// Receiver clock for this step, in ms after `${NOW_MS}` (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<Num>,
    /// An `mcp_native` session action (open, request, pick, ...) instead of `send`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<super::mcpnative::McpStep>,
    /// What must follow, in order: one expectation or a list. Only an `mcp` step may leave
    /// it out (its own checks then apply).
    #[serde(default)]
    pub expect: Expectations,
}

/// Why a vector file's blocks do not fit its methods: which block belongs to which family.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// `methods` is empty, so no family owns the steps.
    #[error("at least one method (codec, session) is needed")]
    NoMethods,
    /// Two methods of different families.
    #[error("methods {first} and {second} cannot be combined: {first} belongs with {}, {second} with {}", Family::of(*.first).methods(), Family::of(*.second).methods())]
    Mixed {
        /// The first method.
        first: Method,
        /// The first of another family.
        second: Method,
    },
    /// A vector-level block of another family.
    #[error("`{block}` is for {owner} vectors; this vector's methods are {family}")]
    Block {
        /// The block's key.
        block: &'static str,
        /// The methods it belongs to.
        owner: &'static str,
        /// The methods the vector has.
        family: &'static str,
    },
    /// A step's action or expectation of another family.
    #[error("step {step}: `{what}` is for {owner} vectors; this vector's methods are {family}")]
    Step {
        /// The step, from 1.
        step: usize,
        /// The action's or expectation's key.
        what: &'static str,
        /// The methods it belongs to.
        owner: &'static str,
        /// The methods the vector has.
        family: &'static str,
    },
}

impl BodyError {
    /// The text to locate the problem by in the file, for its line and column.
    pub fn needle(&self) -> String {
        match self {
            BodyError::NoMethods | BodyError::Mixed { .. } => "methods:".into(),
            BodyError::Block { block, .. } => format!("{block}:"),
            BodyError::Step { what, .. } => (*what).into(),
        }
    }
}

/// The key an expectation is written with, and the family it belongs to (the first that
/// takes it, for one several share).
fn owner(e: &Expect) -> (&'static str, Family) {
    use Family::*;
    match e {
        Expect::Accept(_) => ("accept", Frames),
        Expect::Reject(_) => ("reject", Frames),
        Expect::Nothing => ("nothing", Frames),
        Expect::Close => ("close", Frames),
        Expect::A2aTasks(_) => ("a2a_tasks", Frames),
        Expect::Silence(_) => ("silence", Frames),
        Expect::Flow(_) => ("flow", Frames),
        Expect::Reply(_) => ("reply", Frames),
        Expect::Denied(_) => ("denied", Frames),
        Expect::Answer(_) => ("answer", Frames),
        Expect::ErrorJson(_) => ("error_json", Frames),
        Expect::Stream(_) => ("stream", Frames),
        Expect::Identity => ("identity", Frames),
        Expect::Forwarded => ("forwarded", Frames),
        Expect::ForwardedPayload => ("forwarded_payload", Frames),
        Expect::Response(_) => ("response", JsonRpc),
        Expect::NoResponse(_) => ("no_response", JsonRpc),
        Expect::Mcp(_) => ("mcp", JsonRpc),
        Expect::Translated(_) => ("translated", Translate),
        Expect::TranslationError(_) => ("translation_error", Translate),
        Expect::OneOf(_) => ("one_of", Translate),
        Expect::Arrives(_) => ("arrives", McpProxy),
    }
}

/// The steps of family `family`, each expectation converted to its own type.
fn steps<E: TryFrom<Expect, Error = Expect>>(
    family: Family,
    steps: Vec<StepFile>,
) -> Result<Vec<Step<E>>, BodyError> {
    steps
        .into_iter()
        .enumerate()
        .map(|(i, s)| s.typed(family, i + 1))
        .collect()
}

impl StepFile {
    /// This step, number `n` of a vector of `family`, with its expectations converted to
    /// the family's own; an action or expectation of another family is refused.
    pub fn typed<E: TryFrom<Expect, Error = Expect>>(
        self,
        family: Family,
        n: usize,
    ) -> Result<Step<E>, BodyError> {
        let wrong = |what: &'static str, owner: Family| BodyError::Step {
            step: n,
            what,
            owner: owner.methods(),
            family: family.methods(),
        };
        if self.mcp.is_some() && family != Family::JsonRpc {
            return Err(wrong("mcp", Family::JsonRpc));
        }
        let list = match self.expect {
            Expectations::Many(v) => v,
            Expectations::One(e) => vec![*e],
        };
        let expect = list
            .into_iter()
            .map(|e| {
                E::try_from(e).map_err(|e| {
                    let (key, fam) = owner(&e);
                    wrong(key, fam)
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Step {
            note: self.note,
            send: self.send,
            end: self.end,
            corrupt_record: self.corrupt_record,
            replay_record: self.replay_record,
            side: self.side,
            second_connection: self.second_connection,
            requirements: self.requirements,
            repeat: self.repeat,
            at_ms: self.at_ms,
            mcp: self.mcp,
            expect,
        })
    }
}

impl TryFrom<VectorFile> for Vector {
    type Error = BodyError;

    fn try_from(f: VectorFile) -> Result<Vector, BodyError> {
        let first = *f.methods.first().ok_or(BodyError::NoMethods)?;
        let family = Family::of(first);
        if let Some(second) = f.methods.iter().find(|m| Family::of(**m) != family) {
            return Err(BodyError::Mixed {
                first,
                second: *second,
            });
        }
        let block = |block: &'static str, owner: &'static str| BodyError::Block {
            block,
            owner,
            family: family.methods(),
        };
        // Each block is refused by the families it is not for, naming the ones it is for.
        let frames = Family::Frames.methods();
        let (topology_owner, jsonrpc, proxy) = (
            "codec, session and mcp_proxy",
            Family::JsonRpc.methods(),
            Family::McpProxy.methods(),
        );
        if f.connect.is_some() && family != Family::Frames {
            return Err(block("connect", frames));
        }
        if f.shape.is_some() && family != Family::Frames {
            return Err(block("shape", frames));
        }
        if f.topology.is_some() && !matches!(family, Family::Frames | Family::McpProxy) {
            return Err(block("topology", topology_owner));
        }
        if f.mcp.is_some() && family != Family::JsonRpc {
            return Err(block("mcp", jsonrpc));
        }
        if f.proxy.is_some() && family != Family::McpProxy {
            return Err(block("proxy", proxy));
        }
        let body = match family {
            Family::Frames => Body::Frames(FramesBody {
                connect: f.connect,
                topology: f.topology,
                shape: f.shape,
                steps: steps(family, f.steps)?,
            }),
            Family::JsonRpc => Body::JsonRpc(JsonRpcBody {
                mcp: f.mcp,
                steps: steps(family, f.steps)?,
            }),
            Family::Translate => Body::Translate(TranslateBody {
                steps: steps(family, f.steps)?,
            }),
            Family::McpProxy => Body::McpProxy(ProxyBody {
                proxy: f.proxy,
                topology: f.topology,
                steps: steps(family, f.steps)?,
            }),
        };
        Ok(Vector {
            header: Header {
                id: f.id,
                title: f.title,
                namespace: f.namespace,
                requirements: f.requirements,
                methods: f.methods,
                applies_when: f.applies_when,
                notes: f.notes,
                exclusive: f.exclusive,
                fixture: None,
            },
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::body::{FrameExpect, TranslateExpect};

    fn read(yaml: &str) -> Result<Vector, BodyError> {
        let file: VectorFile = serde_saphyr::from_str(yaml).expect("a vector file");
        Vector::try_from(file)
    }

    const HEAD: &str = "id: x_0001_y\ntitle: t\nnamespace: x\nrequirements: [R]\n";

    #[test]
    fn each_family_gets_its_own_body() {
        let v = read(&format!(
            "{HEAD}methods: [codec, session]\nshape: reject-only\nsteps:\n  - send: {{frame: {{}}}}\n    expect: {{reject: ERR_X}}\n"
        ))
        .expect("a frames vector");
        let Body::Frames(b) = &v.body else {
            panic!("{:?}", v.body)
        };
        assert!(matches!(b.steps[0].expect[..], [FrameExpect::Reject(_)]));
        let v = read(&format!(
            "{HEAD}methods: [translate]\nsteps:\n  - send: {{translate: {{from: \"2025-11-25\", to: \"2025-06-18\", direction: client_to_server, message: {{}}}}}}\n    expect: {{one_of: [{{translated: {{messages: []}}}}, {{translation_error: {{kind: unrepresentable}}}}]}}\n"
        ))
        .expect("a translate vector");
        let Body::Translate(b) = &v.body else {
            panic!("{:?}", v.body)
        };
        assert!(matches!(&b.steps[0].expect[..], [TranslateExpect::OneOf(a)] if a.len() == 2));
    }

    #[test]
    fn another_familys_part_is_refused_by_name() {
        let e = read(&format!(
            "{HEAD}methods: [mcp_native]\nconnect: {{plaintext: true}}\nsteps: []\n"
        ));
        assert_eq!(
            e.as_ref().map_err(BodyError::needle).err(),
            Some("connect:".into())
        );
        let e = read(&format!(
            "{HEAD}methods: [session]\nsteps:\n  - send: {{frame: {{}}}}\n    expect: [close, {{arrives: {{side: client, json: {{}}}}}}]\n"
        ));
        assert_eq!(
            e.err().map(|e| e.to_string()),
            Some("step 1: `arrives` is for mcp_proxy vectors; this vector's methods are codec and session".into())
        );
        let e = read(&format!("{HEAD}methods: []\nsteps: []\n"));
        assert_eq!(e.err(), Some(BodyError::NoMethods));
    }
}
