//! Loading the catalog from disk: every file parsed, every cross-reference checked, every
//! error named with its file, line and column and what was expected; and [`load_sets`],
//! which puts the YAML catalog and the spec kit's published sets (`crate::published`, the
//! one place the catalog names the front-end) into one catalog for a run.

use super::index::CatalogIndex;
use super::requirements::{Entry, Registry, RequirementFile};
use super::vector::{Vector, VectorFile};
use super::{Catalog, LoadedVector};
use crate::support::diag::{LoadError, Problem, Sink};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn read(sink: &mut Sink, path: &Path) -> Option<String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) => {
            sink.problems.push(Problem {
                path: path.to_owned(),
                line: None,
                column: None,
                message: format!("cannot read: {e}"),
            });
            None
        }
    }
}

fn yaml_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

/// Loads the requirement registry from `dir/requirements/`.
fn load_requirements(sink: &mut Sink, dir: &Path) -> Registry {
    let mut reg = Registry::default();
    let rdir = dir.join("requirements");
    let files = match yaml_files(&rdir) {
        Ok(f) => f,
        Err(e) => {
            sink.problems.push(Problem {
                path: rdir,
                line: None,
                column: None,
                message: format!("cannot list the requirement registry: {e}"),
            });
            return reg;
        }
    };
    let mut alias_src: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut restates: Vec<(PathBuf, String, String, String)> = Vec::new();
    for path in files {
        let Some(text) = read(sink, &path) else {
            continue;
        };
        let Some(file) = sink.parse::<RequirementFile>(&path, &text) else {
            continue;
        };
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        if file.document != stem {
            sink.at(
                &path,
                &text,
                "document:",
                format!(
                    "document is {:?} but the file is named {stem}.yaml; expected them to match",
                    file.document
                ),
            );
        }
        reg.documents
            .insert(file.document.clone(), file.title.clone());
        if let Some(v) = &file.version {
            reg.versions.insert(file.document.clone(), v.clone());
        }
        for r in file.requirements {
            let is_process = r.testable == super::requirements::Testable::Process;
            if is_process != r.reason.is_some() {
                sink.at(
                    &path,
                    &text,
                    &format!("id: {}", r.id),
                    format!(
                        "{}: `reason` is required exactly when testable is process",
                        r.id
                    ),
                );
            }
            for a in &r.aliases {
                alias_src.entry(a.clone()).or_default().push(r.id.clone());
            }
            for t in &r.restates {
                restates.push((path.clone(), text.clone(), r.id.clone(), t.clone()));
            }
            let id = r.id.clone();
            let prev = reg.by_id.insert(
                id.clone(),
                Entry {
                    req: r,
                    document: file.document.clone(),
                },
            );
            if let Some(prev) = prev {
                sink.at(
                    &path,
                    &text,
                    &format!("id: {id}"),
                    format!(
                        "requirement {id} is defined twice (also in {}.yaml)",
                        prev.document
                    ),
                );
            }
        }
    }
    for (path, text, id, target) in restates {
        if !reg.by_id.contains_key(&target) {
            sink.at(
                &path,
                &text,
                &target,
                format!("{id} restates {target}, which is not a requirement ID"),
            );
        }
    }
    for (alias, ids) in &alias_src {
        if reg.by_id.contains_key(alias) {
            sink.problems.push(Problem {
                path: rdir.clone(),
                line: None,
                column: None,
                message: format!(
                    "alias {alias} (on {}) collides with a requirement ID",
                    ids.join(", ")
                ),
            });
        }
    }
    reg.aliases = alias_src;
    reg
}

/// Loads and checks the whole catalog under `dir` (normally `vectors/`).
pub fn load(dir: &Path) -> Result<Catalog, LoadError> {
    let mut sink = Sink {
        problems: Vec::new(),
    };
    let requirements = load_requirements(&mut sink, dir);
    let index_path = dir.join("catalog-index.yaml");
    let index = read(&mut sink, &index_path)
        .and_then(|t| sink.parse::<CatalogIndex>(&index_path, &t))
        .unwrap_or_default();
    let mut vectors = Vec::new();
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut namespaces: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n != "requirements"))
            .collect(),
        Err(e) => {
            sink.problems.push(Problem {
                path: dir.to_owned(),
                line: None,
                column: None,
                message: format!("cannot list the catalog directory: {e}"),
            });
            Vec::new()
        }
    };
    namespaces.sort();
    for ns in namespaces {
        let files = match yaml_files(&ns) {
            Ok(f) => f,
            Err(e) => {
                sink.problems.push(Problem {
                    path: ns.clone(),
                    line: None,
                    column: None,
                    message: format!("cannot list: {e}"),
                });
                continue;
            }
        };
        for path in files {
            let Some(text) = read(&mut sink, &path) else {
                continue;
            };
            let Some(file) = sink.parse::<VectorFile>(&path, &text) else {
                continue;
            };
            // Parsed as the flat file first, so a block of another family's methods is
            // reported at that block's line, with what it belongs to.
            let v = match Vector::try_from(file) {
                Ok(v) => v,
                Err(e) => {
                    sink.at(&path, &text, &e.needle(), e.to_string());
                    continue;
                }
            };
            super::check::check_vector(&mut sink, &requirements, &path, &text, &v);
            if let Some(prev) = seen.insert(v.header.id.clone(), path.clone()) {
                sink.at(
                    &path,
                    &text,
                    "id:",
                    format!(
                        "duplicate vector id {:?}, also in {}",
                        v.header.id,
                        prev.display()
                    ),
                );
            }
            vectors.push(LoadedVector { vector: v, path });
        }
    }
    vectors.sort_by(|a, b| a.vector.header.id.cmp(&b.vector.header.id));
    if sink.problems.is_empty() {
        Ok(Catalog {
            vectors,
            requirements,
            index,
            dir: dir.to_owned(),
            published: Vec::new(),
        })
    } else {
        Err(LoadError {
            what: "the catalog",
            problems: sink.problems,
        })
    }
}

/// The directories given to `--vectors` could not be put together.
#[derive(Debug, thiserror::Error)]
pub enum SetsError {
    /// The YAML catalog did not load.
    #[error(transparent)]
    Catalog(#[from] LoadError),
    /// A published set could not be listed.
    #[error(transparent)]
    Published(#[from] crate::published::PublishedError),
    /// A directory is neither.
    #[error("{0}: neither a vector catalog (a directory with requirements/) nor a published set (<id>.json beside <id>.bin or <id>.evidence.md)")]
    Unknown(String),
    /// Two YAML catalogs.
    #[error("{0} and {1} are both YAML catalogs; --vectors takes one catalog and any number of published sets")]
    TwoCatalogs(String, String),
    /// Two published sets with a fixture of the same id.
    #[error("fixture {0} is in two published sets ({1} and {2})")]
    Duplicate(String, String, String),
}

/// The suffix a published fixture's id takes when the YAML catalog in the same run has a
/// vector of that id.
pub const PUBLISHED_SUFFIX: &str = ".published";

/// Loads what `--vectors` names: at most one YAML catalog and any number of published sets,
/// each detected by its shape; no directory at all means `default`. Published fixtures are
/// read against a YAML catalog (its registry, index and the requirements of its vectors of
/// the same ids): the one given, else `default`, whose vectors then do not run. A fixture
/// whose id the run's catalog also has is renamed `<id>.published`.
pub fn load_sets(dirs: &[PathBuf], default: &Path) -> Result<Catalog, SetsError> {
    let mut yaml: Option<&PathBuf> = None;
    let mut published = Vec::new();
    for d in dirs {
        if d.join("requirements").is_dir() {
            if let Some(first) = yaml {
                return Err(SetsError::TwoCatalogs(
                    first.display().to_string(),
                    d.display().to_string(),
                ));
            }
            yaml = Some(d);
        } else if crate::published::is_published_dir(d) {
            published.push(d.clone());
        } else {
            return Err(SetsError::Unknown(d.display().to_string()));
        }
    }
    let mut cat = load(yaml.map_or(default, |d| d.as_path()))?;
    if published.is_empty() {
        return Ok(cat);
    }
    let reference = cat.clone();
    if yaml.is_none() {
        // The default catalog lends its registry and its requirements; only the
        // published fixtures run.
        cat.vectors.clear();
    }
    merge_published(cat, &reference, published)
}

fn merge_published(
    mut cat: Catalog,
    reference: &Catalog,
    sets: Vec<PathBuf>,
) -> Result<Catalog, SetsError> {
    let catalog_ids: std::collections::BTreeSet<String> = cat
        .vectors
        .iter()
        .map(|lv| lv.vector.header.id.clone())
        .collect();
    let mut seen: std::collections::BTreeMap<String, PathBuf> = Default::default();
    for dir in &sets {
        for mut lv in crate::published::load(dir, reference)? {
            if let Some(prev) = seen.insert(lv.vector.header.id.clone(), dir.clone()) {
                return Err(SetsError::Duplicate(
                    lv.vector.header.id.clone(),
                    prev.display().to_string(),
                    dir.display().to_string(),
                ));
            }
            if catalog_ids.contains(&lv.vector.header.id) {
                lv.vector.header.id.push_str(PUBLISHED_SUFFIX);
            }
            cat.vectors.push(lv);
        }
    }
    cat.vectors
        .sort_by(|a, b| a.vector.header.id.cmp(&b.vector.header.id));
    cat.published = sets;
    Ok(cat)
}
