//! The vector catalog: vectors, the requirement registry and the spec-kit catalog index,
//! loaded together and cross-checked; and [`load_sets`], which puts the YAML catalog and
//! the spec kit's published sets (`crate::published`) into one catalog for a run.

pub mod check;
pub mod class;
pub mod index;
pub mod load;
pub mod mcpnative;
pub mod mcpx;
pub mod requirements;
pub mod trace;
pub mod vector;

use std::path::{Path, PathBuf};

/// A vector and the file it came from.
#[derive(Debug, Clone)]
pub struct LoadedVector {
    /// The vector.
    pub vector: vector::Vector,
    /// Its file.
    pub path: PathBuf,
}

/// Everything a run's vectors come from.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Vectors sorted by id.
    pub vectors: Vec<LoadedVector>,
    /// The requirement registry.
    pub requirements: requirements::Registry,
    /// The spec-kit catalog index.
    pub index: index::CatalogIndex,
    /// The YAML catalog directory (registry and index; its vectors when they are run).
    pub dir: PathBuf,
    /// Published sets whose fixtures are among the vectors.
    pub published: Vec<PathBuf>,
}

impl Catalog {
    /// A vector file's path as reports show it: relative to the parent of the directory it
    /// came from, with `/` separators.
    pub fn display_path(&self, path: &Path) -> String {
        let roots = std::iter::once(&self.dir).chain(&self.published);
        for d in roots {
            let root = d.parent().unwrap_or(d);
            if path.starts_with(d) {
                return crate::report::result::display_path(root, path);
            }
        }
        crate::report::result::display_path(self.dir.parent().unwrap_or(&self.dir), path)
    }
}

/// The directories given to `--vectors` could not be put together.
#[derive(Debug, thiserror::Error)]
pub enum SetsError {
    /// The YAML catalog did not load.
    #[error(transparent)]
    Catalog(#[from] crate::support::diag::LoadError),
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
    let mut cat = load::load(yaml.map_or(default, |d| d.as_path()))?;
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
    let catalog_ids: std::collections::BTreeSet<String> =
        cat.vectors.iter().map(|lv| lv.vector.id.clone()).collect();
    let mut seen: std::collections::BTreeMap<String, PathBuf> = Default::default();
    for dir in &sets {
        for mut lv in crate::published::load(dir, reference)? {
            if let Some(prev) = seen.insert(lv.vector.id.clone(), dir.clone()) {
                return Err(SetsError::Duplicate(
                    lv.vector.id.clone(),
                    prev.display().to_string(),
                    dir.display().to_string(),
                ));
            }
            if catalog_ids.contains(&lv.vector.id) {
                lv.vector.id.push_str(PUBLISHED_SUFFIX);
            }
            cat.vectors.push(lv);
        }
    }
    cat.vectors.sort_by(|a, b| a.vector.id.cmp(&b.vector.id));
    cat.published = sets;
    Ok(cat)
}
