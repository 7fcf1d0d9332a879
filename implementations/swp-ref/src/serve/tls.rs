//! TLS for `tls://` (the S1 annex's TLS/mTLS mapping): the rustls server configuration with
//! the ring provider, PEM loading, client-certificate verification, and the peer identity
//! surfaced to the profile layer, read from the one certificate field the operator declares.

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, SupportedProtocolVersion};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use x509_parser::extensions::GeneralName;

/// What `tls://` needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsOptions {
    /// Server certificate chain, PEM, leaf first.
    pub cert: PathBuf,
    /// Server private key, PEM.
    pub key: PathBuf,
    /// When set, clients must present a certificate that chains to one of these CAs.
    pub client_ca: Option<PathBuf>,
    /// Refuse TLS 1.2.
    pub tls13_only: bool,
    /// The client-certificate field a verified client's identity is read from (only
    /// meaningful with `client_ca`).
    pub identity_field: IdentityField,
}

/// The one client-certificate field the peer identity is read from (`--identity-field`).
///
/// One declared field, never a precedence across fields: S1 §2.2 asks for a stable identity
/// and the S1 annex for no ambiguous precedence, and a fallback from one field to another
/// lets a certificate choose which field it is judged by (a DNS SAN spelled like a SPIFFE
/// URI would otherwise pass for one; docs/spec-issues.md SI-048).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum IdentityField {
    /// The URI subject alternative name (a SPIFFE id, say).
    #[default]
    SanUri,
    /// The DNS subject alternative name.
    SanDns,
    /// The subject's common name.
    Cn,
}

impl std::fmt::Display for IdentityField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IdentityField::SanUri => "URI SAN",
            IdentityField::SanDns => "DNS SAN",
            IdentityField::Cn => "subject common name",
        })
    }
}

/// Why a verified client certificate yields no identity; the connection is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    /// The peer presented no certificate.
    #[error("the peer presented no client certificate")]
    NoCertificate,
    /// The certificate, or the part of it holding the field, could not be parsed.
    #[error("the client certificate could not be read: {0}")]
    Unreadable(String),
    /// The declared field is absent or empty.
    #[error("the client certificate has no {0}, the field identities are read from")]
    Missing(IdentityField),
    /// The declared field has several values: no rule says which one names the peer.
    #[error(
        "the client certificate has {count} values of the {field}, the field identities are \
         read from; which one names the peer would be a guess"
    )]
    Ambiguous {
        /// The field.
        field: IdentityField,
        /// How many values it has.
        count: usize,
    },
    /// The value holds control characters: no URI, DNS name or common name does, and the
    /// identity is written into logs and replies.
    #[error("the {0} of the client certificate holds control characters")]
    ControlCharacters(IdentityField),
}

/// The TLS configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// A PEM file could not be read or parsed.
    #[error("{what} {path}: {source}")]
    Pem {
        /// Which file this is.
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// Why.
        source: rustls::pki_types::pem::Error,
    },
    /// A PEM file held no certificate.
    #[error("{what} {path} holds no certificate")]
    NoCertificate {
        /// Which file this is.
        what: &'static str,
        /// Its path.
        path: PathBuf,
    },
    /// A CA certificate was not usable as a trust anchor.
    #[error("client CA {path}: {source}")]
    TrustAnchor {
        /// Its path.
        path: PathBuf,
        /// Why.
        source: rustls::Error,
    },
    /// The client-certificate verifier could not be built.
    #[error("client certificate verifier: {0}")]
    Verifier(#[from] rustls::server::VerifierBuilderError),
    /// rustls refused the configuration (protocol versions, certificate/key mismatch).
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
}

/// The crypto provider, chosen explicitly: the process-wide default is ambiguous (and
/// `ServerConfig::builder` panics) when two providers are compiled in.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn certs(what: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    let pem = |source| TlsSetupError::Pem {
        what,
        path: path.to_owned(),
        source,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(pem)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem)?;
    if certs.is_empty() {
        return Err(TlsSetupError::NoCertificate {
            what,
            path: path.to_owned(),
        });
    }
    Ok(certs)
}

/// Builds the server configuration. TLS 1.3 and 1.2 are offered unless `tls13_only`; with
/// a client CA, a client without a valid certificate fails the handshake (fail closed).
pub fn server_config(opts: &TlsOptions) -> Result<Arc<ServerConfig>, TlsSetupError> {
    let provider = provider();
    let chain = certs("certificate", &opts.cert)?;
    let key = PrivateKeyDer::from_pem_file(&opts.key).map_err(|source| TlsSetupError::Pem {
        what: "private key",
        path: opts.key.clone(),
        source,
    })?;
    let versions: &[&'static SupportedProtocolVersion] = if opts.tls13_only {
        &[&rustls::version::TLS13]
    } else {
        &[&rustls::version::TLS13, &rustls::version::TLS12]
    };
    let builder =
        ServerConfig::builder_with_provider(provider.clone()).with_protocol_versions(versions)?;
    let builder = match &opts.client_ca {
        Some(path) => {
            let mut roots = RootCertStore::empty();
            for c in certs("client CA", path)? {
                roots.add(c).map_err(|source| TlsSetupError::TrustAnchor {
                    path: path.clone(),
                    source,
                })?;
            }
            let verifier =
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider).build()?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(builder.with_single_cert(chain, key)?))
}

/// The identity of a verified client: the one value of `field` in its leaf certificate.
/// Other fields are never read, whatever they look like; none, an empty one, or several
/// values of the field is an error, and the caller refuses the connection.
pub fn peer_identity(
    conn: &rustls::ServerConnection,
    field: IdentityField,
) -> Result<String, IdentityError> {
    let leaf = conn
        .peer_certificates()
        .and_then(<[_]>::first)
        .ok_or(IdentityError::NoCertificate)?;
    identity_of(leaf, field)
}

/// [`peer_identity`] for one DER certificate.
pub fn identity_of(der: &[u8], field: IdentityField) -> Result<String, IdentityError> {
    let unreadable = |e: &dyn std::fmt::Display| IdentityError::Unreadable(e.to_string());
    let (_, cert) = x509_parser::parse_x509_certificate(der).map_err(|e| unreadable(&e))?;
    let values: Vec<&str> = match field {
        IdentityField::SanUri | IdentityField::SanDns => {
            // A duplicated or malformed SAN extension is an error here, not "no SAN".
            let san = cert
                .subject_alternative_name()
                .map_err(|e| unreadable(&e))?;
            let names = san.map_or(&[][..], |s| &s.value.general_names[..]);
            names
                .iter()
                .filter_map(|n| match (field, n) {
                    (IdentityField::SanUri, GeneralName::URI(u)) => Some(*u),
                    (IdentityField::SanDns, GeneralName::DNSName(d)) => Some(*d),
                    _ => None,
                })
                .collect()
        }
        IdentityField::Cn => cert
            .subject()
            .iter_common_name()
            .map(|a| a.as_str().map_err(|e| unreadable(&e)))
            .collect::<Result<_, _>>()?,
    };
    match values[..] {
        [] | [""] => Err(IdentityError::Missing(field)),
        [one] if one.chars().any(char::is_control) => Err(IdentityError::ControlCharacters(field)),
        [one] => Ok(one.to_owned()),
        _ => Err(IdentityError::Ambiguous {
            field,
            count: values.len(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{CertificateParams, KeyPair, SanType};

    /// A certificate with these SANs and an empty subject (rcgen's default has a CN).
    fn cert_with(sans: Vec<SanType>) -> Vec<u8> {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::default();
        p.distinguished_name = rcgen::DistinguishedName::new();
        p.subject_alt_names = sans;
        p.self_signed(&key).unwrap().der().to_vec()
    }

    fn dns(s: &str) -> SanType {
        SanType::DnsName(s.try_into().unwrap())
    }

    fn uri(s: &str) -> SanType {
        SanType::URI(s.try_into().unwrap())
    }

    fn ip(s: &str) -> SanType {
        SanType::IpAddress(s.parse().unwrap())
    }

    fn with_cn(cn: &str, sans: Vec<SanType>) -> Vec<u8> {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::default();
        p.distinguished_name = rcgen::DistinguishedName::new();
        p.distinguished_name.push(rcgen::DnType::CommonName, cn);
        p.subject_alt_names = sans;
        p.self_signed(&key).unwrap().der().to_vec()
    }

    use IdentityField::{Cn, SanDns, SanUri};

    #[test]
    fn the_identity_is_the_one_value_of_the_declared_field() {
        let der = with_cn(
            "alice",
            vec![dns("a.test"), uri("spiffe://t/one"), ip("127.0.0.1")],
        );
        assert_eq!(identity_of(&der, SanUri).as_deref(), Ok("spiffe://t/one"));
        assert_eq!(identity_of(&der, SanDns).as_deref(), Ok("a.test"));
        assert_eq!(identity_of(&der, Cn).as_deref(), Ok("alice"));
    }

    #[test]
    fn a_field_is_never_read_as_another() {
        // The reproduced defect: a DNS SAN spelled like a SPIFFE id passed for a URI SAN.
        let der = cert_with(vec![dns("spiffe://t/alice")]);
        assert_eq!(
            identity_of(&der, SanUri),
            Err(IdentityError::Missing(SanUri))
        );
        let der = cert_with(vec![uri("spiffe://t/alice")]);
        assert_eq!(
            identity_of(&der, SanDns),
            Err(IdentityError::Missing(SanDns))
        );
        // A common name is not a SAN, nor the other way round.
        let der = with_cn("spiffe://t/alice", vec![]);
        assert_eq!(
            identity_of(&der, SanUri),
            Err(IdentityError::Missing(SanUri))
        );
        let der = with_cn("", vec![uri("spiffe://t/alice")]);
        assert_eq!(identity_of(&der, Cn), Err(IdentityError::Missing(Cn)));
    }

    #[test]
    fn no_value_several_values_or_no_certificate_is_no_identity() {
        for field in [SanUri, SanDns, Cn] {
            let none = cert_with(vec![ip("127.0.0.1")]);
            assert_eq!(
                identity_of(&none, field),
                Err(IdentityError::Missing(field))
            );
            assert!(matches!(
                identity_of(b"not a certificate", field),
                Err(IdentityError::Unreadable(_))
            ));
        }
        let two = cert_with(vec![uri("spiffe://t/one"), uri("spiffe://t/two")]);
        assert_eq!(
            identity_of(&two, SanUri),
            Err(IdentityError::Ambiguous {
                field: SanUri,
                count: 2
            })
        );
        let two = cert_with(vec![dns("a.test"), dns("b.test")]);
        assert!(matches!(
            identity_of(&two, SanDns),
            Err(IdentityError::Ambiguous { count: 2, .. })
        ));
        let der = cert_with(vec![uri("spiffe://t/a\nb")]);
        assert_eq!(
            identity_of(&der, SanUri),
            Err(IdentityError::ControlCharacters(SanUri))
        );
    }

    #[test]
    fn missing_files_are_reported_with_their_path() {
        let opts = TlsOptions {
            cert: "/nonexistent/cert.pem".into(),
            key: "/nonexistent/key.pem".into(),
            client_ca: None,
            tls13_only: false,
            identity_field: IdentityField::default(),
        };
        let e = server_config(&opts).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/cert.pem"), "{e}");
    }
}
