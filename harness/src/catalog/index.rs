//! `vectors/catalog-index.yaml`: the spec kit's catalog of required vector IDs, each either
//! covered by a vector of the same id, excluded with a reason, or pending with a reason.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One catalog ID.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexEntry {
    /// The catalog id, e.g. `core_0001_valid_min_frame`.
    pub id: String,
    /// Why no vector can exist for it (a process check, not a runtime one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluded: Option<String>,
    /// Why its vector does not exist yet (which work item brings it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
}

/// The index file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CatalogIndex {
    /// Where the list comes from.
    pub source: String,
    /// Every catalog ID in catalog order.
    pub catalog: Vec<IndexEntry>,
}
