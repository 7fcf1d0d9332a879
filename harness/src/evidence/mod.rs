//! Evidence bundles as files anyone can check: the deterministic `tar.gz` a claim writes,
//! its `MANIFEST` (every other file's SHA-256 and what was claimed), the detached Ed25519
//! signature over the manifest's exact bytes with the key that made it, and `verify`'s
//! checks of a bundle from anyone. The layout is `docs/report-format.md` §Evidence bundles.

pub mod keys;
pub mod manifest;
pub mod unpack;
pub mod verify;

use sha2::{Digest, Sha256};

/// The manifest's name in the bundle.
pub const MANIFEST: &str = "MANIFEST";
/// The detached signature: 64 octets, Ed25519 over `MANIFEST`'s exact bytes.
pub const SIGNATURE: &str = "MANIFEST.sig";
/// The public key that made the signature, SubjectPublicKeyInfo PEM.
pub const PUBLIC_KEY: &str = "MANIFEST.pub";

/// The files the manifest does not list: itself and what vouches for it.
pub const SEAL_FILES: [&str; 3] = [MANIFEST, SIGNATURE, PUBLIC_KEY];

/// A bundle's contents: its top directory and its files by name relative to it, in
/// bundle order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    /// The top directory (`evidence-C0`).
    pub root: String,
    /// `(name, body)`, names relative to `root` with `/` separators.
    pub files: Vec<(String, Vec<u8>)>,
}

/// SHA-256, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Bundle {
    /// The body of file `name`.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.as_slice())
    }

    /// Replaces (or adds) file `name`.
    pub fn put(&mut self, name: &str, body: Vec<u8>) {
        match self.files.iter_mut().find(|(n, _)| n == name) {
            Some(f) => f.1 = body,
            None => self.files.push((name.to_owned(), body)),
        }
    }

    /// Fills `m.files` with the digest of every file but the seal files, renders the
    /// manifest into the bundle and, with a key, signs its exact bytes and adds the
    /// signature and the public key; without one, drops any old signature and key (they
    /// would sign another manifest).
    pub fn seal(
        &mut self,
        mut m: manifest::Manifest,
        key: Option<&keys::SecretKey>,
    ) -> Result<(), keys::KeyError> {
        m.files = self
            .files
            .iter()
            .filter(|(n, _)| !SEAL_FILES.contains(&n.as_str()))
            .map(|(n, b)| (n.clone(), sha256_hex(b)))
            .collect();
        let text = m.render().into_bytes();
        self.files
            .retain(|(n, _)| !SEAL_FILES.contains(&n.as_str()));
        if let Some(k) = key {
            let sig = k.sign(&text);
            self.files.push((SIGNATURE.into(), sig.to_vec()));
            self.files
                .push((PUBLIC_KEY.into(), k.public().pem()?.into_bytes()));
        }
        self.files.insert(0, (MANIFEST.into(), text));
        Ok(())
    }

    /// The `tar.gz`: entries in bundle order under `root/`, with fixed mode, owner and
    /// mtime, so the same files give the same octets.
    pub fn pack(&self) -> std::io::Result<Vec<u8>> {
        let enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut tar = tar::Builder::new(enc);
        for (name, body) in &self.files {
            let mut h = tar::Header::new_gnu();
            h.set_size(body.len() as u64);
            h.set_mode(0o644);
            h.set_mtime(0);
            h.set_cksum();
            tar.append_data(&mut h, format!("{}/{name}", self.root), body.as_slice())?;
        }
        tar.into_inner()?.finish()
    }
}
