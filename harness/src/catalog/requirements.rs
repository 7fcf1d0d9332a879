//! The requirement registry (`vectors/requirements/*.yaml`): every normative statement of
//! the spec kit with a stable ID, its level, and how (or why not) it can be tested.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// RFC 2119 level of a statement.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum Level {
    /// MUST.
    #[serde(rename = "MUST")]
    Must,
    /// MUST NOT.
    #[serde(rename = "MUST NOT")]
    MustNot,
    /// SHALL.
    #[serde(rename = "SHALL")]
    Shall,
    /// SHALL NOT.
    #[serde(rename = "SHALL NOT")]
    ShallNot,
    /// REQUIRED.
    #[serde(rename = "REQUIRED")]
    Required,
    /// SHOULD.
    #[serde(rename = "SHOULD")]
    Should,
    /// SHOULD NOT.
    #[serde(rename = "SHOULD NOT")]
    ShouldNot,
    /// MAY (where it bounds behaviour).
    #[serde(rename = "MAY")]
    May,
}

impl Level {
    /// Whether a failure of this level fails a run (absolute requirements).
    pub fn is_absolute(self) -> bool {
        matches!(
            self,
            Level::Must | Level::MustNot | Level::Shall | Level::ShallNot | Level::Required
        )
    }

    /// The keyword as written in the spec.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::MustNot => "MUST NOT",
            Level::Shall => "SHALL",
            Level::ShallNot => "SHALL NOT",
            Level::Required => "REQUIRED",
            Level::Should => "SHOULD",
            Level::ShouldNot => "SHOULD NOT",
            Level::May => "MAY",
        }
    }
}

/// How a statement can be checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Testable {
    /// By the codec method.
    #[serde(rename = "codec")]
    Codec,
    /// Only on the wire (session method).
    #[serde(rename = "wire")]
    Wire,
    /// Either way.
    #[serde(rename = "codec+wire")]
    CodecWire,
    /// A documentation or process duty no test can check.
    #[serde(rename = "process")]
    Process,
}

/// One normative statement.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// Stable ID, `<PREFIX>-<NNN>`.
    pub id: String,
    /// Level.
    pub level: Level,
    /// Section of the source document.
    pub section: String,
    /// One line in our words.
    pub summary: String,
    /// How it can be tested.
    pub testable: Testable,
    /// Why it is not testable (required for `process`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Spec-kit trace IDs (`C-001`, `P-MCP-001`) for this statement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// When it applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Statements elsewhere that this one repeats.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restates: Vec<String>,
}

/// One registry file: the statements of one spec document.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequirementFile {
    /// The spec-kit document stem.
    pub document: String,
    /// The document's title.
    pub title: String,
    /// The document's version as its heading states it (`Draft v0.1`), for claim lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Its statements, in document order.
    pub requirements: Vec<Requirement>,
}

/// A requirement with the document it comes from.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The statement.
    pub req: Requirement,
    /// Its document stem.
    pub document: String,
}

/// All requirements, by ID, with trace aliases resolved.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    /// By canonical ID.
    pub by_id: BTreeMap<String, Entry>,
    /// Alias → canonical IDs that carry it.
    pub aliases: BTreeMap<String, Vec<String>>,
    /// Document stem → title, in file order.
    pub documents: BTreeMap<String, String>,
    /// Document stem → version, where the registry file gives one.
    pub versions: BTreeMap<String, String>,
}

impl Registry {
    /// Resolves a requirement reference (ID or alias) to canonical IDs.
    pub fn resolve(&self, r: &str) -> Option<Vec<String>> {
        if self.by_id.contains_key(r) {
            Some(vec![r.to_owned()])
        } else {
            self.aliases.get(r).cloned()
        }
    }

    /// The level of a canonical ID.
    pub fn level(&self, id: &str) -> Option<Level> {
        self.by_id.get(id).map(|e| e.req.level)
    }
}
