//! Selection: which vectors of the catalog a run executes (globs, namespaces, classes,
//! requirements). Deterministic: the plan is always in vector-id order.

use crate::catalog::{Catalog, LoadedVector};
use globset::{Glob, GlobSetBuilder};

/// A selection.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Comma-separated id globs (`core_*,e1_0002*`); empty selects all.
    pub filter: Vec<String>,
    /// Namespaces; empty selects all.
    pub namespaces: Vec<String>,
    /// A class whose namespaces are selected.
    pub class: Option<crate::class::Class>,
    /// Requirement IDs or aliases; a vector is selected when it names one.
    pub requirements: Vec<String>,
}

/// A selection could not be applied.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SelectError {
    /// Bad glob.
    #[error("filter {0:?}: {1}")]
    Glob(String, String),
    /// Unknown requirement.
    #[error("unknown requirement {0:?}")]
    Requirement(String),
}

/// The vectors `sel` picks from `cat`, in id order.
pub fn select<'a>(cat: &'a Catalog, sel: &Selection) -> Result<Vec<&'a LoadedVector>, SelectError> {
    let mut b = GlobSetBuilder::new();
    for f in sel
        .filter
        .iter()
        .flat_map(|f| f.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        b.add(Glob::new(f).map_err(|e| SelectError::Glob(f.to_owned(), e.to_string()))?);
    }
    let globs = b
        .build()
        .map_err(|e| SelectError::Glob(String::new(), e.to_string()))?;
    let class_ns = sel.class.map(|c| c.namespaces());
    let mut reqs = Vec::new();
    for r in &sel.requirements {
        reqs.extend(
            cat.requirements
                .resolve(r)
                .ok_or_else(|| SelectError::Requirement(r.clone()))?,
        );
    }
    Ok(cat
        .vectors
        .iter()
        .filter(|v| globs.is_empty() || globs.is_match(&v.vector.id))
        .filter(|v| sel.namespaces.is_empty() || sel.namespaces.contains(&v.vector.namespace))
        .filter(|v| class_ns.is_none_or(|ns| ns.contains(&v.vector.namespace.as_str())))
        .filter(|v| {
            reqs.is_empty()
                || v.vector.requirements.iter().any(|r| {
                    cat.requirements
                        .resolve(r)
                        .is_some_and(|ids| ids.iter().any(|i| reqs.contains(i)))
                })
        })
        .collect())
}
