//! Ed25519 key files for signing evidence bundles: the secret key as PKCS#8 PEM, the public
//! key as SubjectPublicKeyInfo PEM (the forms `openssl genpkey -algorithm ed25519` writes
//! and `openssl pkeyutl` reads), and a key's fingerprint, the SHA-256 of its public key DER.

use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use std::path::{Path, PathBuf};

/// The longest key file read: a PEM Ed25519 key is under 200 octets, so anything near this
/// is not a key and is not read whole.
const MAX_KEY_FILE: u64 = 16 * 1024;

/// A key file could not be made, read or used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not the key it should be.
    #[error("{path}: not an Ed25519 {what} key in PEM ({why})")]
    Parse {
        /// The file.
        path: String,
        /// `secret` (PKCS#8) or `public` (SubjectPublicKeyInfo).
        what: &'static str,
        /// The decoder's reason.
        why: String,
    },
    /// The file is larger than any key file.
    #[error("{path}: over {MAX_KEY_FILE} octets, not a key file")]
    TooLarge {
        /// The file.
        path: String,
    },
    /// `keygen` does not overwrite a key: losing a signing key cannot be undone.
    #[error("{path}: already exists; keygen does not overwrite keys")]
    Exists {
        /// The file.
        path: String,
    },
    /// The operating system gave no randomness.
    #[error("no randomness for a new key: {0}")]
    Random(String),
    /// A key could not be encoded (does not happen for a valid Ed25519 key).
    #[error("encoding the key: {0}")]
    Encode(String),
}

/// A signing key, read from a secret key file.
pub struct SecretKey {
    key: SigningKey,
}

/// A public key: from a `.pub` file, a bundle's `MANIFEST.pub`, or a secret key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    key: VerifyingKey,
}

impl SecretKey {
    /// A fresh key from the operating system's random source.
    pub fn generate() -> Result<SecretKey, KeyError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| KeyError::Random(e.to_string()))?;
        Ok(SecretKey {
            key: SigningKey::from_bytes(&seed),
        })
    }

    /// Reads a PKCS#8 PEM secret key file (`-----BEGIN PRIVATE KEY-----`).
    pub fn read(path: &Path) -> Result<SecretKey, KeyError> {
        let text = read_small(path)?;
        let key = SigningKey::from_pkcs8_pem(&text).map_err(|e| KeyError::Parse {
            path: path.display().to_string(),
            what: "secret",
            why: e.to_string(),
        })?;
        Ok(SecretKey { key })
    }

    /// Its public half.
    pub fn public(&self) -> PublicKey {
        PublicKey {
            key: self.key.verifying_key(),
        }
    }

    /// The Ed25519 signature (RFC 8032, pure: no pre-hash, no context) of `msg`:
    /// deterministic, so the same manifest signed twice gives the same octets.
    pub fn sign(&self, msg: &[u8]) -> [u8; 64] {
        self.key.sign(msg).to_bytes()
    }

    /// Writes `path` (the secret key, readable by its owner only) and `path.pub`; refuses
    /// to overwrite either. Answers the `.pub` path.
    pub fn write_pair(&self, path: &Path) -> Result<PathBuf, KeyError> {
        let pub_path = public_path(path);
        for p in [path, pub_path.as_path()] {
            if p.exists() {
                return Err(KeyError::Exists {
                    path: p.display().to_string(),
                });
            }
        }
        // PKCS#8 v1, the seed alone: the form `openssl genpkey` writes. The v2 form with
        // the public key beside it is refused by OpenSSL 3.0 ("unsupported").
        let secret = ed25519_dalek::pkcs8::KeypairBytes {
            secret_key: self.key.to_bytes(),
            public_key: None,
        }
        .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
        .map_err(|e| KeyError::Encode(e.to_string()))?;
        write_new(path, secret.as_bytes(), true)?;
        write_new(&pub_path, self.public().pem()?.as_bytes(), false)?;
        Ok(pub_path)
    }
}

impl PublicKey {
    /// Reads a SubjectPublicKeyInfo PEM public key file (`-----BEGIN PUBLIC KEY-----`).
    pub fn read(path: &Path) -> Result<PublicKey, KeyError> {
        let text = read_small(path)?;
        PublicKey::from_pem(&text).map_err(|why| KeyError::Parse {
            path: path.display().to_string(),
            what: "public",
            why,
        })
    }

    /// Parses PEM text (a bundle's `MANIFEST.pub`).
    pub fn from_pem(text: &str) -> Result<PublicKey, String> {
        VerifyingKey::from_public_key_pem(text)
            .map(|key| PublicKey { key })
            .map_err(|e| e.to_string())
    }

    /// The PEM text, with a trailing newline.
    pub fn pem(&self) -> Result<String, KeyError> {
        self.key
            .to_public_key_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .map_err(|e| KeyError::Encode(e.to_string()))
    }

    /// `sha256:` and the hex SHA-256 of the SubjectPublicKeyInfo DER: what
    /// `openssl pkey -pubin -in KEY.pub -outform DER | sha256sum` prints.
    pub fn fingerprint(&self) -> String {
        let der = self
            .key
            .to_public_key_der()
            .map(|d| d.as_bytes().to_vec())
            // Encoding 32 octets in a fixed structure cannot fail; if it did, the raw key
            // still names it, and a mismatch with openssl's figure would show.
            .unwrap_or_else(|_| self.key.to_bytes().to_vec());
        format!("sha256:{}", super::sha256_hex(&der))
    }

    /// Whether `sig` is this key's signature of `msg`. Strict verification: it refuses
    /// the malleable and small-order forms that plain RFC 8032 verification lets through.
    pub fn verifies(&self, msg: &[u8], sig: &[u8]) -> bool {
        let Ok(sig) = Signature::from_slice(sig) else {
            return false;
        };
        self.key.verify_strict(msg, &sig).is_ok()
    }
}

/// `KEYFILE.pub` beside `KEYFILE`.
pub fn public_path(secret: &Path) -> PathBuf {
    let mut s = secret.as_os_str().to_owned();
    s.push(".pub");
    PathBuf::from(s)
}

fn read_small(path: &Path) -> Result<String, KeyError> {
    use std::io::Read;
    let io = |source| KeyError::Io {
        path: path.display().to_string(),
        source,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let mut text = String::new();
    f.take(MAX_KEY_FILE + 1)
        .read_to_string(&mut text)
        .map_err(io)?;
    if text.len() as u64 > MAX_KEY_FILE {
        return Err(KeyError::TooLarge {
            path: path.display().to_string(),
        });
    }
    Ok(text)
}

/// Creates `path` (never overwriting); a secret one is readable by its owner only from
/// the moment it exists, not after a later chmod.
fn write_new(path: &Path, body: &[u8], secret: bool) -> Result<(), KeyError> {
    use std::io::Write;
    let io = |source| KeyError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(if secret { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = secret;
    let mut f = o.open(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            KeyError::Exists {
                path: path.display().to_string(),
            }
        } else {
            io(source)
        }
    })?;
    f.write_all(body).and_then(|()| f.sync_all()).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_with_its_key_only() {
        let a = SecretKey::generate().unwrap();
        let b = SecretKey::generate().unwrap();
        let sig = a.sign(b"manifest");
        assert!(a.public().verifies(b"manifest", &sig));
        assert!(!a.public().verifies(b"manifest!", &sig));
        assert!(!b.public().verifies(b"manifest", &sig));
        assert!(!a.public().verifies(b"manifest", &sig[..63]));
        assert_eq!(sig, a.sign(b"manifest"), "Ed25519 is deterministic");
    }

    #[test]
    fn the_public_pem_round_trips_and_names_the_same_fingerprint() {
        let a = SecretKey::generate().unwrap();
        let pem = a.public().pem().unwrap();
        assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----\n"), "{pem}");
        let back = PublicKey::from_pem(&pem).unwrap();
        assert_eq!(back, a.public());
        let fp = back.fingerprint();
        assert!(fp.starts_with("sha256:") && fp.len() == 7 + 64, "{fp}");
        assert!(PublicKey::from_pem(
            "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"
        )
        .is_err());
    }

    #[test]
    fn a_written_pair_reads_back_owner_only_and_is_never_overwritten() {
        let dir = std::env::temp_dir().join(format!("swp-keys-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("k");
        let a = SecretKey::generate().unwrap();
        let pub_path = a.write_pair(&path).unwrap();
        assert_eq!(pub_path, dir.join("k.pub"));
        let back = SecretKey::read(&path).unwrap();
        assert_eq!(back.sign(b"m"), a.sign(b"m"));
        assert_eq!(PublicKey::read(&pub_path).unwrap(), a.public());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let again = SecretKey::generate().unwrap().write_pair(&path);
        assert!(matches!(again, Err(KeyError::Exists { .. })));
        assert_eq!(SecretKey::read(&path).unwrap().sign(b"m"), a.sign(b"m"));
        assert!(matches!(
            SecretKey::read(&pub_path),
            Err(KeyError::Parse { what: "secret", .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
