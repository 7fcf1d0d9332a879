//! Signed evidence bundles end to end, through the binary: `keygen`, `claim --sign` on the
//! reference over TLS (C0, the smallest class it passes), and `verify` on the bundle as
//! written and on copies tampered with the ways a customer must catch: a changed report, a
//! swapped SUT manifest or MANIFEST, another key, and a report edited and re-signed so only
//! the class rules can tell. Each failure is asserted by its line, not by its exit status.
//! The openssl and sha256sum recipes of `docs/report-format.md` run here too.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use swp_conform::evidence::keys::SecretKey;
use swp_conform::evidence::manifest::Manifest;
use swp_conform::evidence::{unpack, Bundle};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swp-conform"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run swp-conform")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// What the one claim run of this test process left: the bundle, the signing key pair,
/// another key pair, and the bundle of a second (in-process, unclaimed) run.
struct Fixture {
    dir: PathBuf,
    bundle: PathBuf,
    key: PathBuf,
    fingerprint: String,
    other_key: PathBuf,
    other_fingerprint: String,
    other_bundle: PathBuf,
    claim_line: String,
}

fn keygen(dir: &Path, name: &str) -> (PathBuf, String) {
    let k = dir.join(name);
    let o = bin(&["keygen", "--out", s(&k)]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let fp = out
        .lines()
        .find_map(|l| l.strip_prefix("fingerprint: "))
        .unwrap_or_else(|| panic!("no fingerprint: {out}"))
        .to_owned();
    (k, fp)
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = root().join("target/verify-test");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (key, fingerprint) = keygen(&dir, "vendor.key");
        let (other_key, other_fingerprint) = keygen(&dir, "other.key");
        let out = dir.join("claim");
        let sut = root().join("implementations/manifests/reference-tls.yaml");
        let o = bin(&[
            "claim",
            "--class",
            "C0",
            "--sut",
            s(&sut),
            "--out",
            s(&out),
            "--sign",
            s(&key),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            stdout.contains(&format!("signed: MANIFEST by {fingerprint}\n")),
            "{stdout}"
        );
        let claim_line = stdout.lines().next().unwrap_or("").to_owned();
        assert!(claim_line.starts_with("SWP C0 — swp-ref"), "{stdout}");
        // A second bundle, signed by the same vendor: its MANIFEST is genuine, but not
        // this bundle's.
        let other_out = dir.join("claim-inproc");
        let o = bin(&[
            "claim",
            "--class",
            "C0",
            "--out",
            s(&other_out),
            "--sign",
            s(&key),
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        Fixture {
            bundle: out.join("evidence-C0.tar.gz"),
            other_bundle: other_out.join("evidence-C0.tar.gz"),
            dir,
            key,
            fingerprint,
            other_key,
            other_fingerprint,
            claim_line,
        }
    })
}

fn read(p: &Path) -> Bundle {
    unpack::read_file(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Writes `b` as `<name>.tar.gz` beside the fixture.
fn write(b: &Bundle, name: &str) -> PathBuf {
    let p = fixture().dir.join(format!("{name}.tar.gz"));
    std::fs::write(&p, b.pack().unwrap()).unwrap();
    p
}

/// Re-seals `b` from its own MANIFEST's header, signed with `key` (or unsigned): what a
/// vendor with the key can always do.
fn reseal(b: &mut Bundle, key: Option<&Path>) {
    let m = Manifest::parse(b.get("MANIFEST").unwrap()).unwrap();
    let k = key.map(|k| SecretKey::read(k).unwrap());
    b.seal(m, k.as_ref()).unwrap();
}

/// `verify`'s exit status and its stdout lines.
fn verify(bundle: &Path, key: Option<&Path>) -> (Option<i32>, Vec<String>) {
    let mut args = vec!["verify", s(bundle)];
    if let Some(k) = key {
        args.extend(["--key", s(k)]);
    }
    let o = bin(&args);
    let lines = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    (o.status.code(), lines)
}

/// The public key file of a secret key file.
fn public(k: &Path) -> PathBuf {
    swp_conform::evidence::keys::public_path(k)
}

/// Asserts `verify` failed with exactly these problems (prefix of each line), then the
/// closing line.
fn assert_problems(got: (Option<i32>, Vec<String>), want: &[&str]) {
    let (code, lines) = got;
    assert_eq!(code, Some(1), "{lines:#?}");
    assert_eq!(lines.len(), want.len() + 1, "{lines:#?}");
    for (l, w) in lines.iter().zip(want) {
        assert!(
            l.starts_with(w),
            "expected a line starting {w:?}, got {l:?}"
        );
    }
    assert!(lines[want.len()].starts_with(&format!("not verified: {} problem(s)", want.len())));
}

#[test]
fn a_signed_claim_round_trips_through_verify() {
    let f = fixture();
    let (code, lines) = verify(&f.bundle, Some(&public(&f.key)));
    assert_eq!(code, Some(0), "{lines:#?}");
    assert_eq!(
        lines,
        [format!("verified: {} by {}", f.claim_line, f.fingerprint)]
    );
    // Without --key the bundle's own key is used, and the output says what that is worth.
    let (code, lines) = verify(&f.bundle, None);
    assert_eq!(code, Some(0), "{lines:#?}");
    assert!(
        lines.len() == 1
            && lines[0].starts_with(&format!(
                "verified: {} by {} (self-asserted",
                f.claim_line, f.fingerprint
            )),
        "{lines:#?}"
    );
}

#[test]
fn the_bundle_and_its_signature_are_the_same_for_the_same_files() {
    let f = fixture();
    let written = std::fs::read(&f.bundle).unwrap();
    let mut b = read(&f.bundle);
    assert_eq!(b.root, "evidence-C0");
    let names: Vec<&str> = b.files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[0], "MANIFEST", "{names:?}");
    for want in [
        "MANIFEST.sig",
        "MANIFEST.pub",
        "report.json",
        "manifest/reference-tls.yaml",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    reseal(&mut b, Some(&f.key));
    assert_eq!(
        b.pack().unwrap(),
        written,
        "re-sealing the same files changed the octets"
    );
}

#[test]
fn a_tampered_report_fails_on_its_digest() {
    let f = fixture();
    let mut b = read(&f.bundle);
    let mut report = b.get("report.json").unwrap().to_vec();
    // One byte of the run block's timestamp: still a valid report granting the same
    // claim, so only the digest can tell.
    let at = find(&report, b"\"timestamp_utc\": \"") + 18;
    report[at] = if report[at] == b'1' { b'2' } else { b'1' };
    b.put("report.json", report);
    let p = write(&b, "tampered-report");
    assert_problems(
        verify(&p, Some(&public(&f.key))),
        &["report.json: changed: its sha256 is "],
    );
}

#[test]
fn a_swapped_sut_manifest_fails_even_when_re_signed() {
    let f = fixture();
    let mut b = read(&f.bundle);
    let other =
        std::fs::read(root().join("implementations/manifests/reference-tls-load.yaml")).unwrap();
    b.put("manifest/reference-tls.yaml", other);
    let p = write(&b, "swapped-sut-manifest");
    assert_problems(
        verify(&p, Some(&public(&f.key))),
        &[
            "manifest/reference-tls.yaml: changed: its sha256 is ",
            "manifest/reference-tls.yaml: not the SUT manifest report.json was run with",
        ],
    );
    // The key holder re-signs the swap: the digests hold, the report still tells.
    reseal(&mut b, Some(&f.key));
    let p = write(&b, "swapped-sut-manifest-resigned");
    assert_problems(
        verify(&p, Some(&public(&f.key))),
        &["manifest/reference-tls.yaml: not the SUT manifest report.json was run with"],
    );
}

#[test]
fn another_bundles_manifest_fails_on_the_files_it_does_not_describe() {
    let f = fixture();
    let mut b = read(&f.bundle);
    let o = read(&f.other_bundle);
    for seal in ["MANIFEST", "MANIFEST.sig", "MANIFEST.pub"] {
        b.put(seal, o.get(seal).unwrap().to_vec());
    }
    let p = write(&b, "swapped-manifest");
    let (code, lines) = verify(&p, Some(&public(&f.key)));
    assert_eq!(code, Some(1), "{lines:#?}");
    // The signature is genuine (same vendor), so what fails is every file it lists.
    assert!(
        !lines.iter().any(|l| l.starts_with("signature:")),
        "{lines:#?}"
    );
    for want in [
        "report.json: changed: its sha256 is ",
        "manifest/sut-manifest.yaml: listed in MANIFEST but not in the bundle",
        "manifest/reference-tls.yaml: in the bundle but not listed in MANIFEST",
        "sut-manifest: MANIFEST names manifest/sut-manifest.yaml, which is not in the bundle",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(want)),
            "{want:?} not in {lines:#?}"
        );
    }
}

#[test]
fn another_key_fails_on_the_signature() {
    let f = fixture();
    assert_problems(
        verify(&f.bundle, Some(&public(&f.other_key))),
        &[&format!(
            "signature: MANIFEST.sig does not verify with --key {}; the bundle names {} as its signer",
            f.other_fingerprint, f.fingerprint
        )],
    );
}

#[test]
fn a_report_edited_and_re_signed_fails_on_the_class_rules() {
    let f = fixture();
    let mut b = read(&f.bundle);
    let mut rep: serde_json::Value = serde_json::from_slice(b.get("report.json").unwrap()).unwrap();
    let results = rep["results"].as_array_mut().unwrap();
    let r = results
        .iter_mut()
        .find(|r| r["vector_id"] == "core_0001_valid_min_frame")
        .expect("core_0001 ran");
    assert_eq!(r["verdict"], "pass");
    r["verdict"] = "fail".into();
    r["pass"] = false.into();
    b.put("report.json", serde_json::to_vec_pretty(&rep).unwrap());
    reseal(&mut b, Some(&f.key));
    let p = write(&b, "unsupported-claim");
    assert_problems(
        verify(&p, Some(&public(&f.key))),
        &["claim: the class rules do not support it: re-derived from report.json, C0 is fail: 1 vector(s) failed at MUST level: core_0001_valid_min_frame"],
    );
}

#[test]
fn an_unsigned_bundle_has_its_digests_checked_and_says_unsigned() {
    let f = fixture();
    let mut b = read(&f.bundle);
    reseal(&mut b, None);
    assert!(b.get("MANIFEST.sig").is_none() && b.get("MANIFEST.pub").is_none());
    let p = write(&b, "unsigned");
    let (code, lines) = verify(&p, None);
    assert_eq!(code, Some(0), "{lines:#?}");
    assert!(
        lines.len() == 1
            && lines[0].starts_with(&format!("unsigned: {}: every digest holds", f.claim_line)),
        "{lines:#?}"
    );
    assert_problems(
        verify(&p, Some(&public(&f.key))),
        &["signature: the bundle is unsigned (no MANIFEST.sig), so --key"],
    );
    let mut extra = b.clone();
    extra.put("extra.txt", b"unlisted".to_vec());
    extra.files.retain(|(n, _)| n != "versions.txt");
    let p = write(&extra, "unsigned-extra");
    assert_problems(
        verify(&p, None),
        &[
            "versions.txt: listed in MANIFEST but not in the bundle",
            "extra.txt: in the bundle but not listed in MANIFEST",
        ],
    );
}

#[test]
fn a_bundle_that_climbs_out_is_refused_before_anything_is_checked() {
    let f = fixture();
    let mut h = tar::Header::new_gnu();
    let name = b"evidence-C0/../../escape";
    h.as_old_mut().name[..name.len()].copy_from_slice(name);
    h.set_size(1);
    h.set_mode(0o644);
    h.set_cksum();
    let mut t = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    t.append(&h, &b"x"[..]).unwrap();
    let p = f.dir.join("climbs-out.tar.gz");
    std::fs::write(&p, t.into_inner().unwrap().finish().unwrap()).unwrap();
    let (code, lines) = verify(&p, None);
    assert_eq!(code, Some(1), "{lines:#?}");
    assert!(lines[0].contains("unsafe name"), "{lines:#?}");
    assert_eq!(
        lines[1],
        "not verified: the bundle could not be read safely"
    );
}

/// The recipes `docs/report-format.md` gives a customer without this harness: openssl
/// checks the signature and computes the fingerprint, sha256sum checks the digests, and
/// openssl signing the MANIFEST with the vendor's key gives the same octets.
#[test]
fn openssl_and_sha256sum_check_a_bundle_too() {
    let f = fixture();
    for tool in ["openssl", "sha256sum", "tar", "sh"] {
        if Command::new(tool).arg("--version").output().is_err() {
            println!("skipped: {tool} is not installed");
            return;
        }
    }
    let dir = f.dir.join("unpacked");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let sh = |script: &str, cwd: &Path| {
        let o = Command::new("sh")
            .args(["-c", script])
            .current_dir(cwd)
            .output()
            .unwrap();
        assert!(o.status.success(), "{script}\n{}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    sh(&format!("tar xzf {}", s(&f.bundle)), &dir);
    let b = dir.join("evidence-C0");
    let out = sh(
        "openssl pkeyutl -verify -pubin -inkey MANIFEST.pub -rawin -in MANIFEST -sigfile MANIFEST.sig",
        &b,
    );
    assert!(out.contains("Signature Verified Successfully"), "{out}");
    let o = Command::new("sh")
        .args([
            "-c",
            &format!(
                "openssl pkeyutl -verify -pubin -inkey {} -rawin -in MANIFEST -sigfile MANIFEST.sig",
                s(&public(&f.other_key))
            ),
        ])
        .current_dir(&b)
        .output()
        .unwrap();
    assert!(!o.status.success(), "another key verified: {}", text(&o));
    let out = sh("sed '1,/^files:$/d' MANIFEST | sha256sum -c --strict -", &b);
    assert!(out.contains("report.json: OK"), "{out}");
    let out = sh(
        &format!(
            "openssl pkey -pubin -in {} -outform DER | sha256sum",
            s(&public(&f.key))
        ),
        &b,
    );
    assert_eq!(format!("sha256:{}", &out[..64]), f.fingerprint);
    sh(
        &format!("openssl pkeyutl -sign -inkey {} -rawin -in MANIFEST -out ossl.sig && cmp ossl.sig MANIFEST.sig", s(&f.key)),
        &b,
    );
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len())
        .position(|w| w == needle)
        .unwrap_or_else(|| panic!("{:?} not found", String::from_utf8_lossy(needle)))
}
