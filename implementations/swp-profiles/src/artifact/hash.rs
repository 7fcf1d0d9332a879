//! The hash algorithms an offer may name (`ArtOffer.hash_alg`). The doc names none, so the
//! library offers the SHA-2 family it can verify and reads the names of the IANA "Named
//! Information Hash Algorithm" registry (`sha-256`), case-insensitively, the hyphen
//! optional; which of them an endpoint accepts is configuration.

use sha2::{Digest, Sha256, Sha384, Sha512};

/// A hash algorithm the library can verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HashAlg {
    /// SHA-256, 32-octet digest.
    Sha256,
    /// SHA-384, 48-octet digest.
    Sha384,
    /// SHA-512, 64-octet digest.
    Sha512,
}

impl HashAlg {
    /// Every algorithm, strongest last.
    pub const ALL: [HashAlg; 3] = [HashAlg::Sha256, HashAlg::Sha384, HashAlg::Sha512];

    /// The algorithm a `hash_alg` names, if known.
    pub fn parse(name: &str) -> Option<HashAlg> {
        let n = name.to_ascii_lowercase();
        match n.as_str() {
            "sha-256" | "sha256" => Some(HashAlg::Sha256),
            "sha-384" | "sha384" => Some(HashAlg::Sha384),
            "sha-512" | "sha512" => Some(HashAlg::Sha512),
            _ => None,
        }
    }

    /// The name this library writes.
    pub fn name(self) -> &'static str {
        match self {
            HashAlg::Sha256 => "sha-256",
            HashAlg::Sha384 => "sha-384",
            HashAlg::Sha512 => "sha-512",
        }
    }

    /// Digest length in octets.
    pub fn digest_len(self) -> usize {
        match self {
            HashAlg::Sha256 => 32,
            HashAlg::Sha384 => 48,
            HashAlg::Sha512 => 64,
        }
    }

    /// A fresh incremental hasher.
    pub fn hasher(self) -> Hasher {
        match self {
            HashAlg::Sha256 => Hasher::Sha256(Sha256::new()),
            HashAlg::Sha384 => Hasher::Sha384(Sha384::new()),
            HashAlg::Sha512 => Hasher::Sha512(Sha512::new()),
        }
    }

    /// The digest of `data`.
    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        let mut h = self.hasher();
        h.update(data);
        h.finalize()
    }
}

/// An incremental hasher of one of the algorithms; cloneable, so a receiver can keep the
/// state at a resume point.
#[derive(Debug, Clone)]
pub enum Hasher {
    /// SHA-256.
    Sha256(Sha256),
    /// SHA-384.
    Sha384(Sha384),
    /// SHA-512.
    Sha512(Sha512),
}

impl Hasher {
    /// Feeds octets.
    pub fn update(&mut self, data: &[u8]) {
        match self {
            Hasher::Sha256(h) => h.update(data),
            Hasher::Sha384(h) => h.update(data),
            Hasher::Sha512(h) => h.update(data),
        }
    }

    /// The digest.
    pub fn finalize(self) -> Vec<u8> {
        match self {
            Hasher::Sha256(h) => h.finalize().to_vec(),
            Hasher::Sha384(h) => h.finalize().to_vec(),
            Hasher::Sha512(h) => h.finalize().to_vec(),
        }
    }
}
