//! Test PKI generated at run time (rcgen): a trusted CA, the SUT's server certificate, the
//! harness's client identity, a second client identity from the same CA (the authorization
//! vectors that need two peers), and the bad variants the S1 vectors need (an expired client
//! certificate, one from an untrusted CA). Nothing here is checked in: keys are made fresh.

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use std::path::{Path, PathBuf};

/// The SAN URI of the harness's client certificate: the identity a conformant S1 endpoint
/// surfaces to its profile layer, in the form its manifest declares (`tls.identity_form`).
pub const CLIENT_IDENTITY: &str = "spiffe://swp-conform.test/harness-client";

/// The common name of the harness's client certificate.
pub const CLIENT_CN: &str = "harness-client";

/// The common name of the harness's second client certificate.
pub const SECOND_CLIENT_CN: &str = "harness-client-2";

/// The SAN URI of the harness's second client certificate: a peer the SUT authenticates
/// like the first but authorizes less (a manifest says what it may not do).
pub const SECOND_CLIENT_IDENTITY: &str = "spiffe://swp-conform.test/harness-client-2";

/// PEM files of a generated PKI.
#[derive(Debug, Clone)]
pub struct Pki {
    /// Directory holding the files.
    pub dir: PathBuf,
    /// The CA that signed the server and client certificates (trust anchor for both sides).
    pub ca: PathBuf,
    /// The SUT's certificate (SAN `localhost`, `127.0.0.1`).
    pub server_cert: PathBuf,
    /// Its key.
    pub server_key: PathBuf,
    /// The harness's valid client certificate.
    pub client_cert: PathBuf,
    /// Its key.
    pub client_key: PathBuf,
    /// The harness's second valid client certificate ([`SECOND_CLIENT_IDENTITY`]).
    pub second_cert: PathBuf,
    /// Its key.
    pub second_key: PathBuf,
    /// A client certificate from the same CA whose validity ended in 2020.
    pub expired_cert: PathBuf,
    /// Its key.
    pub expired_key: PathBuf,
    /// A client certificate from a CA the SUT does not trust.
    pub untrusted_cert: PathBuf,
    /// Its key.
    pub untrusted_key: PathBuf,
}

/// Generating or writing the PKI failed.
#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    /// rcgen failed.
    #[error("certificate generation: {0}")]
    Gen(#[from] rcgen::Error),
    /// Writing a file failed.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
}

fn ca(cn: &str) -> Result<(CertificateParams, KeyPair, String), PkiError> {
    let key = KeyPair::generate()?;
    let mut p = CertificateParams::new(Vec::<String>::new())?;
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, cn);
    p.distinguished_name = dn;
    let pem = p.self_signed(&key)?.pem();
    Ok((p, key, pem))
}

fn leaf(
    issuer: &Issuer<'_, KeyPair>,
    cn: &str,
    sans: Vec<SanType>,
    expired: bool,
) -> Result<(String, String), PkiError> {
    let key = KeyPair::generate()?;
    let mut p = CertificateParams::new(Vec::<String>::new())?;
    p.subject_alt_names = sans;
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, cn);
    p.distinguished_name = dn;
    if expired {
        p.not_before = rcgen::date_time_ymd(2019, 1, 1);
        p.not_after = rcgen::date_time_ymd(2020, 1, 1);
    }
    let cert = p.signed_by(&key, issuer)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// Generates a fresh PKI into `dir` (created if needed).
pub fn generate(dir: &Path) -> Result<Pki, PkiError> {
    std::fs::create_dir_all(dir).map_err(|e| PkiError::Io(dir.display().to_string(), e))?;
    let write = |name: &str, text: &str| -> Result<PathBuf, PkiError> {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| PkiError::Io(p.display().to_string(), e))?;
        Ok(p)
    };
    let (ca_params, ca_key, ca_pem) = ca("swp-conform test CA")?;
    let issuer = Issuer::new(ca_params, ca_key);
    let (rogue_params, rogue_key, _) = ca("swp-conform untrusted CA")?;
    let rogue = Issuer::new(rogue_params, rogue_key);
    let server_sans = vec![
        SanType::DnsName("localhost".try_into()?),
        SanType::IpAddress(std::net::IpAddr::from([127, 0, 0, 1])),
    ];
    let sans =
        |uri: &str| -> Result<Vec<SanType>, PkiError> { Ok(vec![SanType::URI(uri.try_into()?)]) };
    let client_sans = || sans(CLIENT_IDENTITY);
    let (server, server_key) = leaf(&issuer, "swp-sut", server_sans, false)?;
    let (client, client_key) = leaf(&issuer, CLIENT_CN, client_sans()?, false)?;
    let (second, second_key) = leaf(
        &issuer,
        SECOND_CLIENT_CN,
        sans(SECOND_CLIENT_IDENTITY)?,
        false,
    )?;
    let (expired, expired_key) = leaf(&issuer, "harness-client-expired", client_sans()?, true)?;
    let (untrusted, untrusted_key) =
        leaf(&rogue, "harness-client-untrusted", client_sans()?, false)?;
    Ok(Pki {
        dir: dir.to_owned(),
        ca: write("ca.pem", &ca_pem)?,
        server_cert: write("server.pem", &server)?,
        server_key: write("server.key", &server_key)?,
        client_cert: write("client.pem", &client)?,
        client_key: write("client.key", &client_key)?,
        second_cert: write("client-2.pem", &second)?,
        second_key: write("client-2.key", &second_key)?,
        expired_cert: write("client-expired.pem", &expired)?,
        expired_key: write("client-expired.key", &expired_key)?,
        untrusted_cert: write("client-untrusted.pem", &untrusted)?,
        untrusted_key: write("client-untrusted.key", &untrusted_key)?,
    })
}
