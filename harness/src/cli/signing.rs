//! `swp-conform keygen` and `swp-conform verify`: the command-line ends of signed evidence
//! bundles (`crate::evidence` holds the formats and the checks).

use super::{vector_set_digest, CliError};
use crate::catalog::Catalog;
use crate::evidence::keys::{PublicKey, SecretKey};
use crate::evidence::unpack::{self, BundleError};
use crate::evidence::verify::verify;
use std::io::Write;
use std::path::Path;

/// Prints a line; a closed stdout (`verify … | head -1`) ends the output, not the process
/// with a panic.
fn say(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// `swp-conform keygen --out KEYFILE`: writes a fresh key pair, `KEYFILE` (secret) and
/// `KEYFILE.pub`, and prints the fingerprint a vendor publishes with the public key.
pub fn keygen_cli(out: &Path) -> Result<bool, CliError> {
    let key = SecretKey::generate()?;
    let pub_path = key.write_pair(out)?;
    println!(
        "secret key: {} (keep it private; claim --sign reads it)",
        out.display()
    );
    println!("public key: {} (publish it)", pub_path.display());
    println!("fingerprint: {}", key.public().fingerprint());
    Ok(true)
}

/// `swp-conform verify BUNDLE [--key PUBKEY]`: prints `verified: …` (or `unsigned: …`) and
/// answers true, or prints one line per problem and answers false. A bundle that cannot
/// be unpacked safely is a problem too, not an error: it is the customer's answer.
pub fn verify_cli(bundle: &Path, key: Option<&Path>, cat: &Catalog) -> Result<bool, CliError> {
    let key = key.map(PublicKey::read).transpose()?;
    let b = match unpack::read_file(bundle) {
        Ok(b) => b,
        Err(e @ BundleError::Io { .. }) => return Err(e.into()),
        Err(e) => {
            say(&format!("{}: {e}", bundle.display()));
            say("not verified: the bundle could not be read safely");
            return Ok(false);
        }
    };
    let digest = vector_set_digest(cat)?;
    let o = verify(&b, key.as_ref(), cat, &digest);
    if o.problems.is_empty() {
        say(&o.summary());
        return Ok(true);
    }
    for p in &o.problems {
        say(&p.to_string());
    }
    say(&format!(
        "not verified: {} problem(s) in {}",
        o.problems.len(),
        bundle.display()
    ));
    Ok(false)
}
