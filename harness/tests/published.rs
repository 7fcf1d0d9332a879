//! Published vector sets (`<id>.json` + `<id>.bin`, the spec kit's format) as a catalog
//! front-end: the committed fixture set in `tests/fixtures/published/` (small files written
//! here in the published shapes) run against the reference in process and as a testee with
//! exact verdicts, the negative set's problems, the command line (detection, `list`,
//! `trace`, two `--vectors`), and, when the spec kit is beside the checkout, its whole
//! published set against the built-in SUT (in both P1 forms), the testee, the TLS endpoint,
//! foreign-py and SUTs that do one thing to every frame (so each ruling's effect is seen to
//! hold on any stack), plus the check that where a catalog vector and a fixture cover the
//! same case, the harness's materialised octets decode to the fixture's fields.
//!
//! The `.bin` files are defined byte for byte in [`bins`], with an encoder written here
//! rather than swp-core's. `SWP_PUBLISHED_REGEN=1 cargo test -p swp-conform --test published`
//! rewrites them; otherwise a test checks the committed files still match.

mod common;

use bytes::Bytes;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use swp_conform::catalog::vector::{FrameExpect, RejectSpec};
use swp_conform::catalog::{self, Catalog, LoadedVector};
use swp_conform::cli::{run_report, RunOptions};
use swp_conform::frames::{e1, frame, DecodeError, FrameError, Limits};
use swp_conform::method::{self, Cancel, Setup};
use swp_conform::published::rulings::Effect;
use swp_conform::report::model::Report;
use swp_conform::report::result::{NaCause, VectorResult, Verdict};
use swp_conform::sut::Sut;

/// The moment the committed fixtures were stamped: 2026-03-01T00:00:00Z.
const T: u64 = 1_772_323_200_000;
const DAY: u64 = 86_400_000;
const MSG_ID: &[u8; 16] = b"fixture-msg-0001";
const PING: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/published")
}

fn uvarint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn bytes_field(b: &[u8], out: &mut Vec<u8>) {
    uvarint(b.len() as u64, out);
    out.extend_from_slice(b);
}

/// An E1 body (encoding-binding-e1 §3 field order) with an empty extension block.
fn body(version: u64, profile: u64, msg_type: u64, ts: u64, payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [version, profile, msg_type, 0, ts] {
        uvarint(v, &mut b);
    }
    bytes_field(MSG_ID, &mut b);
    bytes_field(&[], &mut b);
    bytes_field(payload, &mut b);
    b
}

fn prefixed(body: &[u8]) -> Vec<u8> {
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(body);
    f
}

fn frame_of(profile: u64, msg_type: u64, ts: u64, payload: &[u8]) -> Vec<u8> {
    prefixed(&body(1, profile, msg_type, ts, payload))
}

/// Every `.bin` fixture, by path relative to the fixture directory.
fn bins() -> Vec<(&'static str, Vec<u8>)> {
    let valid = frame_of(1, 1, T, PING);
    let truncated = {
        let mut f = valid.clone();
        f.truncate(14);
        f
    };
    let long_uvarint = {
        let mut b = vec![0x80; 10];
        b.push(0x01);
        prefixed(&b)
    };
    // A2A Result: task_id "t1", then field 2 (`ok`, a bool) written length-delimited.
    let result = [0x0a, 0x02, b't', b'1', 0x12, 0x01, 0x01];
    // A2A Handshake: agent_id "agent-1".
    let handshake = [0x0a, 0x07, b'a', b'g', b'e', b'n', b't', b'-', b'1'];
    // The kit's placeholder shape: field 1 the profile's name, field 2 the vector's.
    let placeholder = {
        let mut p = vec![0x0a, 0x03];
        p.extend_from_slice(b"rpc");
        p.push(0x12);
        bytes_field(b"rpc_0001_request_placeholder", &mut p);
        p
    };
    let mut two = valid.clone();
    two.extend_from_slice(&valid);
    vec![
        ("core_0001_valid_request.bin", valid.clone()),
        ("core_0002_zero_length.bin", vec![0, 0, 0, 0]),
        ("core_0003_truncated_body.bin", truncated),
        (
            "core_0004_payload_over_stated_limit.bin",
            frame_of(1, 1, T, br#"{"k":"vvvvvvvvv"}"#),
        ),
        (
            "core_0005_stale_timestamp.bin",
            frame_of(1, 1, T - DAY, PING),
        ),
        ("core_0009_unknown_profile.bin", frame_of(9999, 1, T, PING)),
        ("core_0016_burst_limit_exceeded.bin", valid.clone()),
        (
            "core_0023_missing_required_field_msg_type.bin",
            frame_of(1, 0, T, PING),
        ),
        ("e1_0001_uvarint_too_long.bin", long_uvarint),
        (
            "mcp_0001_request_without_id.bin",
            frame_of(1, 1, T, br#"{"jsonrpc":"2.0","method":"tools/list"}"#),
        ),
        ("a2a_0001_handshake.bin", frame_of(2, 1, T, &handshake)),
        (
            "a2a_0002_result_ok_as_bytes.bin",
            frame_of(2, 4, T, &result),
        ),
        (
            "rpc_0001_request_placeholder.bin",
            frame_of(12, 1, T, &placeholder),
        ),
        ("s1_0001_unauthenticated_peer_rejected.bin", valid.clone()),
        // A later batch, as the kit's poc fixtures are.
        (
            "poc_0001_valid_request.bin",
            frame_of(1, 1, T + 180_000, PING),
        ),
        (
            "poc_0002_invalid_version.bin",
            prefixed(&body(2, 1, 1, T + 180_000, PING)),
        ),
        ("negative/x_0001_unknown_assertion_key.bin", valid.clone()),
        ("negative/x_0002_unknown_outcome.bin", valid.clone()),
        ("negative/x_0003_code_mismatch.bin", vec![0, 0, 0, 0]),
        ("negative/x_0004_name_mismatch.bin", valid.clone()),
        ("negative/x_0005_not_json.bin", valid.clone()),
        ("negative/x_0007_two_frames.bin", two),
        ("negative/x_0008_wrong_payload_len.bin", valid.clone()),
        ("negative/x_0009_valid_frame_expected_reject.bin", valid),
    ]
}

#[test]
fn bin_fixtures_match_their_definitions() {
    if std::env::var("SWP_PUBLISHED_REGEN").as_deref() == Ok("1") {
        let n = bins().len();
        for (rel, want) in bins() {
            std::fs::write(fixtures().join(rel), &want).unwrap();
        }
        panic!("SWP_PUBLISHED_REGEN=1 rewrote {n} file(s); review the diff and commit, then run without SWP_PUBLISHED_REGEN");
    }
    for (rel, want) in bins() {
        let p = fixtures().join(rel);
        let got = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert_eq!(
            hex::encode(&got),
            hex::encode(&want),
            "{rel} differs from its definition; regenerate with SWP_PUBLISHED_REGEN=1"
        );
    }
}

fn catalog_dir() -> PathBuf {
    common::root().join("vectors")
}

fn load(dirs: &[PathBuf]) -> Catalog {
    catalog::load::load_sets(dirs, &catalog_dir()).unwrap_or_else(|e| panic!("{e}"))
}

fn opts() -> RunOptions {
    RunOptions {
        pattern: "*".into(),
        quiet: true,
        ..Default::default()
    }
}

fn report_of(cat: &Catalog, sut: &Sut, work: &str) -> Report {
    let plan: Vec<&LoadedVector> = cat.vectors.iter().collect();
    let work = common::root().join("target/published-test").join(work);
    let mut runner = method::open(cat, sut, &Setup::new(work)).unwrap_or_else(|e| panic!("{e}"));
    run_report(
        cat,
        sut,
        &plan,
        &opts(),
        runner.as_mut(),
        &mut [],
        &Cancel::new(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn by_id(rep: &Report) -> BTreeMap<String, VectorResult> {
    rep.all_results()
        .into_iter()
        .map(|r| (r.vector_id.clone(), r))
        .collect()
}

fn manifest(name: &str) -> Sut {
    Sut::load(&common::root().join("implementations/manifests").join(name))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn detection() {
    use swp_conform::published::is_published_dir;
    assert!(is_published_dir(&fixtures()));
    assert!(is_published_dir(&fixtures().join("negative")));
    assert!(
        !is_published_dir(&catalog_dir()),
        "the catalog has requirements/"
    );
    assert!(!is_published_dir(&fixtures().join("does-not-exist")));
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("published-detection");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    assert!(!is_published_dir(&tmp), "empty directory");
    std::fs::write(tmp.join("a_0001.json"), "{}").unwrap();
    assert!(!is_published_dir(&tmp), "metadata without a fixture");
    std::fs::write(tmp.join("a_0001.bin"), [0, 0, 0, 0]).unwrap();
    assert!(is_published_dir(&tmp));
    let e = catalog::load::load_sets(&[fixtures().join("does-not-exist")], &catalog_dir())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("neither a vector catalog"), "{e}");
    let e = catalog::load::load_sets(&[catalog_dir(), catalog_dir()], &catalog_dir())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("are both YAML catalogs"), "{e}");
}

/// What each committed fixture gives against the reference: verdict, and a piece of the
/// detail (not applicable) or of what was observed.
const EXPECTED: &[(&str, Verdict, &str)] = &[
    ("a2a_0001_handshake", Verdict::Pass, "accept profile_id=2 msg_type=1"),
    ("a2a_0002_result_ok_as_bytes", Verdict::Pass, "reject ERR_INVALID_PROFILE_PAYLOAD"),
    ("core_0001_valid_request", Verdict::Pass, "accept profile_id=1 msg_type=1"),
    ("core_0002_zero_length", Verdict::Pass, "reject ERR_INVALID_FRAME"),
    ("core_0003_truncated_body", Verdict::Pass, "nothing | reject ERR_INVALID_FRAME"),
    ("core_0004_payload_over_stated_limit", Verdict::Pass, "reject ERR_PAYLOAD_TOO_LARGE"),
    ("core_0005_stale_timestamp", Verdict::Pass, "reject ERR_INVALID_ENVELOPE"),
    (
        "core_0006_compatibility_review",
        Verdict::NotApplicable,
        "a process vector, not testable at runtime: its evidence is core_0006_compatibility_review.evidence.md",
    ),
    ("core_0009_unknown_profile", Verdict::Pass, "reject ERR_UNKNOWN_PROFILE"),
    (
        "core_0016_burst_limit_exceeded",
        Verdict::NotApplicable,
        "a single frame cannot show this: a rate limit",
    ),
    (
        "core_0023_missing_required_field_msg_type",
        Verdict::Pass,
        "reject ERR_UNSUPPORTED_MSG_TYPE",
    ),
    ("e1_0001_uvarint_too_long", Verdict::Pass, "reject ERR_INVALID_UVARINT"),
    ("mcp_0001_request_without_id", Verdict::Pass, "reject ERR_INVALID_MCP_PAYLOAD"),
    ("poc_0001_valid_request", Verdict::Pass, "accept profile_id=1 msg_type=1"),
    ("poc_0002_invalid_version", Verdict::Pass, "reject ERR_UNSUPPORTED_VERSION"),
    // The kit's placeholder shape decodes as an RpcReq (rpc_id "rpc", method the vector's
    // name): judged on decoding only, the core accepts and dispatches it, without SWP-RPC's
    // validation (SI-040).
    (
        "rpc_0001_request_placeholder",
        Verdict::Pass,
        "accept profile_id=12 msg_type=1",
    ),
    (
        "s1_0001_unauthenticated_peer_rejected",
        Verdict::NotApplicable,
        "a single frame cannot show this: channel security",
    ),
];

fn check_fixture_set(rep: &Report) {
    let rs = by_id(rep);
    assert_eq!(
        rs.keys().collect::<Vec<_>>(),
        EXPECTED.iter().map(|(id, ..)| id).collect::<Vec<_>>()
    );
    for (id, verdict, piece) in EXPECTED {
        let r = &rs[*id];
        assert_eq!(r.verdict, *verdict, "{id}: {r:#?}");
        let text = if *verdict == Verdict::NotApplicable {
            r.detail.clone().unwrap_or_default()
        } else {
            r.observed.clone()
        };
        assert!(text.contains(piece), "{id}: {text:?} lacks {piece:?}");
        assert!(r.path.starts_with("published/"), "{id}: {}", r.path);
    }
    // Requirements come from the catalog vector covering the same case, or from the ruling.
    assert!(rs["core_0002_zero_length"].requirements.is_empty());
    assert_eq!(
        rs["core_0023_missing_required_field_msg_type"].requirements,
        ["CORE-024", "ERR-004", "VER-009"]
    );
    // A fixture judged on decoding only tests the core's routing, not its scenario's rules.
    assert_eq!(
        rs["rpc_0001_request_placeholder"].requirements,
        ["CORE-035", "CORE-048"]
    );
    assert_eq!(
        rs["core_0016_burst_limit_exceeded"].na_cause,
        Some(NaCause::Untested)
    );
    let p = rep.published.as_ref().expect("a published section");
    assert_eq!(p.fixtures, 17);
    // core, e1, mcp, poc: all agree but core_0023 (msg_type 0 is the profile's to refuse).
    assert_eq!((p.agreement.agree, p.agreement.executed), (10, 11));
    // a2a: the Handshake agrees; the Result with `ok` written length-delimited does not.
    // rpc: the placeholder request is judged on decoding only, so its published expectation
    // is compared with nothing and counted in neither figure.
    assert_eq!((p.profiles.agree, p.profiles.executed), (1, 2));
    assert_eq!(p.unruled, 0);
    let ruled: BTreeMap<&str, (Option<bool>, &str)> = p
        .disagreements
        .iter()
        .map(|d| {
            (
                d.vector_id.as_str(),
                (d.sut_agrees, d.si.as_deref().unwrap_or("")),
            )
        })
        .collect();
    assert_eq!(
        ruled,
        BTreeMap::from([
            ("a2a_0002_result_ok_as_bytes", (Some(false), "SI-022")),
            ("core_0009_unknown_profile", (Some(true), "SI-001")),
            ("core_0016_burst_limit_exceeded", (None, "SI-020")),
            (
                "core_0023_missing_required_field_msg_type",
                (Some(false), "SI-025, SI-012")
            ),
            (
                "rpc_0001_request_placeholder",
                (None, "SI-022, SI-003, SI-040")
            ),
            ("s1_0001_unauthenticated_peer_rejected", (None, "SI-035")),
        ])
    );
    // The process check is listed with the evidence a reviewer reads.
    let process: Vec<(&str, &str)> = p
        .process_checks
        .iter()
        .map(|c| (c.vector_id.as_str(), c.evidence.as_str()))
        .collect();
    assert_eq!(
        process,
        [(
            "core_0006_compatibility_review",
            "core_0006_compatibility_review.evidence.md"
        )]
    );
    assert!(
        p.headline()
            .ends_with("; 1 process check(s) not testable at runtime"),
        "{}",
        p.headline()
    );
}

#[test]
fn the_fixture_set_against_the_reference_in_process() {
    let cat = load(&[fixtures()]);
    assert!(
        cat.vectors
            .iter()
            .all(|lv| lv.vector.header.fixture.is_some()),
        "only the fixtures run"
    );
    let rep = report_of(&cat, &Sut::builtin().unwrap(), "inproc");
    check_fixture_set(&rep);
    assert!(!rep.run_failed, "{}", common::explain(&rep.results));
    // The codec method's transcript counts from the fixture's own clock.
    let r = &by_id(&rep)["core_0005_stale_timestamp"];
    assert!(
        r.transcript.iter().all(|t| t.t_ms == 0),
        "{:?}",
        r.transcript
    );
    // The stale fixture runs at its batch's clock; the others at their own stamps.
    let fx = |id: &str| {
        cat.vectors
            .iter()
            .find(|lv| lv.vector.header.id == id)
            .and_then(|lv| lv.vector.header.fixture.clone())
            .unwrap()
    };
    assert_eq!(fx("core_0005_stale_timestamp").receiver.now_ms, Some(T));
    assert_eq!(
        fx("core_0005_stale_timestamp").receiver.stamp_offset,
        Some(DAY)
    );
    assert_eq!(
        fx("poc_0001_valid_request").receiver.now_ms,
        Some(T + 180_000)
    );
    assert_eq!(fx("core_0002_zero_length").receiver.now_ms, None);
    // A truncated frame ends the stream; a whole one does not need to.
    let steps = |id: &str| {
        cat.vectors
            .iter()
            .find(|lv| lv.vector.header.id == id)
            .unwrap()
            .vector
            .step_count()
    };
    assert_eq!(steps("core_0003_truncated_body"), 2);
    assert_eq!(steps("core_0002_zero_length"), 1);
    // core_0023's reject is the profile's: its code is graded at ERR-004 (SHOULD, SI-012),
    // so the published ERR_INVALID_ENVELOPE warns instead of passing or failing.
    let v = &cat
        .vectors
        .iter()
        .find(|lv| lv.vector.header.id == "core_0023_missing_required_field_msg_type")
        .unwrap()
        .vector;
    let rejects: Vec<_> = v.frames().unwrap().steps[0]
        .expect
        .iter()
        .filter_map(|e| match e {
            FrameExpect::Reject(RejectSpec::Full(f)) => {
                Some((f.code.as_str(), f.also.clone(), f.code_requirements.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        rejects,
        [(
            "ERR_UNSUPPORTED_MSG_TYPE",
            Vec::<String>::new(),
            vec!["ERR-004".to_owned()]
        )]
    );
}

#[test]
fn the_fixture_set_through_the_testee_gives_the_same_verdicts() {
    let cat = load(&[fixtures()]);
    let rep = report_of(&cat, &manifest("reference-testee.yaml"), "testee");
    assert!(rep.sut.reported.contains("testee"), "{}", rep.sut.reported);
    check_fixture_set(&rep);
}

#[test]
fn the_negative_set_names_every_problem() {
    let cat = load(&[fixtures().join("negative")]);
    let rep = report_of(&cat, &Sut::builtin().unwrap(), "negative");
    let rs = by_id(&rep);
    let want: &[(&str, Verdict, &str)] = &[
        (
            "x_0001_unknown_assertion_key",
            Verdict::HarnessError,
            "assertions.envelope.priority is not understood",
        ),
        (
            "x_0002_unknown_outcome",
            Verdict::HarnessError,
            "expected.outcome \"maybe\" is not accept, reject or process_check",
        ),
        (
            "x_0003_code_mismatch",
            Verdict::HarnessError,
            "code \"INVALID_FRAME\" does not stand for expected_error_code ERR_UNSUPPORTED_VERSION",
        ),
        (
            "x_0004_name_mismatch",
            Verdict::HarnessError,
            "the metadata names vector \"x_0099_other\", but the file is x_0004_name_mismatch.json",
        ),
        (
            "x_0005_not_json",
            Verdict::HarnessError,
            "the metadata is not valid JSON",
        ),
        (
            "x_0006_missing_bin",
            Verdict::HarnessError,
            "cannot read x_0006_missing_bin.bin",
        ),
        (
            "x_0007_two_frames",
            Verdict::HarnessError,
            "73 octet(s) follow the first frame; a published fixture is one frame",
        ),
        (
            "x_0008_wrong_payload_len",
            Verdict::HarnessError,
            "the metadata asserts a payload of 5 octets, the frame carries 40",
        ),
        (
            "x_0009_valid_frame_expected_reject",
            Verdict::Fail,
            "accepted, expected a reject",
        ),
    ];
    assert_eq!(rs.len(), want.len(), "{:?}", rs.keys().collect::<Vec<_>>());
    for (id, verdict, piece) in want {
        let r = &rs[*id];
        assert_eq!(r.verdict, *verdict, "{id}: {r:#?}");
        let d = r.detail.as_deref().unwrap_or_default();
        assert!(d.contains(piece), "{id}: {d:?} lacks {piece:?}");
    }
    assert!(rep.run_failed, "harness errors fail the run");
    let p = rep.published.as_ref().unwrap();
    assert_eq!(p.harness_errors, 8);
    assert_eq!(p.unruled, 1, "{:#?}", p.disagreements);
    assert_eq!(
        p.disagreements[0].vector_id,
        "x_0009_valid_frame_expected_reject"
    );
    assert!(p.disagreements[0].ruling.is_none());
}

fn bin(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_swp-conform"))
        .args(args)
        .current_dir(common::root())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), text)
}

#[test]
fn the_command_line_detects_the_format_lists_traces_and_merges() {
    let dir = fixtures().display().to_string();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("published-cli");
    let _ = std::fs::remove_dir_all(&out);
    let out_s = out.display().to_string();
    let (code, text) = bin(&["run", "-q", "--vectors", &dir, "--out", &out_s]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("published fixtures: 10 of 11 executed core/E1/S1/MCP/poc expectations agree with this SUT (90.9%)"),
        "{text}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Published fixtures"), "{md}");
    assert!(md.contains("| `core_0023_missing_required_field_msg_type` | reject ERR_INVALID_ENVELOPE (code INVALID_ENVELOPE) |"), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<table id=\"published\">"));

    let (code, text) = bin(&["list", "--vectors", &dir]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("17 vectors"), "{text}");
    assert!(
        text.contains("core_0023_missing_required_field_msg_type"),
        "{text}"
    );

    let (code, text) = bin(&["trace", "--vectors", &dir]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("VER-009"), "{text}");

    // Both at once: the fixture whose id the catalog also has takes a suffix.
    let (code, text) = bin(&[
        "list",
        "--vectors",
        "vectors",
        "--vectors",
        &dir,
        "--filter",
        "core_0016*,core_0023*",
    ]);
    assert_eq!(code, Some(0), "{text}");
    for id in [
        "core_0016_burst_limit_exceeded ",
        "core_0016_burst_limit_exceeded.published",
        "core_0023_missing_required_field_msg_type ",
        "core_0023_missing_required_field_msg_type.published",
    ] {
        assert!(text.contains(id), "{id} missing:\n{text}");
    }
    assert!(text.contains("4 vectors"), "{text}");
    let (code, text) = bin(&[
        "run",
        "-q",
        "--vectors",
        "vectors",
        "--vectors",
        &dir,
        "--filter",
        "core_0023*",
        "--out",
        &out_s,
    ]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("2 vectors selected, 2 executed"), "{text}");
}

// ---------------------------------------------------------------------------------------
// The spec kit's published subset (../shared), as CI runs it.

fn spec_kit() -> Option<PathBuf> {
    let dir = common::shared::shared_dir().join("swp-spec-kit/conformance/vectors");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("SWP_REQUIRE_SPEC_KIT").as_deref() != Ok("1"),
        "SWP_REQUIRE_SPEC_KIT=1 but the spec kit's published vectors are not at {}",
        dir.display()
    );
    println!(
        "published: skipped the spec kit's published set: {} not found",
        dir.display()
    );
    None
}

/// The done-when of a published run: no harness error, every fixture executed or not
/// applicable with a reason, every departure ruled, and at least 85% of the executed
/// core/E1/S1/MCP/poc expectations met. A fixture judged on decoding only (SI-040) is
/// listed with its ruling and no agreement, and tests the core's routing, not its
/// scenario's rules.
fn check_published_run(cat: &Catalog, rep: &Report, what: &str) {
    check_published_results(cat, rep, what);
    let p = rep.published.as_ref().unwrap();
    assert!(
        p.agreement.agree * 100 >= p.agreement.executed * 85,
        "{what}: {}",
        p.headline()
    );
}

/// [`check_published_run`] but the agreement figure, which a stack that closes on every
/// refusal cannot reach: a close after a frame whose payload its profile refuses is
/// inconclusive, and an inconclusive result does not meet the kit's accept.
fn check_published_results(cat: &Catalog, rep: &Report, what: &str) {
    let all = rep.all_results();
    for r in &all {
        assert_ne!(r.verdict, Verdict::HarnessError, "{what}: {r:#?}");
        if r.verdict == Verdict::NotApplicable {
            assert!(
                r.detail.as_deref().is_some_and(|d| !d.is_empty()),
                "{what}: {} not applicable without a reason",
                r.vector_id
            );
        }
    }
    assert!(!rep.run_failed, "{what}: {}", common::explain(&rep.results));
    let p = rep.published.as_ref().unwrap();
    assert_eq!(p.unruled, 0, "{what}: {:#?}", p.disagreements);
    for r in &all {
        let listed = p.disagreements.iter().find(|d| d.vector_id == r.vector_id);
        if effect(cat, &r.vector_id) == Some(Effect::DecodingOnly) {
            assert_eq!(r.requirements, ["CORE-035", "CORE-048"], "{what}: {r:#?}");
            let d = listed.unwrap_or_else(|| panic!("{what}: {} is not listed", r.vector_id));
            assert_eq!(d.sut_agrees, None, "{what}: {d:#?}");
            assert!(d.si.as_deref().is_some_and(|s| s.contains("SI-040")));
        }
    }
}

/// The effect of the ruling on fixture `id`, if it has one.
fn effect(cat: &Catalog, id: &str) -> Option<Effect> {
    cat.vectors
        .iter()
        .find(|lv| lv.vector.header.id == id)
        .and_then(|lv| lv.vector.header.fixture.as_ref())
        .and_then(|f| f.ruling)
        .map(|r| r.effect)
}

/// How many results have each verdict.
fn counts(rep: &Report) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for r in rep.all_results() {
        *m.entry(r.verdict.as_str()).or_insert(0) += 1;
    }
    m
}

/// What the built-in reference cannot run of the kit's set, in either P1 form.
const BUILT_IN_NOT_APPLICABLE: [&str; 9] = [
    "core_0016_burst_limit_exceeded",
    "core_0018_unknown_profile_no_error_path",
    "core_0027_duplicate_inflight_msg_id",
    "core_0033_extensibility_backward_compatibility",
    "s1_0001_unauthenticated_peer_rejected",
    "s1_0002_authentication_failure_terminates",
    "s1_0003_downgrade_policy_failure",
    "s1_0004_integrity_failure_terminates",
    // Not a ruling's: the built-in enforces freshness, and this one needs it off.
    "s1_0006_timestamp_freshness_disabled_documented",
];

fn not_applicable(rep: &Report) -> Vec<String> {
    let mut na: Vec<String> = rep
        .not_applicable
        .iter()
        .map(|s| s.vector_id.clone())
        .collect();
    na.sort();
    na
}

#[test]
fn the_spec_kit_set_against_the_built_in_sut_and_the_testee() {
    let Some(dir) = spec_kit() else { return };
    let cat = load(&[dir]);
    let a = report_of(&cat, &Sut::builtin().unwrap(), "kit-inproc");
    check_published_run(&cat, &a, "built-in");
    let b = report_of(&cat, &manifest("reference-testee.yaml"), "kit-testee");
    check_published_run(&cat, &b, "testee");
    let v = |rep: &Report| -> Vec<(String, Verdict, Option<String>)> {
        rep.all_results()
            .into_iter()
            .map(|r| (r.vector_id, r.verdict, r.observed_error_code))
            .collect()
    };
    assert_eq!(v(&a), v(&b), "in process and testee differ");
    let p = a.published.as_ref().unwrap();
    println!("built-in: {}", p.headline());
    // The whole set (144 fixtures): the codec method executes every fixture one frame can
    // show, and every one of them passes on its published expectation or its ruling.
    assert_eq!(p.fixtures, 144);
    let mut na = BUILT_IN_NOT_APPLICABLE.map(str::to_owned).to_vec();
    na.sort();
    assert_eq!(not_applicable(&a), na);
    assert_eq!(
        counts(&a),
        BTreeMap::from([("not-applicable", 9), ("pass", 135)])
    );
    assert_eq!((p.agreement.agree, p.agreement.executed), (58, 59));
    assert_eq!((p.profiles.agree, p.profiles.executed), (19, 35));
    // 41 placeholders are judged on decoding only; with the 7 ruled fixtures no frame can
    // show, they are the departures listed without an agreement.
    let decoding = cat
        .vectors
        .iter()
        .filter(|lv| effect(&cat, &lv.vector.header.id) == Some(Effect::DecodingOnly))
        .count();
    assert_eq!(decoding, 41);
    let compared_with_nothing = p
        .disagreements
        .iter()
        .filter(|d| d.sut_agrees.is_none())
        .count();
    assert_eq!(compared_with_nothing, 41 + 7, "{:#?}", p.disagreements);
    // The unsolicited MCP responses are accepted here; a refusal would pass as well.
    for id in [
        "mcp_0002_response_roundtrip",
        "mcp_0004_error_mapping_internal",
        "mcp_0005_error_mapping_unknown_profile",
        "mcp_0006_response_msg_id_reuse",
    ] {
        let d = p.disagreements.iter().find(|d| d.vector_id == id).unwrap();
        assert_eq!(
            (d.sut_agrees, d.si.as_deref()),
            (Some(true), Some("SI-039"))
        );
    }
}

/// A wrapper-form SUT runs the placeholders as well: the front-end carries each in the
/// annex's `Payload` wrapper (SI-040), and they give the verdicts they give bare.
#[test]
fn the_spec_kit_set_in_the_wrapper_form() {
    let Some(dir) = spec_kit() else { return };
    let cat = load(&[dir]);
    let message = report_of(&cat, &Sut::builtin().unwrap(), "kit-inproc-message");
    let mut sut = Sut::builtin().unwrap();
    sut.manifest.p1_payload = swp_conform::p1::P1Form::Wrapper;
    let wrapper = report_of(&cat, &sut, "kit-inproc-wrapper");
    check_published_run(&cat, &wrapper, "wrapper");
    let mut na = BUILT_IN_NOT_APPLICABLE.map(str::to_owned).to_vec();
    na.sort();
    assert_eq!(not_applicable(&wrapper), na);
    let v = |rep: &Report| -> Vec<(String, Verdict)> {
        rep.all_results()
            .into_iter()
            .map(|r| (r.vector_id, r.verdict))
            .collect()
    };
    assert_eq!(v(&message), v(&wrapper));
    // What was sent: the kit's frame for a message-form SUT; for the other, the same RpcReq
    // as the wrapper's member 1 (key 0x0a, then its length), all else equal.
    let kit = std::fs::read(spec_kit().unwrap().join("rpc_0001_req_resp_success.bin")).unwrap();
    let sent = |rep: &Report| {
        let r = &by_id(rep)["rpc_0001_req_resp_success"];
        hex::decode(&r.transcript[0].data).unwrap()
    };
    assert_eq!(sent(&message), kit);
    let envelope = |octets: Vec<u8>| {
        let (body, _) = frame::take_frame(&Bytes::from(octets), &Limits::default())
            .unwrap()
            .unwrap();
        e1::decode(&body, &Limits::default()).unwrap()
    };
    let (bare, wrapped) = (envelope(kit), envelope(sent(&wrapper)));
    let mut member = vec![0x0a, bare.payload.len() as u8];
    member.extend_from_slice(&bare.payload);
    assert_eq!(wrapped.payload.to_vec(), member);
    assert_eq!(
        (wrapped.msg_id, wrapped.ts_unix_ms, wrapped.msg_type),
        (bare.msg_id, bare.ts_unix_ms, bare.msg_type)
    );
}

#[test]
fn the_spec_kit_set_over_tls() {
    let Some(dir) = spec_kit() else { return };
    let cat = load(&[dir]);
    let rep = report_of(&cat, &manifest("reference-tls.yaml"), "kit-tls");
    check_published_run(&cat, &rep, "tls");
    let p = rep.published.as_ref().unwrap();
    println!("tls: {}", p.headline());
    // A TLS endpoint judges a frame's age by its own clock: the stamped fixtures say so.
    let r = &by_id(&rep)["core_0001_valid_min_frame"];
    assert_eq!(r.verdict, Verdict::NotApplicable);
    assert!(
        r.detail
            .as_deref()
            .is_some_and(|d| d.contains("is stamped 2026-02-19T14:55:16Z")),
        "{r:#?}"
    );
    assert_eq!(
        counts(&rep),
        BTreeMap::from([("not-applicable", 134), ("pass", 10)])
    );
}

/// foreign-py (implementations/foreign-py), the endpoint written from the spec alone: it
/// closes on most refusals, speaks the wrapper form and claims profiles 1, 2 and 10-19. On the
/// kit's whole set it must fail nothing: a refusal it cannot show the code of is rcno, a
/// close after a frame the core must accept is inconclusive, and the A2A placeholders run
/// re-wrapped.
#[test]
fn the_spec_kit_set_on_foreign_py() {
    let Some(dir) = spec_kit() else { return };
    let cat = load(&[dir]);
    let rep = report_of(&cat, &manifest("foreign-py.yaml"), "kit-foreign-py");
    check_published_results(&cat, &rep, "foreign-py");
    let p = rep.published.as_ref().unwrap();
    println!("foreign-py: {}", p.headline());
    assert_eq!(
        counts(&rep),
        BTreeMap::from([
            ("inconclusive", 20),
            ("not-applicable", 27),
            ("pass", 30),
            ("reject-code-not-observable", 67),
        ]),
        "{}",
        common::explain(&rep.all_results())
    );
    assert_eq!((p.agreement.agree, p.agreement.executed), (45, 55));
    assert_eq!((p.profiles.agree, p.profiles.executed), (19, 35));
    // The A2A placeholders ran in its wrapper form: accepted, or closed (inconclusive).
    let rs = by_id(&rep);
    for (id, want) in [
        ("a2a_0001_handshake_success", Verdict::Pass),
        ("a2a_0006_event_before_task_invalid", Verdict::Inconclusive),
    ] {
        assert_eq!(rs[id].verdict, want, "{:#?}", rs[id]);
    }
}

/// A manifest for `trivialsut MODE` (or `close-after-one`, a stack that reads one frame and
/// closes) over stdio with the policies the kit's fixtures assume where a SUT cannot take a
/// receiver configuration: freshness off, the spec's default limits, every profile claimed.
fn trivial_manifest(mode: &str, dir: &Path) -> Sut {
    std::fs::create_dir_all(dir).unwrap();
    // A Python process takes tens of milliseconds to start, and its close must come within
    // the quiet window to be the refusal the window waits for.
    let silence = if mode == "close-after-one" { 1000 } else { 100 };
    let (start, signal) = match mode {
        "close-after-one" => (
            r#"{command: python3, args: ["-c", "import sys; b = sys.stdin.buffer; n = int.from_bytes(b.read(4), 'big'); b.read(n)"]}"#
                .to_owned(),
            // It never lives to answer the probe the mode asks for: its close comes first.
            "{mode: close}\n  probe: {frame: {profile_id: 1, msg_type: 1, payload: {json: {jsonrpc: \"2.0\", id: probe, method: ping}}}, reply_profile_id: 1, reply_msg_type: 2}".to_owned(),
        ),
        _ => (
            format!(
                r#"{{command: "{}", args: ["{mode}"]}}"#,
                common::example("trivialsut").display()
            ),
            "{mode: error-frame, error_frame: {profile_id: 1, msg_type: 2, code_pointer: /error/data/swp_error}}".to_owned(),
        ),
    };
    let text = format!(
        r#"name: kit-{mode}
version: "0"
kind: endpoint
start: {start}
methods: [session]
claims: {{profiles: [1, 2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]}}
limits: {{MAX_FRAME_BYTES: 8388608, MIN_MSG_ID_BYTES: 8, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 4096, MAX_PAYLOAD_BYTES: 8387584}}
policy: {{timestamp_freshness: false, unknown_profile: error-reply}}
session:
  transport: stdio
  reject_signal: {signal}
  timing: {{step_ms: 1500, silence_ms: {silence}, vector_ms: 20000}}
"#
    );
    let p = dir.join(format!("kit-{mode}.yaml"));
    std::fs::write(&p, text).unwrap();
    Sut::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// The rulings' effects are real on SUTs that do one thing to every frame. The four
/// unsolicited MCP responses (SI-039) pass whether the SUT ignores them, refuses them with
/// an error frame or closes. A placeholder judged on decoding only (SI-040) is never
/// passed by a SUT that refuses everything: refused with a code that is not a profile's, it
/// fails; closed, it is inconclusive.
#[test]
fn rulings_hold_on_suts_that_do_one_thing() {
    let Some(dir) = spec_kit() else { return };
    let cat = load(&[dir]);
    let unsolicited = [
        "mcp_0002_response_roundtrip",
        "mcp_0004_error_mapping_internal",
        "mcp_0005_error_mapping_unknown_profile",
        "mcp_0006_response_msg_id_reuse",
    ];
    let plan: Vec<&LoadedVector> = cat
        .vectors
        .iter()
        .filter(|lv| {
            unsolicited.contains(&lv.vector.header.id.as_str())
                || effect(&cat, &lv.vector.header.id) == Some(Effect::DecodingOnly)
        })
        .collect();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("published-trivial");
    for (mode, decoding) in [
        ("accept-all", Verdict::Pass),
        ("reject-all", Verdict::Fail),
        ("close-after-one", Verdict::Inconclusive),
    ] {
        let sut = trivial_manifest(mode, &work);
        let rs = method::run(&cat, &sut, &Setup::new(work.join(mode)), &plan).unwrap();
        let mut wrong = Vec::new();
        let mut ran = 0;
        for r in &rs {
            let want = if unsolicited.contains(&r.vector_id.as_str()) {
                Verdict::Pass
            } else if r.verdict == Verdict::NotApplicable {
                // Placeholders of profiles that refuse by policy (12, 15, 19) on an endpoint.
                assert!(
                    r.detail
                        .as_deref()
                        .is_some_and(|d| d.contains("ERR_SECURITY_POLICY")),
                    "{mode}: {r:#?}"
                );
                continue;
            } else {
                decoding
            };
            ran += 1;
            if r.verdict != want {
                wrong.push(format!(
                    "{mode}: {} [{}], expected {}: {}",
                    r.vector_id,
                    r.verdict.as_str(),
                    want.as_str(),
                    r.detail.as_deref().unwrap_or("")
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        // The 41 placeholders, less the 14 of profiles 12, 15 and 19, and the four responses.
        assert_eq!(ran, 4 + 41 - 14, "{mode}");
    }
}

/// Catalog vectors and published fixtures that cover the same case. Where ids match but
/// the cases differ, the pair is in `DIFFERENT_CASES` with the reason. A fixture whose
/// ruling puts its own requirements in place (another expectation, decoding only, the
/// receiver's choice) borrows nothing from the catalog vector of its id, so it is compared
/// with none: the ruling, with its SI entry, says why its case is not that vector's.
fn same_case_pairs(cat: &Catalog, kit: &Catalog) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for lv in &kit.vectors {
        let id = &lv.vector.header.id;
        let target = swp_conform::published::SAME_CASE
            .iter()
            .find(|(f, _)| f == id)
            .map_or(id.as_str(), |(_, c)| *c);
        let ruled = matches!(
            effect(kit, id),
            Some(Effect::Expect(_) | Effect::DecodingOnly | Effect::EitherWay(_))
        );
        if cat.vectors.iter().any(|c| c.vector.header.id == target)
            && !DIFFERENT_CASES.iter().any(|(f, _)| f == id)
            && !ruled
        {
            pairs.push((id.clone(), target.to_owned()));
        }
        for (f, c) in COVERED_ELSEWHERE {
            if f == id && cat.vectors.iter().any(|v| v.vector.header.id == *c) {
                pairs.push((id.clone(), (*c).to_owned()));
            }
        }
    }
    pairs
}

/// Fixtures whose case a catalog vector of another id covers (their own id's vector tests
/// something else: `DIFFERENT_CASES`).
const COVERED_ELSEWHERE: &[(&str, &str)] = &[
    (
        "core_0023_missing_required_field_msg_type",
        "core_0128_msg_type_zero_dispatched",
    ),
    (
        "core_0025_missing_required_field_ts_unix_ms",
        "core_0125_zero_timestamp_rejected_under_freshness",
    ),
];

/// Fixtures whose catalog vector of the same id tests something else, and why.
const DIFFERENT_CASES: &[(&str, &str)] = &[
    ("a2a_0001_handshake_success", "the catalog's is a session exchange with an agent's reply"),
    ("a2a_0003_task_result_failure", "the catalog's runs a failing task; the fixture is a lone Result"),
    ("core_0007_invalid_envelope_decode", "the catalog's body breaks at the payload length, the fixture's at the first uvarint (e1_0002's case)"),
    ("core_0016_burst_limit_exceeded", "the catalog's sends a burst; the fixture is one frame"),
    ("core_0017_unknown_profile_with_error_path", "the catalog's checks the stream after the reject"),
    ("core_0018_unknown_profile_no_error_path", "the catalog's checks the close"),
    ("core_0021_missing_required_field_version", "the catalog's body is empty (version missing); the fixture's version is 0"),
    ("core_0022_missing_required_field_profile_id", "the catalog's body ends before profile_id; the fixture's is 0"),
    ("core_0023_missing_required_field_msg_type", "the catalog's body ends before msg_type; the fixture's is 0"),
    ("core_0024_missing_required_field_msg_id", "the catalog's body ends before msg_id; the fixture's is empty"),
    ("core_0025_missing_required_field_ts_unix_ms", "the catalog's body ends before ts_unix_ms; the fixture's is 0"),
    ("core_0027_duplicate_inflight_msg_id", "the catalog's sends two frames"),
    ("core_0028_error_mapping_invalid_frame", "the catalog's checks the JSON-RPC error the reject is surfaced as"),
    ("core_0029_error_mapping_unsupported_version", "the catalog's checks the JSON-RPC error the reject is surfaced as"),
    ("core_0030_error_mapping_invalid_envelope", "the catalog's checks the JSON-RPC error the reject is surfaced as"),
    ("mcp_0001_request_roundtrip", "the catalog's runs through a relay"),
    ("poc_0002_valid_swprpc_request", "a profile-12 request; core_0002 lends its requirements only"),
    ("s1_0001_unauthenticated_peer_rejected", "the catalog's connects without a client certificate"),
];

/// What makes a frame's case, read with the harness's own codec under the receiver's
/// limits: its fault, or the envelope values a case is about, by class (the profile the
/// receiver serves or not, flag bits set or not, the timestamp's place against the clock,
/// reserved or profile-defined extensions, a frame or payload at its limit). Per-vector
/// choices (msg_id octets, payload contents) are not part of a case.
fn cases(octets: &[u8], l: &Limits, now_ms: u64, skew: u64) -> Vec<String> {
    let fault = |e: &FrameError| match e {
        FrameError::ZeroLength => "zero length prefix",
        FrameError::TooLarge { .. } => "prefix over MAX_FRAME_BYTES",
        FrameError::TruncatedPrefix { .. } => "stream ends inside the prefix",
        FrameError::TruncatedBody { .. } => "stream ends inside the body",
    };
    let mut out = Vec::new();
    let mut rest = Bytes::copy_from_slice(octets);
    loop {
        let body = match frame::take_frame(&rest, l) {
            Err(e) => {
                out.push(fault(&e).to_owned());
                return out;
            }
            Ok(None) => {
                if let Err(e) = frame::end_of_stream(&rest, l) {
                    out.push(fault(&e).to_owned());
                }
                return out;
            }
            Ok(Some((body, tail))) => {
                rest = tail;
                body
            }
        };
        out.push(match e1::decode(&body, l) {
            Err(DecodeError::Uvarint { source, .. }) => format!(
                "malformed uvarint: {}",
                format!("{source:?}").split([' ', '{']).next().unwrap_or("")
            ),
            Err(DecodeError::MsgIdLength { len, min, .. }) => format!(
                "msg_id length {}",
                if len < min as u64 { "below the minimum" } else { "above the maximum" }
            ),
            Err(DecodeError::Truncated { .. }) => "a bytes field runs past the body".into(),
            Err(e) => format!("{:?}", e.code()),
            Ok(e) => {
                let when = if e.ts_unix_ms == 0 {
                    "zero"
                } else if e.ts_unix_ms + skew < now_ms {
                    "stale"
                } else if e.ts_unix_ms > now_ms + skew {
                    "future"
                } else {
                    "fresh"
                };
                // The bound a boundary case is about: the frame's, else the payload's. How a
                // vector pads a frame to its bound (payload or extension) is its own choice.
                let at_limit = if body.len() == l.max_frame_bytes as usize {
                    ", frame at MAX_FRAME_BYTES"
                } else if e.payload.len() == l.max_payload_bytes {
                    ", payload at MAX_PAYLOAD_BYTES"
                } else {
                    ""
                };
                format!(
                    "version {}, profile {}, msg_type {}, flags {}, ts {when}, extensions {}{at_limit}",
                    e.version,
                    if [1, 2].contains(&e.profile_id) { "served" } else { "not served" },
                    if (1..=3).contains(&e.msg_type) { "defined" } else { "undefined" },
                    if e.flags == 0 { "clear" } else { "unknown bits set" },
                    if !at_limit.is_empty() {
                        "(padding)"
                    } else if e.extensions.is_empty() {
                        "none"
                    } else {
                        "present"
                    },
                )
            }
        });
    }
}

#[test]
fn catalog_vectors_and_fixtures_of_the_same_case_decode_to_the_same_fields() {
    let Some(dir) = spec_kit() else { return };
    let cat = common::catalog();
    let kit = load(&[dir]);
    let sut = Sut::builtin().unwrap();
    let skew = sut.manifest.policy.max_clock_skew_ms;
    let now = swp_conform::method::codec::CODEC_NOW_MS;
    // The reference's triggers for every profile (the in-process manifest declares those of
    // the codec vectors only; agdisc_0005 needs AGDISC_MAX_AGE_MS).
    let tls = Sut::load(&common::root().join("implementations/manifests/reference-tls.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let params = tls.params(now);
    let m = sut.manifest.limits;
    let us = |n: u64| usize::try_from(n).unwrap();
    let ours_limits = Limits {
        max_frame_bytes: m.max_frame_bytes,
        min_msg_id_bytes: us(m.min_msg_id_bytes),
        max_msg_id_bytes: us(m.max_msg_id_bytes),
        max_ext_bytes: us(m.max_ext_bytes),
        max_payload_bytes: us(m.max_payload_bytes),
    };
    let pairs = same_case_pairs(&cat, &kit);
    assert!(pairs.len() >= 25, "{pairs:?}");
    for (f, c) in COVERED_ELSEWHERE {
        assert!(
            pairs.iter().any(|p| p.0 == *f && p.1 == *c),
            "{f} vs {c} not compared: {pairs:?}"
        );
    }
    let mut differ = Vec::new();
    for (fixture, vector) in &pairs {
        let lv = kit
            .vectors
            .iter()
            .find(|v| &v.vector.header.id == fixture)
            .unwrap();
        let fx = lv.vector.header.fixture.as_ref().unwrap();
        if lv.vector.step_count() == 0 {
            continue;
        }
        let ours = &cat
            .vectors
            .iter()
            .find(|v| &v.vector.header.id == vector)
            .unwrap()
            .vector;
        let steps = swp_conform::plan::materialize::materialise(ours, &params)
            .unwrap_or_else(|e| panic!("{vector}: {e}"));
        let stream: Vec<u8> = steps
            .iter()
            .flat_map(|s| match &s.action {
                swp_conform::plan::materialize::Action::Send(b) => b.to_vec(),
                _ => Vec::new(),
            })
            .collect();
        let kit_octets = std::fs::read(lv.path.with_extension("bin")).unwrap();
        let kit_limits = swp_conform::published::assumed_limits(&fx.receiver.limits);
        let kit_now = fx.receiver.now_ms.unwrap_or(now);
        let theirs = cases(&kit_octets, &kit_limits, kit_now, skew);
        let ours = cases(&stream, &ours_limits, now, skew);
        // The fixture is one frame; the catalog vector may send it among others.
        if theirs.len() != 1 || !ours.contains(&theirs[0]) {
            differ.push(format!(
                "{fixture} vs {vector}:\n  fixture: {theirs:?}\n  catalog: {ours:?}"
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
