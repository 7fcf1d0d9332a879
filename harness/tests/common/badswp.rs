//! The `badswp` example (a proxy in front of the reference endpoint that breaks one SWP-*
//! requirement per mode) as a SUT: its stdio manifest, the reference's own params for it, and
//! what a run of it failed. Shared by tests/swp_profiles.rs, swp_disc.rs, swp_cred.rs and
//! swp_relay.rs, which differ only in the profiles, params and vectors they plan.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use swp_conform::report::result::{VectorResult, Verdict};

/// The lines of reference-tls.yaml's `params` whose names start with one of `prefixes`, so a
/// broken-variant manifest and the reference's own cannot drift apart.
pub fn reference_params(prefixes: &[&str]) -> String {
    let tls = super::root().join("implementations/manifests/reference-tls.yaml");
    std::fs::read_to_string(tls)
        .unwrap()
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            prefixes.iter().any(|p| l.starts_with(p))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Writes the manifest of `badswp MODE` over stdio into `dir`: `claims` is the YAML flow
/// mapping of its claims, `params` indented `params` lines, `reject_extra` lines added to its
/// `reject_signal` (each starting with a newline and four spaces).
pub fn manifest(mode: &str, dir: &Path, claims: &str, params: &str, reject_extra: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let text = format!(
        r#"name: badswp-{mode}
version: "0"
kind: endpoint
start: {{command: "{}", args: ["{mode}", "${{SWP_REF}}"]}}
methods: [session]
claims: {claims}
params:
{params}limits: {{MAX_FRAME_BYTES: 8388608, MIN_MSG_ID_BYTES: 8, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 4096, MAX_PAYLOAD_BYTES: 8387584}}
policy: {{timestamp_freshness: false, unknown_profile: error-reply}}
session:
  transport: stdio
  reject_signal:
    mode: error-frame
    error_frame: {{profile_id: 1, msg_type: 2, code_pointer: /error/data/swp_error}}{reject_extra}
  probe:
    frame: {{profile_id: 1, msg_type: 1, payload: {{json: {{jsonrpc: "2.0", id: "probe", method: "ping"}}}}}}
    reply_profile_id: 1
    reply_msg_type: 2
"#,
        super::example("badswp").display(),
    );
    let p = dir.join(format!("badswp-{mode}.yaml"));
    std::fs::write(&p, text).unwrap();
    p
}

/// The short ids (`relay_0002`) of the results that neither passed nor were not applicable,
/// each printed with its verdict and reason first, so a failing assertion explains itself.
pub fn failing(mode: &str, rs: &[VectorResult]) -> BTreeSet<String> {
    rs.iter()
        .filter(|r| r.verdict != Verdict::Pass && r.verdict != Verdict::NotApplicable)
        .map(|r| {
            eprintln!(
                "{mode}: {} [{}] {}",
                r.vector_id,
                r.verdict.as_str(),
                r.detail.as_deref().unwrap_or("")
            );
            let id = &r.vector_id;
            id[..id.find('_').map_or(id.len(), |i| i + 5)].to_owned()
        })
        .collect()
}

/// `ids` as a set, for comparing with [`failing`].
pub fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

/// Runs `plan` against `sut` and returns what [`failing`] says of it, after checking that
/// exactly the vectors `runs` selects (at least `min` of them) were executed: a proxy that made
/// the vectors not applicable would pass "caught by exactly" checks vacuously.
pub fn run(
    mode: &str,
    cat: &swp_conform::catalog::Catalog,
    sut: &swp_conform::sut::Sut,
    work: &Path,
    plan: &[&swp_conform::catalog::LoadedVector],
    runs: impl Fn(&swp_conform::catalog::LoadedVector) -> bool,
    min: usize,
) -> BTreeSet<String> {
    use swp_conform::method::{self, Setup};
    let rs = method::run(cat, sut, &Setup::new(work), plan).unwrap();
    // A vector out of scope by the manifest's own choice (the other reading of an open
    // point, events_0112 and rpc_0120 beside the reference's) does not run, whatever the
    // proxy does.
    let by_choice = |v: &swp_conform::catalog::LoadedVector| {
        swp_conform::method::applicable::applicability(&v.vector, sut)
            .is_some_and(|n| n.cause == swp_conform::report::result::NaCause::SutChoice)
    };
    let session: BTreeSet<&str> = plan
        .iter()
        .filter(|v| runs(v) && !by_choice(v))
        .map(|v| v.vector.header.id.as_str())
        .collect();
    assert!(session.len() >= min, "{mode}: {session:?}");
    let executed: BTreeSet<&str> = rs
        .iter()
        .filter(|r| r.verdict != Verdict::NotApplicable)
        .map(|r| r.vector_id.as_str())
        .collect();
    assert_eq!(executed, session, "{mode}: every session vector runs");
    failing(mode, &rs)
}
