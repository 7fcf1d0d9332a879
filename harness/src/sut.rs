//! The SUT manifest (`docs/sut-manifest.md`): what a system under test claims (PICS) and
//! its limits, policies and how to reach it (PIXIT), loaded and checked.

use crate::catalog::vector::{Method, UnknownProfile};
use crate::expr::Params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How the harness reaches the SUT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The reference implementation linked into the harness.
    Builtin,
    /// A process speaking the testee protocol on stdin/stdout.
    Testee,
}

/// How to start a process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Start {
    /// Program; `${SWP_REF}` stands for the reference binary built from this workspace.
    pub command: String,
    /// Arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory, relative to the manifest's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
}

/// What the SUT claims.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Claims {
    /// Conformance class, e.g. `C0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Profile IDs implemented.
    #[serde(default)]
    pub profiles: Vec<u64>,
}

/// Declared limits, named as in the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// `MAX_FRAME_BYTES`.
    #[serde(rename = "MAX_FRAME_BYTES")]
    pub max_frame_bytes: u32,
    /// `MIN_MSG_ID_BYTES`.
    #[serde(rename = "MIN_MSG_ID_BYTES")]
    pub min_msg_id_bytes: u64,
    /// `MAX_MSG_ID_BYTES`.
    #[serde(rename = "MAX_MSG_ID_BYTES")]
    pub max_msg_id_bytes: u64,
    /// `MAX_EXT_BYTES`.
    #[serde(rename = "MAX_EXT_BYTES")]
    pub max_ext_bytes: u64,
    /// `MAX_PAYLOAD_BYTES`.
    #[serde(rename = "MAX_PAYLOAD_BYTES")]
    pub max_payload_bytes: u64,
}

/// A frame-rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    /// Frames per window.
    pub frames: u32,
    /// Window in ms.
    pub window_ms: u64,
}

/// Declared policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Whether `ts_unix_ms` freshness is enforced.
    pub timestamp_freshness: bool,
    /// `MAX_CLOCK_SKEW_MS`.
    #[serde(default = "default_skew")]
    pub max_clock_skew_ms: u64,
    /// Unknown-profile handling.
    #[serde(default = "default_unknown_profile")]
    pub unknown_profile: UnknownProfile,
    /// Frame-rate limit, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateLimit>,
}

fn default_skew() -> u64 {
    swp_core::limits::DEFAULT_MAX_CLOCK_SKEW_MS
}

fn default_unknown_profile() -> UnknownProfile {
    UnknownProfile::ErrorReply
}

/// A SUT manifest file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Implementation name.
    pub name: String,
    /// Implementation version.
    pub version: String,
    /// How it is reached.
    pub kind: Kind,
    /// How to start it (testee).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Start>,
    /// Methods it supports.
    pub methods: Vec<Method>,
    /// What it claims.
    #[serde(default)]
    pub claims: Claims,
    /// The profile core vectors address when they need a known profile (default: 1 when
    /// claimed, else the lowest claimed profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_profile_id: Option<u64>,
    /// Limits.
    pub limits: Limits,
    /// Policies.
    pub policy: Policy,
}

/// A loaded manifest and where it came from.
#[derive(Debug, Clone)]
pub struct Sut {
    /// The manifest.
    pub manifest: Manifest,
    /// Its file, when loaded from one.
    pub path: Option<PathBuf>,
    /// Its raw text (for digests).
    pub text: String,
}

/// The manifest of the built-in reference SUT (also `implementations/manifests/reference-inproc.yaml`).
pub const BUILTIN_MANIFEST: &str =
    include_str!("../../implementations/manifests/reference-inproc.yaml");

/// Loading a manifest failed.
#[derive(Debug, thiserror::Error)]
pub enum SutError {
    /// Unreadable.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Not a valid manifest.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong (with line and column where the YAML parser gives them).
        message: String,
    },
}

impl Sut {
    /// The built-in reference.
    pub fn builtin() -> Result<Sut, SutError> {
        Sut::parse(BUILTIN_MANIFEST, "<builtin reference-inproc.yaml>", None)
    }

    /// Loads a manifest file.
    pub fn load(path: &Path) -> Result<Sut, SutError> {
        let text = std::fs::read_to_string(path).map_err(|source| SutError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Sut::parse(&text, &path.display().to_string(), Some(path.to_owned()))
    }

    fn parse(text: &str, name: &str, path: Option<PathBuf>) -> Result<Sut, SutError> {
        let invalid = |message: String| SutError::Invalid {
            path: name.to_owned(),
            message,
        };
        let manifest: Manifest =
            serde_saphyr::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let l = &manifest.limits;
        let core =
            swp_ref::testee::reference::receiver_config(&crate::sut::codec_config_of(&manifest))
                .map(|_| ())
                .map_err(|e| invalid(format!("limits are incoherent: {e}")));
        core?;
        if manifest.methods.is_empty() {
            return Err(invalid("methods: at least one method is required".into()));
        }
        if manifest.kind == Kind::Testee && manifest.start.is_none() {
            return Err(invalid(
                "kind testee needs `start` (command and args of the testee process)".into(),
            ));
        }
        let _ = l;
        Ok(Sut {
            manifest,
            path,
            text: text.to_owned(),
        })
    }

    /// The profile core vectors address.
    pub fn core_profile_id(&self) -> Option<u64> {
        let m = &self.manifest;
        m.core_profile_id.or_else(|| {
            if m.claims.profiles.contains(&1) {
                Some(1)
            } else {
                m.claims.profiles.iter().copied().min()
            }
        })
    }

    /// Parameter values for vector expressions; `now_ms` is the receiver clock origin.
    pub fn params(&self, now_ms: u64) -> Params {
        let m = &self.manifest;
        let mut p = Params::new();
        p.insert("MAX_FRAME_BYTES", u64::from(m.limits.max_frame_bytes));
        p.insert("MIN_MSG_ID_BYTES", m.limits.min_msg_id_bytes);
        p.insert("MAX_MSG_ID_BYTES", m.limits.max_msg_id_bytes);
        p.insert("MAX_EXT_BYTES", m.limits.max_ext_bytes);
        p.insert("MAX_PAYLOAD_BYTES", m.limits.max_payload_bytes);
        p.insert("MAX_CLOCK_SKEW_MS", m.policy.max_clock_skew_ms);
        p.insert("NOW_MS", now_ms);
        if let Some(r) = m.policy.rate_limit {
            p.insert("RATE_LIMIT_FRAMES", u64::from(r.frames));
            p.insert("RATE_LIMIT_WINDOW_MS", r.window_ms);
        }
        if let Some(id) = self.core_profile_id() {
            p.insert("CORE_PROFILE_ID", id);
        }
        p
    }
}

/// The testee-protocol receiver configuration a manifest describes.
pub fn codec_config_of(m: &Manifest) -> swp_ref::testee::proto::CodecConfig {
    use swp_ref::testee::proto::{CodecConfig, LimitsSpec, PolicySpec, RateLimitSpec};
    CodecConfig {
        limits: LimitsSpec {
            max_frame_bytes: m.limits.max_frame_bytes,
            min_msg_id_bytes: m.limits.min_msg_id_bytes,
            max_msg_id_bytes: m.limits.max_msg_id_bytes,
            max_ext_bytes: m.limits.max_ext_bytes,
            max_payload_bytes: m.limits.max_payload_bytes,
        },
        policy: PolicySpec {
            timestamp_freshness: m.policy.timestamp_freshness,
            max_clock_skew_ms: m.policy.max_clock_skew_ms,
            rate_limit: m.policy.rate_limit.map(|r| RateLimitSpec {
                frames: r.frames,
                window_ms: r.window_ms,
            }),
        },
        known_profiles: m.claims.profiles.clone(),
    }
}
