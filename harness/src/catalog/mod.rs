//! The vector catalog: vectors, the requirement registry and the spec-kit catalog index,
//! loaded together and cross-checked (`load`, which also puts the YAML catalog and the spec
//! kit's published sets into one catalog for a run).

pub mod body;
pub mod check;
pub mod class;
pub mod embedded;
pub mod expect;
pub mod fixture;
pub mod gateway;
pub mod index;
pub mod load;
pub mod mcpnative;
pub mod mcpx;
pub mod mcpxcheck;
pub mod receiver;
pub mod requirements;
pub mod send;
pub mod terms;
pub mod trace;
pub mod vector;
pub mod wire;

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
