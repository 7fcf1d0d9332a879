//! TLS for `tls://` (the S1 annex's TLS/mTLS mapping): the rustls server configuration with
//! the ring provider, PEM loading, client-certificate verification, and the peer identity
//! surfaced to the profile layer.

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

/// The identity of a verified client: the first URI SAN of its leaf certificate, else the
/// first DNS SAN, else none. One fixed precedence, as the S1 annex §2 asks ("avoid
/// ambiguous identity precedence rules").
pub fn peer_identity(conn: &rustls::ServerConnection) -> Option<String> {
    identity_of(conn.peer_certificates()?.first()?)
}

/// [`peer_identity`] for one DER certificate.
pub fn identity_of(der: &[u8]) -> Option<String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let san = cert.subject_alternative_name().ok()??;
    let names = &san.value.general_names;
    let uri = names.iter().find_map(|n| match n {
        GeneralName::URI(u) => Some(*u),
        _ => None,
    });
    let dns = || {
        names.iter().find_map(|n| match n {
            GeneralName::DNSName(d) => Some(*d),
            _ => None,
        })
    };
    uri.or_else(dns).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{CertificateParams, KeyPair, SanType};

    fn cert_with(sans: Vec<SanType>) -> Vec<u8> {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::default();
        p.subject_alt_names = sans;
        p.self_signed(&key).unwrap().der().to_vec()
    }

    fn dns(s: &str) -> SanType {
        SanType::DnsName(s.try_into().unwrap())
    }

    fn uri(s: &str) -> SanType {
        SanType::URI(s.try_into().unwrap())
    }

    #[test]
    fn identity_is_the_first_uri_san_else_the_first_dns_san() {
        let der = cert_with(vec![
            dns("a.test"),
            uri("spiffe://t/one"),
            uri("spiffe://t/two"),
        ]);
        assert_eq!(identity_of(&der).as_deref(), Some("spiffe://t/one"));
        let der = cert_with(vec![dns("a.test"), dns("b.test")]);
        assert_eq!(identity_of(&der).as_deref(), Some("a.test"));
        let der = cert_with(vec![SanType::IpAddress("127.0.0.1".parse().unwrap())]);
        assert_eq!(identity_of(&der), None);
        assert_eq!(identity_of(&cert_with(vec![])), None);
        assert_eq!(identity_of(b"not a certificate"), None);
    }

    #[test]
    fn missing_files_are_reported_with_their_path() {
        let opts = TlsOptions {
            cert: "/nonexistent/cert.pem".into(),
            key: "/nonexistent/key.pem".into(),
            client_ca: None,
            tls13_only: false,
        };
        let e = server_config(&opts).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/cert.pem"), "{e}");
    }
}
