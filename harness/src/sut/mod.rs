//! The SUT manifest (`docs/sut-manifest.md`): what a system under test claims (PICS) and its
//! limits, policies and how to reach it (PIXIT). [`file`] is the YAML format, [`check`]
//! turns a file into the typed [`Manifest`] or lists every problem with its position, and
//! the rest of the harness reads only the typed form: a kind carries what it needs.

pub mod check;
pub mod file;
pub mod manifest;

pub use file::{
    AfterReject, ErrorFrameSpec, IdentityProbe, Kind, Limits, McpNativeSpec, McpTransport,
    PkiSource, Policy, ProbeSpec, RateLimit, RejectMode, RejectSignal, SessionSpec, Start, Timing,
    TlsSpec, ToolDecl, ToolEffect, Transport,
};
pub use manifest::{Claims, Manifest, Reach, SutKind, NO_BUILTIN};

use crate::plan::expr::Params;
use crate::support::diag::{FileError, LoadError};
use std::path::{Path, PathBuf};

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
#[cfg(feature = "builtin-sut")]
pub const BUILTIN_MANIFEST: &str =
    include_str!("../../../implementations/manifests/reference-inproc.yaml");

/// Loading a manifest failed.
#[derive(Debug, thiserror::Error)]
pub enum SutError {
    /// The built-in SUT was asked for in a build without it.
    #[error("{NO_BUILTIN}")]
    NoBuiltin,
    /// Unreadable, or not a valid manifest (every problem, with its position).
    #[error(transparent)]
    File(#[from] FileError),
}

impl Sut {
    /// The built-in reference.
    pub fn builtin() -> Result<Sut, SutError> {
        #[cfg(feature = "builtin-sut")]
        return Sut::parse(
            BUILTIN_MANIFEST,
            Path::new("<builtin reference-inproc.yaml>"),
            None,
        );
        #[cfg(not(feature = "builtin-sut"))]
        Err(SutError::NoBuiltin)
    }

    /// Loads a manifest file.
    pub fn load(path: &Path) -> Result<Sut, SutError> {
        let text = std::fs::read_to_string(path).map_err(FileError::io(path))?;
        Sut::parse(&text, path, Some(path.to_owned()))
    }

    /// Parses and checks manifest text; `name` names it in problems.
    pub fn parse(text: &str, name: &Path, path: Option<PathBuf>) -> Result<Sut, SutError> {
        let manifest = check::check(text, name).map_err(|problems| {
            FileError::from(LoadError {
                what: "the manifest",
                problems,
            })
        })?;
        Ok(Sut {
            manifest,
            path,
            text: text.to_owned(),
        })
    }

    /// The manifest's directory: relative paths in it (`start.cwd`, TLS files) are resolved
    /// against it; the current directory for the built-in manifest and for a manifest named
    /// without a directory.
    pub fn base_dir(&self) -> PathBuf {
        match self.path.as_ref().and_then(|p| p.parent()) {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    /// The profile core vectors address: the declared one, else 1 when claimed, else the
    /// lowest claimed profile.
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
        p.insert(
            "P1_WRAPPER",
            u64::from(m.p1_payload == crate::p1::P1Form::Wrapper),
        );
        // The SWP-* windows and sizes the manifest declares as numbers in `params`.
        // Numeric optional-feature triggers too, for `holds` conditions over them.
        for &name in crate::plan::expr::MANIFEST_PARAM_NAMES
            .iter()
            .chain(crate::plan::features::FEATURE_PARAMS)
        {
            if let Some(v) = m.params.get(name).and_then(serde_json::Value::as_u64) {
                p.insert(name, v);
            }
        }
        p
    }
}

/// The testee-protocol receiver configuration a manifest describes.
pub(crate) fn codec_config_of(m: &Manifest) -> swp_testee_proto::CodecConfig {
    use swp_testee_proto::{CodecConfig, LimitsSpec, PolicySpec, RateLimitSpec};
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
        validate_profiles: Vec::new(),
        p1_payload: match m.p1_payload {
            crate::p1::P1Form::Message => swp_testee_proto::P1PayloadForm::Message,
            crate::p1::P1Form::Wrapper => swp_testee_proto::P1PayloadForm::Wrapper,
        },
    }
}
