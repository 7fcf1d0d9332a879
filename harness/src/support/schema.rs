//! JSON Schemas generated from the Rust types, for editors; checked in under `docs/schema/`
//! and kept in sync by a test.

use schemars::schema_for;

/// The schemas, as (file name, pretty JSON with trailing newline).
pub fn all() -> Vec<(&'static str, String)> {
    let pretty = |s: schemars::Schema| {
        let mut t = serde_json::to_string_pretty(&s).unwrap_or_default();
        t.push('\n');
        t
    };
    vec![
        (
            "vector.schema.json",
            pretty(schema_for!(crate::catalog::vector::Vector)),
        ),
        (
            "requirements.schema.json",
            pretty(schema_for!(crate::catalog::requirements::RequirementFile)),
        ),
        (
            "catalog-index.schema.json",
            pretty(schema_for!(crate::catalog::index::CatalogIndex)),
        ),
        (
            "sut-manifest.schema.json",
            pretty(schema_for!(crate::sut::file::ManifestFile)),
        ),
        (
            "report.schema.json",
            pretty(schema_for!(crate::report::model::Report)),
        ),
        (
            "load-report.schema.json",
            pretty(schema_for!(crate::load::report::LoadReport)),
        ),
        (
            "baseline.schema.json",
            pretty(schema_for!(crate::report::analysis::baseline::Baseline)),
        ),
        (
            "matrix.schema.json",
            pretty(schema_for!(crate::matrix::model::Matrix)),
        ),
        (
            "history.schema.json",
            pretty(schema_for!(crate::history::model::History)),
        ),
    ]
}
