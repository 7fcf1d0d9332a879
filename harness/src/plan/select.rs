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
    pub class: Option<crate::catalog::class::Class>,
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
    /// A namespace the catalog does not have.
    #[error("no namespace {0:?} in the catalog (namespaces: {1})")]
    Namespace(String, String),
    /// Nothing matched: a run of zero vectors would pass vacuously.
    #[error("the selection {0} matches no vector of the catalog")]
    Empty(String),
}

/// The selection in the words of the command line, for messages.
fn describe(sel: &Selection) -> String {
    let mut p = Vec::new();
    for f in &sel.filter {
        p.push(format!("--filter {f}"));
    }
    for n in &sel.namespaces {
        p.push(format!("--namespace {n}"));
    }
    if let Some(c) = sel.class {
        p.push(format!("--class {c}"));
    }
    for r in &sel.requirements {
        p.push(format!("--requirement {r}"));
    }
    if p.is_empty() {
        "(everything)".into()
    } else {
        p.join(" ")
    }
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
    // `--namespace a,b` is two namespaces, as `--filter` takes a comma list.
    let namespaces: Vec<&str> = sel
        .namespaces
        .iter()
        .flat_map(|n| n.split(','))
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    let known: std::collections::BTreeSet<&str> = cat
        .vectors
        .iter()
        .map(|v| v.vector.header.namespace.as_str())
        .collect();
    if let Some(n) = namespaces.iter().find(|n| !known.contains(**n)) {
        let all: Vec<&str> = known.into_iter().collect();
        return Err(SelectError::Namespace((*n).to_owned(), all.join(", ")));
    }
    let plan: Vec<&LoadedVector> = cat
        .vectors
        .iter()
        .filter(|v| globs.is_empty() || globs.is_match(&v.vector.header.id))
        .filter(|v| {
            namespaces.is_empty() || namespaces.contains(&v.vector.header.namespace.as_str())
        })
        .filter(|v| {
            class_ns
                .as_ref()
                .is_none_or(|ns| ns.contains(&v.vector.header.namespace.as_str()))
        })
        .filter(|v| {
            reqs.is_empty()
                || v.vector.header.requirements.iter().any(|r| {
                    cat.requirements
                        .resolve(r)
                        .is_some_and(|ids| ids.iter().any(|i| reqs.contains(i)))
                })
        })
        .collect();
    if plan.is_empty() {
        return Err(SelectError::Empty(describe(sel)));
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
        crate::catalog::load::load(&dir).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn namespaces_take_a_comma_list_and_an_empty_selection_is_an_error() {
        let cat = catalog();
        let sel = |ns: &[&str], filter: &[&str]| Selection {
            namespaces: ns.iter().map(|s| (*s).to_owned()).collect(),
            filter: filter.iter().map(|s| (*s).to_owned()).collect(),
            ..Selection::default()
        };
        let both = select(&cat, &sel(&["rpc,events"], &[])).unwrap();
        let rpc = select(&cat, &sel(&["rpc"], &[])).unwrap().len();
        let events = select(&cat, &sel(&["events"], &[])).unwrap().len();
        assert_eq!(both.len(), rpc + events);
        assert!(rpc > 0 && events > 0);
        let e = select(&cat, &sel(&["nosuchns"], &[])).unwrap_err();
        assert!(e.to_string().contains("no namespace \"nosuchns\""), "{e}");
        let e = select(&cat, &sel(&["rpc"], &["core_*"])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the selection --filter core_* --namespace rpc matches no vector of the catalog"
        );
    }
}
