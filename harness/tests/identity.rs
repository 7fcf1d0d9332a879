//! The identity form (`tls.identity_form`): S1 §2.2 leaves to the binding how a peer
//! identity is derived from a client certificate, so the manifest says which form the
//! endpoint surfaces and s1_0103 expects that form. The reference surfaces the SAN URI: it
//! passes under the default and under a template that is the SAN URI alone, and a manifest
//! claiming the common name or the subject is caught, so the field decides the expectation.
//! Started with `--identity-field cn` (SI-048), it surfaces the common name, and passes
//! under `{field: cn}` only.

mod common;
use common::root;

use swp_conform::report::result::Verdict;

const TLS: &str = "    tls13_only: true\n";

/// The reference's start arguments this test extends with `--identity-field`.
const ARGS: &str = "--tls13-only,";

/// s1_0103's verdict on reference-tls.yaml with `form` (YAML) as its `tls.identity_form`.
fn verdict(name: &str, form: Option<&str>) -> Verdict {
    verdict_started(name, form, None)
}

/// [`verdict`], the reference started with `--identity-field FIELD` when `field` is given.
fn verdict_started(name: &str, form: Option<&str>, field: Option<&str>) -> Verdict {
    let text = std::fs::read_to_string(root().join("implementations/manifests/reference-tls.yaml"))
        .unwrap();
    assert!(
        text.contains(TLS) && text.contains(ARGS),
        "reference-tls.yaml no longer has the lines this test extends"
    );
    let text = match form {
        Some(f) => text.replace(TLS, &format!("{TLS}    identity_form: {f}\n")),
        None => text,
    };
    let text = match field {
        Some(f) => text.replacen(ARGS, &format!("{ARGS} --identity-field, {f},"), 1),
        None => text,
    };
    let rs = common::run_with_manifest(&format!("identity-{name}"), &text, &["s1_0103"]);
    rs[0].verdict
}

#[test]
fn the_declared_identity_form_decides_what_s1_0103_expects() {
    assert_eq!(verdict("default", None), Verdict::Pass);
    assert_eq!(
        verdict(
            "san-uri-template",
            Some(r#"{field: san-uri, template: "{}"}"#)
        ),
        Verdict::Pass
    );
    assert_eq!(verdict("cn", Some("{field: cn}")), Verdict::Fail);
    assert_eq!(
        verdict("subject", Some(r#"{field: subject, template: "x509:{}"}"#)),
        Verdict::Fail
    );
}

#[test]
fn the_reference_started_with_another_identity_field_matches_that_form() {
    assert_eq!(
        verdict_started("started-cn", Some("{field: cn}"), Some("cn")),
        Verdict::Pass
    );
    // Started with the CN, it no longer surfaces the SAN URI the default form expects.
    assert_eq!(
        verdict_started("started-cn-default", None, Some("cn")),
        Verdict::Fail
    );
}
