//! `swp-conform verify`: what a customer checks in a bundle from a vendor. The signature
//! over `MANIFEST` (with the key they were given, or the bundle's own, which proves
//! nothing about who signed), every digest in it, that the files are exactly those it
//! lists, that the SUT manifest and catalog are the ones `report.json` was run with, and
//! that the class rules, run again on `report.json`, grant the claim it states, with the
//! profiles it adds to the class.

use super::keys::PublicKey;
use super::manifest::{Manifest, ManifestError};
use super::{sha256_hex, Bundle, MANIFEST, PUBLIC_KEY, SEAL_FILES, SIGNATURE};
use crate::catalog::Catalog;
use crate::report::model::Report;

/// One thing that does not hold; its text is the line `verify` prints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// No `MANIFEST`: nothing to check the files against.
    #[error("MANIFEST: missing: the bundle lists no digests (made before bundles were sealed, or stripped)")]
    NoManifest,
    /// The manifest does not parse.
    #[error("{0}")]
    BadManifest(ManifestError),
    /// The signature does not verify with the key the customer gave.
    #[error("signature: MANIFEST.sig does not verify with --key {given}; the bundle names {named} as its signer")]
    WrongKey {
        /// The fingerprint of `--key`.
        given: String,
        /// The fingerprint of `MANIFEST.pub`, or what is wrong with it.
        named: String,
    },
    /// The signature does not verify with the bundle's own key.
    #[error("signature: MANIFEST.sig does not verify with {key}: MANIFEST or its signature was changed after signing")]
    BadSignature {
        /// The key's fingerprint.
        key: String,
    },
    /// A signature with no key to check it against.
    #[error("signature: MANIFEST.sig has no MANIFEST.pub beside it; pass --key to check it")]
    NoPublicKey,
    /// `MANIFEST.pub` is not a key.
    #[error("MANIFEST.pub: not an Ed25519 public key in PEM ({0})")]
    BadPublicKey(String),
    /// A key with no signature.
    #[error("signature: MANIFEST.pub is present but MANIFEST.sig is missing")]
    NoSignature,
    /// The customer asked for a signer, and nobody signed.
    #[error("signature: the bundle is unsigned (no MANIFEST.sig), so --key {0} vouches for nothing in it")]
    Unsigned(String),
    /// A file's digest is not the one listed.
    #[error("{name}: changed: its sha256 is {found}, MANIFEST lists {listed}")]
    Changed {
        /// The file.
        name: String,
        /// Its digest.
        found: String,
        /// The listed digest.
        listed: String,
    },
    /// A listed file is absent.
    #[error("{0}: listed in MANIFEST but not in the bundle")]
    Missing(String),
    /// A file is not listed.
    #[error("{0}: in the bundle but not listed in MANIFEST")]
    Unlisted(String),
    /// No report, or not one: the claim cannot be re-derived.
    #[error("report.json: {0}; the claim cannot be re-derived")]
    BadReport(String),
    /// The manifest names a SUT manifest the bundle does not hold.
    #[error("sut-manifest: MANIFEST names {0}, which is not in the bundle")]
    NoSutManifest(String),
    /// The SUT manifest is not the one the report was run with.
    #[error("{name}: not the SUT manifest report.json was run with (its sha256 is {found}, the report's sut_manifest_sha256 is {ran})")]
    SutManifestSwapped {
        /// The file.
        name: String,
        /// Its digest.
        found: String,
        /// The report's.
        ran: String,
    },
    /// A header field of the manifest disagrees with the report.
    #[error("{field}: MANIFEST says {manifest}, report.json says {report}")]
    Disagrees {
        /// The manifest field.
        field: &'static str,
        /// The manifest's value.
        manifest: String,
        /// The report's.
        report: String,
    },
    /// The catalog here is not the one the claim was judged against.
    #[error("claim: cannot be re-derived: the bundle was judged against vector set sha256:{bundle}, the catalog here ({dir}) is sha256:{here}; pass --vectors with that catalog")]
    OtherCatalog {
        /// The bundle's vector set.
        bundle: String,
        /// This catalog's.
        here: String,
        /// Where this catalog is.
        dir: String,
    },
    /// The manifest names no class.
    #[error("class: {0:?} is not one of C0..C5")]
    UnknownClass(String),
    /// The manifest names a profile that is not one, or one its class already covers.
    #[error("profiles: {0}")]
    BadProfile(String),
    /// The manifest states a claim the class rules do not grant on the report.
    #[error("claim: the class rules do not support it: re-derived from report.json, {class} is {status}: {reason}")]
    NotSupported {
        /// The class.
        class: String,
        /// Its re-derived status.
        status: String,
        /// Its re-derived reason.
        reason: String,
    },
    /// The manifest's claim or status differs from the re-derived one.
    #[error("{field}: MANIFEST says {manifest:?}, the class rules re-derive {derived:?} from report.json")]
    Differs {
        /// `claim` or `status`.
        field: &'static str,
        /// The manifest's.
        manifest: String,
        /// The re-derived one.
        derived: String,
    },
}

/// Who vouches for the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signer {
    /// The key the customer gave (`--key`) signed it.
    Given(String),
    /// The bundle's own key signed it: anyone could have made that key.
    SelfAsserted(String),
    /// Nobody signed it.
    Unsigned,
}

/// What `verify` found.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The manifest, when it parsed.
    pub manifest: Option<Manifest>,
    /// Who signed it, when the signature held.
    pub signer: Signer,
    /// Everything that does not hold, in check order; empty when verified.
    pub problems: Vec<Problem>,
}

impl Outcome {
    /// The line `verify` prints when nothing failed: the claim and who signed it.
    pub fn summary(&self) -> String {
        let claim = match &self.manifest {
            Some(Manifest { claim: Some(c), .. }) => c.clone(),
            Some(m) if m.profiles.is_empty() => format!("no claim: {} is {}", m.class, m.status),
            Some(m) => format!(
                "no claim: {} + {} is {}",
                m.class,
                m.profiles.join(" + "),
                m.status
            ),
            None => "nothing".into(),
        };
        match &self.signer {
            Signer::Given(k) => format!("verified: {claim} by {k}"),
            Signer::SelfAsserted(k) => format!(
                "verified: {claim} by {k} (self-asserted: the key is the bundle's own MANIFEST.pub; pass --key with the signer's published key to know who signed)"
            ),
            Signer::Unsigned => format!(
                "unsigned: {claim}: every digest holds and the class rules agree, but no key signed the manifest"
            ),
        }
    }
}

/// Checks `b`: signed by `key` when given (else by its own key, or unsigned), intact, and
/// claiming what the class rules of `cat` (whose vector-set digest is `cat_digest`) grant
/// on its `report.json`.
pub fn verify(b: &Bundle, key: Option<&PublicKey>, cat: &Catalog, cat_digest: &str) -> Outcome {
    let mut out = Outcome {
        manifest: None,
        signer: Signer::Unsigned,
        problems: Vec::new(),
    };
    let Some(text) = b.get(MANIFEST) else {
        out.problems.push(Problem::NoManifest);
        return out;
    };
    out.signer = signature(b, text, key, &mut out.problems);
    let m = match Manifest::parse(text) {
        Ok(m) => m,
        Err(e) => {
            out.problems.push(Problem::BadManifest(e));
            return out;
        }
    };
    digests(b, &m, &mut out.problems);
    claim(b, &m, cat, cat_digest, &mut out.problems);
    out.manifest = Some(m);
    out
}

fn signature(b: &Bundle, text: &[u8], key: Option<&PublicKey>, p: &mut Vec<Problem>) -> Signer {
    let own = b.get(PUBLIC_KEY).map(|pem| {
        std::str::from_utf8(pem)
            .map_err(|_| "not UTF-8".to_owned())
            .and_then(PublicKey::from_pem)
    });
    let sig = b.get(SIGNATURE);
    match (sig, key, own) {
        (None, Some(k), _) => {
            p.push(Problem::Unsigned(k.fingerprint()));
            Signer::Unsigned
        }
        (None, None, Some(_)) => {
            p.push(Problem::NoSignature);
            Signer::Unsigned
        }
        (None, None, None) => Signer::Unsigned,
        (Some(sig), Some(k), own) => {
            if k.verifies(text, sig) {
                return Signer::Given(k.fingerprint());
            }
            let named = match own {
                Some(Ok(o)) => o.fingerprint(),
                Some(Err(_)) => "an unreadable MANIFEST.pub".into(),
                None => "no key (no MANIFEST.pub)".into(),
            };
            p.push(Problem::WrongKey {
                given: k.fingerprint(),
                named,
            });
            Signer::Unsigned
        }
        (Some(_), None, None) => {
            p.push(Problem::NoPublicKey);
            Signer::Unsigned
        }
        (Some(_), None, Some(Err(why))) => {
            p.push(Problem::BadPublicKey(why));
            Signer::Unsigned
        }
        (Some(sig), None, Some(Ok(o))) => {
            if o.verifies(text, sig) {
                Signer::SelfAsserted(o.fingerprint())
            } else {
                p.push(Problem::BadSignature {
                    key: o.fingerprint(),
                });
                Signer::Unsigned
            }
        }
    }
}

fn digests(b: &Bundle, m: &Manifest, p: &mut Vec<Problem>) {
    for (name, listed) in &m.files {
        match b.get(name) {
            None => p.push(Problem::Missing(name.clone())),
            Some(body) => {
                let found = sha256_hex(body);
                if &found != listed {
                    p.push(Problem::Changed {
                        name: name.clone(),
                        found,
                        listed: listed.clone(),
                    });
                }
            }
        }
    }
    for (name, _) in &b.files {
        if !m.files.contains_key(name) && !SEAL_FILES.contains(&name.as_str()) {
            p.push(Problem::Unlisted(name.clone()));
        }
    }
}

/// The report is checked against the manifest and the SUT manifest, then its claim is
/// re-derived; each disagreement is its own line.
fn claim(b: &Bundle, m: &Manifest, cat: &Catalog, cat_digest: &str, p: &mut Vec<Problem>) {
    let Some(text) = b.get("report.json") else {
        p.push(Problem::BadReport("not in the bundle".into()));
        return;
    };
    let rep = match std::str::from_utf8(text)
        .map_err(|e| e.to_string())
        .and_then(|t| Report::from_json(t).map_err(|e| e.to_string()))
    {
        Ok(r) => r,
        Err(e) => {
            p.push(Problem::BadReport(format!("not a report ({e})")));
            return;
        }
    };
    let Some(d) = &rep.digests else {
        p.push(Problem::BadReport("it has no digests".into()));
        return;
    };
    match b.get(&m.sut_manifest) {
        None => p.push(Problem::NoSutManifest(m.sut_manifest.clone())),
        Some(body) => {
            let found = sha256_hex(body);
            if found != d.sut_manifest_sha256 {
                p.push(Problem::SutManifestSwapped {
                    name: m.sut_manifest.clone(),
                    found,
                    ran: d.sut_manifest_sha256.clone(),
                });
            }
        }
    }
    for (field, manifest, report) in [
        ("catalog-sha256", &m.catalog_sha256, &d.vector_set_sha256),
        ("harness", &m.harness, &rep.harness),
    ] {
        if manifest != report {
            p.push(Problem::Disagrees {
                field,
                manifest: manifest.clone(),
                report: report.clone(),
            });
        }
    }
    if d.vector_set_sha256 != cat_digest {
        p.push(Problem::OtherCatalog {
            bundle: d.vector_set_sha256.clone(),
            here: cat_digest.to_owned(),
            dir: cat.dir.display().to_string(),
        });
        return;
    }
    let Ok(class) = m.class.parse::<crate::catalog::class::Class>() else {
        p.push(Problem::UnknownClass(m.class.clone()));
        return;
    };
    let mut profiles = Vec::new();
    for name in &m.profiles {
        match name.parse::<crate::catalog::class::Profile>() {
            Ok(pr) if !class.covers(pr) && !profiles.contains(&pr) => profiles.push(pr),
            Ok(pr) => {
                p.push(Problem::BadProfile(format!(
                    "{pr} is named twice or already required by {class}"
                )));
                return;
            }
            Err(e) => {
                p.push(Problem::BadProfile(e.to_string()));
                return;
            }
        }
    }
    // The same function `claim` granted it with: the class rules over the class's and the
    // profiles' namespaces.
    let derived = rep.claim_verdict(cat, class, &profiles);
    let (status, reason, line) = match &derived {
        Some(v) => (v.status.as_str(), v.reason.as_str(), v.claim.as_deref()),
        None => (
            "untested",
            "the report ran no vector of a class's namespaces",
            None,
        ),
    };
    if m.claim.is_some() && line.is_none() {
        let mut class = m.class.clone();
        for pr in &m.profiles {
            class.push_str(&format!(" + {pr}"));
        }
        p.push(Problem::NotSupported {
            class,
            status: status.into(),
            reason: reason.into(),
        });
    } else if m.claim.as_deref() != line {
        p.push(Problem::Differs {
            field: "claim",
            manifest: m.claim.clone().unwrap_or_else(|| "none".into()),
            derived: line.unwrap_or("none").into(),
        });
    } else if m.status != status {
        p.push(Problem::Differs {
            field: "status",
            manifest: m.status.clone(),
            derived: status.into(),
        });
    }
}
