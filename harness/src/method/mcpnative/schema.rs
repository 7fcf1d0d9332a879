//! The official MCP schemas: each protocol version's published `schema.json`, found through
//! `MCP_SCHEMA_DIR`, else in the cache `swp-conform schemas fetch` fills (`pins`), each definition
//! compiled once per process with the `jsonschema` crate, and the check of one value against
//! one definition. A schema that cannot be found or compiled is an error the caller must
//! surface: it never reads as "valid".

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The protocol versions the harness can judge, oldest first.
pub const KNOWN: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The newest version that opens with `initialize`.
pub const NEWEST_SESSION: &str = "2025-11-25";

/// Whether the harness knows `v`.
pub fn is_known(v: &str) -> bool {
    KNOWN.contains(&v)
}

/// Whether `v` is stateless (no `initialize`; discovery and per-request `_meta`).
pub fn is_stateless(v: &str) -> bool {
    v == "2026-07-28"
}

/// Whether version `a` is `b` or later (dates compare as text).
pub fn at_least(a: &str, b: &str) -> bool {
    a >= b
}

/// The official schema of a version is unavailable: the check cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// No `schema.json` for the version where the harness looked.
    #[error("the official MCP schema of {version} is not available (looked for {looked}); run `swp-conform schemas fetch`, or set MCP_SCHEMA_DIR to the directory holding <version>/schema.json")]
    Missing {
        /// The protocol version.
        version: String,
        /// Where the harness looked.
        looked: String,
    },
    /// `MCP_SCHEMA_DIR` is not set.
    #[error("the official MCP schema of {version} is needed to judge, and none is at hand: run `swp-conform schemas fetch` (or `swp-conform schemas fetch --from DIR-or-URL` for a mirror), or set MCP_SCHEMA_DIR to a directory holding <version>/schema.json (the MCP specification's schema/ directory)")]
    NotConfigured {
        /// The protocol version.
        version: String,
    },
    /// The file exists but is not a usable schema.
    #[error("the official MCP schema {path} cannot be used: {why}")]
    Broken {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// The schema has no definition of that name (a harness table out of step with it).
    #[error("the official MCP schema of {version} defines no {def}")]
    NoDefinition {
        /// The protocol version.
        version: String,
        /// The definition.
        def: String,
    },
}

/// Where the schemas are: `MCP_SCHEMA_DIR`, a directory of `<version>/schema.json` (as the
/// MCP specification's repository lays them out under `schema/`), else the cache that
/// `swp-conform schemas fetch` fills, when every schema in it matches its pin
/// ([`super::pins::cached`]). `None` otherwise: the harness guesses no path, so a run
/// without schemas says so ([`SchemaError::NotConfigured`]) instead of judging against
/// whatever lies near the build.
pub fn schema_dir() -> Option<PathBuf> {
    std::env::var_os("MCP_SCHEMA_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(super::pins::cached)
}

/// One version's schema document.
struct Doc {
    /// `definitions` (draft-07 documents) or `$defs` (2020-12).
    defs_key: &'static str,
    doc: Value,
}

type DocCache = HashMap<(PathBuf, String), Result<Arc<Doc>, SchemaError>>;
type ValidatorCache = HashMap<(PathBuf, String, String), Arc<jsonschema::Validator>>;

fn docs() -> &'static Mutex<DocCache> {
    static D: OnceLock<Mutex<DocCache>> = OnceLock::new();
    D.get_or_init(|| Mutex::new(HashMap::new()))
}

fn validators() -> &'static Mutex<ValidatorCache> {
    static V: OnceLock<Mutex<ValidatorCache>> = OnceLock::new();
    V.get_or_init(|| Mutex::new(HashMap::new()))
}

fn load(dir: &Path, version: &str) -> Result<Arc<Doc>, SchemaError> {
    let key = (dir.to_owned(), version.to_owned());
    let mut cache = docs().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = cache.get(&key) {
        return d.clone();
    }
    let path = dir.join(version).join("schema.json");
    let r = match std::fs::read(&path) {
        Err(_) => Err(SchemaError::Missing {
            version: version.to_owned(),
            looked: path.display().to_string(),
        }),
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Err(e) => Err(SchemaError::Broken {
                path: path.display().to_string(),
                why: e.to_string(),
            }),
            Ok(doc) => {
                let defs_key = if doc.get("$defs").is_some() {
                    "$defs"
                } else {
                    "definitions"
                };
                if doc.get(defs_key).and_then(Value::as_object).is_none() {
                    Err(SchemaError::Broken {
                        path: path.display().to_string(),
                        why: "no `definitions` or `$defs` object".into(),
                    })
                } else {
                    Ok(Arc::new(Doc { defs_key, doc }))
                }
            }
        },
    };
    cache.insert(key, r.clone());
    r
}

/// The schema of one version, as the judge uses it.
#[derive(Clone)]
pub struct VersionSchema {
    version: String,
    dir: PathBuf,
    doc: Arc<Doc>,
}

impl std::fmt::Debug for VersionSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VersionSchema({})", self.version)
    }
}

impl VersionSchema {
    /// The schema of `version` under `dir`.
    pub fn open(dir: &Path, version: &str) -> Result<VersionSchema, SchemaError> {
        Ok(VersionSchema {
            version: version.to_owned(),
            dir: dir.to_owned(),
            doc: load(dir, version)?,
        })
    }

    /// The protocol version.
    pub fn version(&self) -> &str {
        &self.version
    }

    fn defs(&self) -> &serde_json::Map<String, Value> {
        // `load` checked that it is an object.
        static EMPTY: OnceLock<serde_json::Map<String, Value>> = OnceLock::new();
        self.doc
            .doc
            .get(self.doc.defs_key)
            .and_then(Value::as_object)
            .unwrap_or_else(|| EMPTY.get_or_init(serde_json::Map::new))
    }

    /// Whether the schema defines `def`.
    pub fn has(&self, def: &str) -> bool {
        self.defs().contains_key(def)
    }

    /// The definition of a request (`kind` "Request") or notification ("Notification")
    /// whose `method` is `method`, among the members of `union` (`ServerRequest`,
    /// `ServerNotification`, `ClientRequest`).
    pub fn member_for(&self, union: &str, method: &str) -> Option<String> {
        let defs = self.defs();
        let members = defs.get(union)?.get("anyOf")?.as_array()?;
        members.iter().find_map(|m| {
            let name = m.get("$ref")?.as_str()?.rsplit('/').next()?;
            let d = defs.get(name)?;
            let props = d.get("properties")?;
            let m = props.get("method")?;
            let fixed = m
                .get("const")
                .or_else(|| m.get("enum").and_then(|e| e.get(0)))?;
            (fixed.as_str() == Some(method)).then(|| name.to_owned())
        })
    }

    fn validator(&self, def: &str) -> Result<Arc<jsonschema::Validator>, SchemaError> {
        let key = (self.dir.clone(), self.version.clone(), def.to_owned());
        if let Some(v) = validators()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(v.clone());
        }
        if !self.has(def) {
            return Err(SchemaError::NoDefinition {
                version: self.version.clone(),
                def: def.to_owned(),
            });
        }
        let mut root = self.doc.doc.clone();
        if let Some(o) = root.as_object_mut() {
            o.insert(
                "$ref".into(),
                Value::String(format!("#/{}/{def}", self.doc.defs_key)),
            );
        }
        // Compiled outside the lock: several vectors may want different definitions.
        let v = jsonschema::validator_for(&root).map_err(|e| SchemaError::Broken {
            path: self.dir.join(&self.version).display().to_string(),
            why: format!("{def}: {e}"),
        })?;
        let v = Arc::new(v);
        validators()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, v.clone());
        Ok(v)
    }

    /// Checks `instance` against definition `def`: `Ok(Ok(()))` when valid, `Ok(Err(why))`
    /// naming the first problems (JSON Pointer and what the schema says), `Err` when the
    /// definition cannot be used.
    pub fn check(&self, def: &str, instance: &Value) -> Result<Result<(), String>, SchemaError> {
        let v = self.validator(def)?;
        let problems: Vec<String> = v
            .iter_errors(instance)
            .take(3)
            .map(|e| {
                let at = e.instance_path().to_string();
                let at = if at.is_empty() {
                    "(top)".to_owned()
                } else {
                    at
                };
                let mut text = e.to_string();
                if text.chars().count() > 240 {
                    text = text.chars().take(240).collect::<String>() + "…";
                }
                format!("{at}: {text}")
            })
            .collect();
        Ok(if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        })
    }
}

/// The result definition of a client request, by method (`None`: only `Result`).
pub fn result_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeResult",
        "ping"
        | "resources/subscribe"
        | "resources/unsubscribe"
        | "logging/setLevel"
        | "notifications/cancelled" => "EmptyResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        "server/discover" => "DiscoverResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_as_dates() {
        assert!(at_least("2026-07-28", "2025-11-25"));
        assert!(!at_least("2025-06-18", "2025-11-25"));
        assert!(is_stateless("2026-07-28") && !is_stateless(NEWEST_SESSION));
    }

    #[test]
    fn a_missing_schema_is_an_error_not_a_pass() {
        let dir = std::env::temp_dir().join("swp-conform-no-such-schema-dir");
        let e = VersionSchema::open(&dir, "2025-06-18").unwrap_err();
        assert!(matches!(e, SchemaError::Missing { .. }), "{e}");
        assert!(e.to_string().contains("MCP_SCHEMA_DIR"));
    }

    #[test]
    fn no_configured_directory_is_an_error_that_says_so() {
        let mut peer = super::super::judge::Peer::new("2025-06-18", serde_json::json!({}), None);
        let e = peer.schema("2025-06-18").unwrap_err();
        assert!(matches!(e, SchemaError::NotConfigured { .. }), "{e}");
        assert!(
            e.to_string().contains("run `swp-conform schemas fetch`"),
            "{e}"
        );
    }
}
