//! The vector catalog: vectors, the requirement registry and the spec-kit catalog index,
//! loaded together and cross-checked.

pub mod check;
pub mod index;
pub mod load;
pub mod mcpnative;
pub mod mcpx;
pub mod requirements;
pub mod vector;

use std::path::PathBuf;

/// A vector and the file it came from.
#[derive(Debug, Clone)]
pub struct LoadedVector {
    /// The vector.
    pub vector: vector::Vector,
    /// Its file.
    pub path: PathBuf,
}

/// Everything under `vectors/`.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Vectors sorted by id.
    pub vectors: Vec<LoadedVector>,
    /// The requirement registry.
    pub requirements: requirements::Registry,
    /// The spec-kit catalog index.
    pub index: index::CatalogIndex,
    /// The catalog directory.
    pub dir: PathBuf,
}
