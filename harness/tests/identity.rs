//! The identity form (`tls.identity_form`): S1 §2.2 leaves to the binding how a peer
//! identity is derived from a client certificate, so the manifest says which form the
//! endpoint surfaces and s1_0103 expects that form. The reference surfaces the SAN URI: it
//! passes under the default and under a template that is the SAN URI alone, and a manifest
//! claiming the common name or the subject is caught, so the field decides the expectation.

mod common;
use common::root;

use swp_conform::report::result::Verdict;

const TLS: &str = "    tls13_only: true\n";

/// s1_0103's verdict on reference-tls.yaml with `form` (YAML) as its `tls.identity_form`.
fn verdict(name: &str, form: Option<&str>) -> Verdict {
    let text = std::fs::read_to_string(root().join("implementations/manifests/reference-tls.yaml"))
        .unwrap();
    assert!(
        text.contains(TLS),
        "reference-tls.yaml no longer has the line this test extends"
    );
    let text = match form {
        Some(f) => text.replace(TLS, &format!("{TLS}    identity_form: {f}\n")),
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
