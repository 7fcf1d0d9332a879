//! Legacy vector sets (`<id>.json` + `<id>.bin`): detection, mapping, exact per-vector
//! verdicts against the in-process reference, the negative set, and the CLI end to end.
//!
//! The `.bin` fixtures under `tests/fixtures/legacy/` are defined byte for byte in [`bins`],
//! with an encoder written here rather than swp-core's, so the fixtures do not inherit a bug
//! of the implementation they test. `SWP_LEGACY_REGEN=1 cargo test -p swp-conform --test
//! legacy` rewrites them; otherwise a test checks the committed files still match.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use swp_conform::connect::driver::{Answer, CodecDriver, DriverError};
use swp_conform::connect::inproc::InProcess;
use swp_conform::frames::ErrorCode;
use swp_conform::legacy::{self, Mapping, Outcome};
use swp_conform::model::{VectorResult, Verdict};
use swp_conform::sut::Sut;
use swp_testee_proto::{DecodeReply, DecodeRequest, EnvelopeView, Event, Hex};

/// The harness's fixed receiver clock (`CODEC_NOW_MS`), 2026-01-01T00:00:00Z.
const NOW: u64 = swp_conform::method::codec::CODEC_NOW_MS;
const MSG_ID: &[u8; 16] = b"legacy-msg-00001";
const PAYLOAD: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/legacy")
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
fn body(version: u64, profile: u64, ts: u64, msg_id: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [version, profile, 1, 0, ts] {
        uvarint(v, &mut b);
    }
    bytes_field(msg_id, &mut b);
    bytes_field(&[], &mut b);
    bytes_field(payload, &mut b);
    b
}

fn prefixed(body: &[u8]) -> Vec<u8> {
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(body);
    f
}

fn valid_frame() -> Vec<u8> {
    prefixed(&body(1, 1, NOW, MSG_ID, PAYLOAD))
}

/// Every `.bin` fixture, by path relative to the fixture directory.
fn bins() -> Vec<(&'static str, Vec<u8>)> {
    let valid = valid_frame();
    let two_frames = {
        // Profile 2, both timestamps inside the ±300 s skew window, distinct msg_ids.
        let mut s = prefixed(&body(1, 2, NOW - 120_000, b"legacy-msg-00002", PAYLOAD));
        s.extend(prefixed(&body(
            1,
            2,
            NOW + 60_000,
            b"legacy-msg-00003",
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        )));
        s
    };
    let oversized = {
        // 8 MiB + 1 declared (the reference's MAX_FRAME_BYTES is 8 MiB); a few octets follow.
        let mut s = (8 * 1024 * 1024 + 1_u32).to_be_bytes().to_vec();
        s.extend_from_slice(&[0x01, 0x01, 0x01, 0x00]);
        s
    };
    let truncated = {
        // The prefix declares the whole body; only half of it arrives before end of stream.
        let mut s = valid.clone();
        s.truncate(4 + (s.len() - 4) / 2);
        s
    };
    let eleven_octet_uvarint = {
        // Otherwise valid: msg_type = 1 written in 11 octets (ten continuation octets).
        let mut b = vec![0x01, 0x01];
        b.extend_from_slice(&[
            0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
        ]);
        b.push(0x00);
        uvarint(NOW, &mut b);
        bytes_field(MSG_ID, &mut b);
        bytes_field(&[], &mut b);
        bytes_field(PAYLOAD, &mut b);
        prefixed(&b)
    };
    vec![
        ("core_0001_valid_frame.bin", valid.clone()),
        ("core_0002_invalid_zero_length.bin", vec![0, 0, 0, 0]),
        ("core_0003_invalid_oversized_length.bin", oversized),
        ("core_0004_invalid_truncated_body.bin", truncated),
        ("core_0005_unknown_assertion_key.bin", valid.clone()),
        ("core_0007_unknown_outcome.bin", valid.clone()),
        ("core_0008_two_frames_profile_2.bin", two_frames),
        (
            "e1_0001_unsupported_version.bin",
            prefixed(&body(2, 1, NOW, MSG_ID, PAYLOAD)),
        ),
        ("e1_0002_uvarint_eleven_octets.bin", eleven_octet_uvarint),
        (
            "e1_0003_empty_msg_id.bin",
            prefixed(&body(1, 1, NOW, b"", PAYLOAD)),
        ),
        ("negative/core_0001_wrong_payload_len.bin", valid.clone()),
        (
            "negative/core_0002_zero_length_wrong_code.bin",
            vec![0, 0, 0, 0],
        ),
        (
            "negative/core_0003_valid_frame_expected_reject.bin",
            valid.clone(),
        ),
        (
            "negative/core_0004_inconsistent_alias.bin",
            vec![0, 0, 0, 0],
        ),
        ("negative/core_0005_noncanonical_code.bin", vec![0, 0, 0, 0]),
        ("negative/core_0006_orphan_fixture.bin", valid),
    ]
}

#[test]
fn bin_fixtures_match_their_definitions() {
    if std::env::var("SWP_LEGACY_REGEN").as_deref() == Ok("1") {
        let n = bins().len();
        for (rel, want) in bins() {
            std::fs::write(fixtures().join(rel), &want).unwrap();
        }
        panic!("SWP_LEGACY_REGEN=1 rewrote {n} file(s); review the diff and commit, then run without SWP_LEGACY_REGEN");
    }
    for (rel, want) in bins() {
        let p = fixtures().join(rel);
        let got = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert_eq!(
            hex::encode(&got),
            hex::encode(&want),
            "{rel} differs from its definition; regenerate with SWP_LEGACY_REGEN=1"
        );
    }
}

fn run_set(dir: &Path) -> BTreeMap<String, VectorResult> {
    let set = legacy::load(dir).unwrap();
    let sut = Sut::builtin().unwrap();
    legacy::run(&set, &sut, &mut InProcess)
        .into_iter()
        .map(|r| (r.vector_id.clone(), r))
        .collect()
}

fn assert_verdict(rs: &BTreeMap<String, VectorResult>, id: &str, v: Verdict, detail: &str) {
    let r = rs.get(id).unwrap_or_else(|| panic!("no result for {id}"));
    assert_eq!(r.verdict, v, "{id}: {r:#?}");
    assert_eq!(r.pass, v == Verdict::Pass, "{id}");
    let d = r.detail.as_deref().unwrap_or_default();
    assert!(d.contains(detail), "{id}: detail {d:?} lacks {detail:?}");
}

#[test]
fn detection() {
    assert!(legacy::is_legacy_dir(&fixtures()));
    assert!(legacy::is_legacy_dir(&fixtures().join("negative")));
    // The YAML catalog has a requirements/ directory.
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
    assert!(!legacy::is_legacy_dir(&catalog));
    assert!(!legacy::is_legacy_dir(&fixtures().join("does-not-exist")));
    assert!(legacy::load(&catalog).is_err());

    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("legacy-detection");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    assert!(!legacy::is_legacy_dir(&tmp), "empty directory");
    std::fs::write(tmp.join("a_1.json"), "{}").unwrap();
    assert!(!legacy::is_legacy_dir(&tmp), "metadata without a fixture");
    std::fs::write(tmp.join("a_1.bin"), [0, 0, 0, 0]).unwrap();
    assert!(legacy::is_legacy_dir(&tmp));
    std::fs::create_dir(tmp.join("requirements")).unwrap();
    assert!(
        !legacy::is_legacy_dir(&tmp),
        "a requirements/ directory wins"
    );
}

#[test]
fn mapping_of_the_fixture_set() {
    let set = legacy::load(&fixtures()).unwrap();
    let ids: Vec<&str> = set.vectors.iter().map(|v| v.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "core_0001_valid_frame",
            "core_0002_invalid_zero_length",
            "core_0003_invalid_oversized_length",
            "core_0004_invalid_truncated_body",
            "core_0005_unknown_assertion_key",
            "core_0006_compatibility_policy",
            "core_0007_unknown_outcome",
            "core_0008_two_frames_profile_2",
            "e1_0001_unsupported_version",
            "e1_0002_uvarint_eleven_octets",
            "e1_0003_empty_msg_id",
        ]
    );
    assert_eq!(set.runnable(), 8);
    let unmapped: BTreeMap<&str, &str> = set.unmapped().collect();
    assert_eq!(
        unmapped,
        BTreeMap::from([
            (
                "core_0005_unknown_assertion_key",
                "assertion envelope.priority is not understood"
            ),
            (
                "core_0006_compatibility_policy",
                "no .bin fixture (process vector with evidence file core_0006_compatibility_policy.evidence.md)"
            ),
            (
                "core_0007_unknown_outcome",
                "expected.outcome 'maybe' is not accept/reject"
            ),
        ])
    );
    let by_id = |id: &str| {
        set.vectors
            .iter()
            .find(|v| v.id == id)
            .map(|v| &v.mapping)
            .unwrap()
    };
    // Alias only: INVALID_FRAME stands for both framing codes.
    let Mapping::Runnable(c) = by_id("core_0002_invalid_zero_length") else {
        panic!()
    };
    assert_eq!(c.outcome, Outcome::Reject);
    assert_eq!(
        c.allowed,
        [ErrorCode::InvalidFrame, ErrorCode::FrameTooLarge]
    );
    assert_eq!(c.alias.as_deref(), Some("INVALID_FRAME"));
    // Canonical plus a consistent alias: the canonical code governs.
    let Mapping::Runnable(c) = by_id("core_0003_invalid_oversized_length") else {
        panic!()
    };
    assert_eq!(c.allowed, [ErrorCode::FrameTooLarge]);
    let Mapping::Runnable(c) = by_id("core_0001_valid_frame") else {
        panic!()
    };
    assert_eq!(c.outcome, Outcome::Accept);
    assert_eq!(c.envelope.msg_id_len, Some(16));
    assert_eq!(c.envelope.payload_len, Some(PAYLOAD.len() as u64));
    assert_eq!(c.envelope.fields.ts_unix_ms, Some(NOW));
    let text = legacy::mapping_summary(&set);
    assert!(
        text.starts_with("legacy mapping: 11 vectors, 8 runnable, 3 not mapped\n"),
        "{text}"
    );
    assert!(text
        .contains("  core_0007_unknown_outcome: expected.outcome 'maybe' is not accept/reject\n"));
}

#[test]
fn verdicts_against_the_reference() {
    let rs = run_set(&fixtures());
    assert_eq!(rs.len(), 11);
    for id in [
        "core_0001_valid_frame",
        "core_0002_invalid_zero_length",
        "core_0003_invalid_oversized_length",
        "core_0004_invalid_truncated_body",
        "core_0008_two_frames_profile_2",
        "e1_0001_unsupported_version",
        "e1_0002_uvarint_eleven_octets",
        "e1_0003_empty_msg_id",
    ] {
        assert_verdict(&rs, id, Verdict::Pass, "");
        let r = &rs[id];
        assert_eq!(r.method.map(|m| m.as_str()), Some("codec"));
        assert!(r.absolute && r.requirements.is_empty());
        assert!(r
            .transcript
            .iter()
            .any(|t| t.dir == swp_conform::model::Dir::Received));
    }
    for id in [
        "core_0005_unknown_assertion_key",
        "core_0006_compatibility_policy",
        "core_0007_unknown_outcome",
    ] {
        assert_verdict(&rs, id, Verdict::HarnessError, "not mapped: ");
        assert_eq!(rs[id].method, None);
        assert!(rs[id].absolute, "an unmapped vector must fail the run");
    }
    let r = &rs["core_0002_invalid_zero_length"];
    assert_eq!(r.expected_error_code.as_deref(), Some("ERR_INVALID_FRAME"));
    assert_eq!(r.observed_error_code.as_deref(), Some("ERR_INVALID_FRAME"));
    assert_eq!(r.namespace, "core");
    assert_eq!(r.path, "legacy/core_0002_invalid_zero_length.json");
    assert_eq!(r.transcript[0].data, "00000000");
    let r = &rs["core_0003_invalid_oversized_length"];
    assert_eq!(
        r.observed_error_code.as_deref(),
        Some("ERR_FRAME_TOO_LARGE")
    );
    assert!(r.expected.contains("stream terminated"), "{}", r.expected);
    assert_eq!(rs["e1_0002_uvarint_eleven_octets"].namespace, "e1");
    assert_eq!(
        rs["e1_0002_uvarint_eleven_octets"]
            .observed_error_code
            .as_deref(),
        Some("ERR_INVALID_UVARINT")
    );
    assert_eq!(
        rs["e1_0003_empty_msg_id"].observed_error_code.as_deref(),
        Some("ERR_MSG_ID_INVALID")
    );
}

#[test]
fn negative_set_fails() {
    let rs = run_set(&fixtures().join("negative"));
    assert_eq!(rs.len(), 6);
    assert_verdict(
        &rs,
        "core_0001_wrong_payload_len",
        Verdict::Fail,
        "payload_len is 46, expected 47",
    );
    assert_verdict(
        &rs,
        "core_0002_zero_length_wrong_code",
        Verdict::Fail,
        "rejected with ERR_INVALID_FRAME, expected ERR_UNSUPPORTED_VERSION",
    );
    assert_verdict(
        &rs,
        "core_0003_valid_frame_expected_reject",
        Verdict::Fail,
        "accepted, expected a reject",
    );
    assert_verdict(
        &rs,
        "core_0004_inconsistent_alias",
        Verdict::HarnessError,
        "not mapped: code 'INVALID_FRAME' stands for ERR_INVALID_FRAME or ERR_FRAME_TOO_LARGE, not expected_error_code ERR_UNSUPPORTED_VERSION",
    );
    assert_verdict(
        &rs,
        "core_0005_noncanonical_code",
        Verdict::HarnessError,
        "not mapped: expected.expected_error_code 'ERR_FOO' is not canonical",
    );
    assert_verdict(
        &rs,
        "core_0006_orphan_fixture",
        Verdict::HarnessError,
        "not mapped: no core_0006_orphan_fixture.json expected metadata",
    );
}

fn problems(doc: Value) -> Vec<String> {
    match legacy::interpret(doc.as_object().unwrap()) {
        Ok(i) => panic!("mapped: {i:?}"),
        Err(p) => p,
    }
}

#[test]
fn interpretation_rules() {
    let ok = |doc: Value| legacy::interpret(doc.as_object().unwrap()).unwrap();
    // Outcome spellings.
    for o in ["accept", "ok", "OK"] {
        assert_eq!(
            ok(json!({"expected": {"outcome": o}})).outcome,
            Outcome::Accept
        );
    }
    for o in ["reject", "error", "ERROR"] {
        let i =
            ok(json!({"expected": {"outcome": o, "expected_error_code": "ERR_INVALID_UVARINT"}}));
        assert_eq!(i.outcome, Outcome::Reject);
        assert_eq!(i.allowed, [ErrorCode::InvalidUvarint]);
    }
    // Top-level code fields, and a canonical code in `code`.
    let i = ok(json!({"expected": {"outcome": "reject"}, "code": "ERR_UNKNOWN_PROFILE"}));
    assert_eq!(i.allowed, [ErrorCode::UnknownProfile]);
    let i = ok(
        json!({"expected": {"outcome": "reject"}, "expected_error_code": "ERR_FRAME_TOO_LARGE", "code": "INVALID_FRAME"}),
    );
    assert_eq!(i.allowed, [ErrorCode::FrameTooLarge]);
    assert_eq!(i.alias.as_deref(), Some("INVALID_FRAME"));
    // Problems, each named precisely; all of a document's problems are reported together.
    assert_eq!(
        problems(json!({"expected": {"outcome": "reject", "expected_error_code": "INVALID_FRAME"}})),
        ["expected.expected_error_code 'INVALID_FRAME' is not canonical (an ERR_* code of error-codes.md)"]
    );
    assert_eq!(
        problems(json!({"expected": {"outcome": "reject", "code": "BAD_THING"}})),
        ["expected.code 'BAD_THING' is neither a canonical ERR_* code nor a registered alias"]
    );
    assert_eq!(
        problems(json!({"expected": {"outcome": "reject"}})),
        ["the outcome is reject, but neither expected_error_code nor code names the expected code"]
    );
    assert_eq!(
        problems(json!({"expected": {"outcome": "accept", "code": "INVALID_FRAME"}})),
        ["the outcome is accept, but an error code is given (ERR_INVALID_FRAME or ERR_FRAME_TOO_LARGE)"]
    );
    assert_eq!(
        problems(
            json!({"expected": {"outcome": "reject", "expected_error_code": "ERR_INVALID_FRAME", "code": "ERR_UNSUPPORTED_VERSION"}})
        ),
        ["code ERR_UNSUPPORTED_VERSION disagrees with expected_error_code ERR_INVALID_FRAME"]
    );
    assert_eq!(
        problems(json!({"expected": {"outcome": "reject", "expected_error_code": "ERR_INVALID_FRAME"}, "expected_error_code": "ERR_FRAME_TOO_LARGE"})),
        ["expected.expected_error_code \"ERR_INVALID_FRAME\" and expected_error_code \"ERR_FRAME_TOO_LARGE\" disagree"]
    );
    assert_eq!(
        problems(json!({"description": "x"})),
        ["expected.outcome is missing"]
    );
    assert_eq!(
        problems(json!({
            "expected": {"outcome": "accept", "verdict": "pass", "binding_behavior": "teleport"},
            "assertions": {"envelope": {"version": -1, "msg_id": "zz", "payload": "00", "payload_len": 2, "extensions": []},
                           "latency_ms": 5}
        })),
        [
            "expected.verdict is not understood",
            "expected.binding_behavior 'teleport' is not understood",
            "assertion envelope.version is -1, not a non-negative integer",
            "assertion envelope.msg_id: hex \"zz\": Invalid character 'z' at position 0",
            "assertion envelope.extensions is not understood",
            "assertion latency_ms is not understood",
            "assertion envelope.payload has 1 octets, but envelope.payload_len is 2",
        ]
    );
    assert_eq!(
        problems(json!({"expected": {"outcome": "accept", "binding_behavior": "stream close"}})),
        ["expected.binding_behavior describes a reject, but the outcome is accept"]
    );
    // Template placeholders (null, empty string) count as absent.
    let i = ok(json!({
        "expected": {"outcome": "accept", "expected_error_code": "", "code": null, "binding_behavior": null},
        "assertions": {"envelope": {"version": 1, "payload_len": null}}
    }));
    assert_eq!(i.allowed, []);
    assert_eq!(i.envelope.fields.version, Some(1));
    assert_eq!(i.envelope.payload_len, None);
    assert_eq!(
        problems(json!({"expected": {"outcome": "reject", "code": ""}})),
        ["the outcome is reject, but neither expected_error_code nor code names the expected code"]
    );
    assert_eq!(
        problems(json!({"expected": "OK"})),
        [
            "expected is a string, not an object",
            "expected.outcome is missing"
        ]
    );
}

#[test]
fn hostile_files_are_reported_not_fatal() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("legacy-hostile");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(tmp.join("x_1.json"), b"{not json").unwrap();
    std::fs::write(tmp.join("x_1.bin"), [0, 0, 0, 0]).unwrap();
    std::fs::write(tmp.join("x_2.json"), b"[1, 2]").unwrap();
    std::fs::write(tmp.join("x_2.bin"), []).unwrap();
    std::fs::write(tmp.join("x_3.json"), vec![b' '; 2 * 1024 * 1024]).unwrap();
    std::fs::write(tmp.join("x_3.bin"), []).unwrap();
    std::fs::write(
        tmp.join("x_4.json"),
        br#"{"vector_id": "x_99", "expected": {"outcome": "ok"}}"#,
    )
    .unwrap();
    std::fs::write(tmp.join("x_4.bin"), []).unwrap();
    // An empty stream: nothing to accept.
    std::fs::write(tmp.join("x_5.json"), br#"{"expected": {"outcome": "ok"}}"#).unwrap();
    std::fs::write(tmp.join("x_5.bin"), []).unwrap();
    let rs = run_set(&tmp);
    assert_verdict(
        &rs,
        "x_1",
        Verdict::HarnessError,
        "not mapped: the metadata is not valid JSON",
    );
    assert_verdict(
        &rs,
        "x_2",
        Verdict::HarnessError,
        "not mapped: the metadata is not a JSON object",
    );
    assert_verdict(
        &rs,
        "x_3",
        Verdict::HarnessError,
        "not mapped: cannot read the metadata: larger than the harness bound of 1048576 octets",
    );
    assert_verdict(
        &rs,
        "x_4",
        Verdict::HarnessError,
        "not mapped: vector_id \"x_99\" does not match the file name x_4",
    );
    assert_verdict(
        &rs,
        "x_5",
        Verdict::Fail,
        "nothing observed, expected accept",
    );
}

#[test]
fn run_dir_writes_a_report() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("legacy-run-dir");
    let _ = std::fs::remove_dir_all(&out);
    let run = legacy::run_dir(&fixtures(), &None, &Some(out.clone()), 10_000).unwrap();
    assert!(run.report.run_failed, "unmapped vectors must fail the run");
    assert_eq!(run.report.total, 11);
    assert_eq!(run.report.passed, 8);
    assert_eq!(run.report.failed, 3);
    assert!(run
        .text
        .contains("legacy mapping: 11 vectors, 8 runnable, 3 not mapped"));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(
        doc["run"]["pattern"],
        format!("legacy:{}", fixtures().display())
    );
    assert_eq!(doc["results"].as_array().unwrap().len(), 11);
    assert_eq!(doc["failures"].as_array().unwrap().len(), 3);
    assert_eq!(doc["verdicts"]["pass"], 8);
    assert_eq!(doc["verdicts"]["harness-error"], 3);
    assert!(matches!(
        legacy::run_cli(&fixtures(), &None, &None, 10_000),
        Ok(false)
    ));
}

#[test]
fn cli_end_to_end() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("legacy-cli");
    let _ = std::fs::remove_dir_all(&out);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_swp-conform"))
        .args(["run", "--vectors"])
        .arg(fixtures())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("8 passed, 3 did not pass  (run FAILED)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("legacy mapping: 11 vectors, 8 runnable, 3 not mapped"),
        "{stdout}"
    );
    assert!(out.join("report.json").is_file());
}

/// A SUT that gives one scripted answer to every request.
struct Scripted(Result<Answer<DecodeReply>, DriverError>);

impl CodecDriver for Scripted {
    fn describe(&self) -> String {
        "scripted".into()
    }

    fn decode(&mut self, _: &DecodeRequest) -> Result<Answer<DecodeReply>, DriverError> {
        self.0.clone()
    }
}

fn reject(code: Option<&str>, alias: Option<&str>, terminated: Option<bool>) -> Event {
    Event::Reject {
        code: code.map(str::to_owned),
        alias: alias.map(str::to_owned),
        detail: None,
        terminated,
    }
}

fn accept() -> Event {
    Event::Accept {
        envelope: EnvelopeView {
            version: 1,
            profile_id: 1,
            msg_type: 1,
            flags: 0,
            ts_unix_ms: NOW,
            msg_id: Hex(bytes::Bytes::from_static(MSG_ID)),
            extensions: Vec::new(),
            payload: Hex(bytes::Bytes::from_static(PAYLOAD)),
        },
        unknown_flags: None,
    }
}

fn one_chunk(events: Vec<Event>) -> Result<Answer<DecodeReply>, DriverError> {
    Ok(Answer::Ok(DecodeReply {
        chunks: vec![events],
        end: Vec::new(),
    }))
}

/// Runs fixture `id` against a scripted answer.
fn scripted(id: &str, answer: Result<Answer<DecodeReply>, DriverError>) -> VectorResult {
    let set = legacy::load(&fixtures()).unwrap();
    let v = set.vectors.iter().find(|v| v.id == id).unwrap();
    let sut = Sut::builtin().unwrap();
    legacy::run_one(&set, v, &sut, &mut Scripted(answer))
}

#[test]
fn judging_of_scripted_answers() {
    let check = |r: VectorResult, v: Verdict, detail: &str| {
        assert_eq!(r.verdict, v, "{r:#?}");
        let d = r.detail.as_deref().unwrap_or_default();
        assert!(d.contains(detail), "{d:?} lacks {detail:?}");
        r
    };
    let zero = "core_0002_invalid_zero_length"; // INVALID_FRAME alias, stream close
    let over = "core_0003_invalid_oversized_length"; // ERR_FRAME_TOO_LARGE, stream close
    let version = "e1_0001_unsupported_version"; // error response
    let valid = "core_0001_valid_frame";

    // A reject whose code cannot be seen.
    check(
        scripted(zero, one_chunk(vec![reject(None, None, Some(true))])),
        Verdict::RejectCodeNotObservable,
        "reject observed without a code; expected ERR_INVALID_FRAME or ERR_FRAME_TOO_LARGE",
    );
    // A SUT that reports only the alias: it stands for the expected canonical code.
    let r = check(
        scripted(
            over,
            one_chunk(vec![reject(None, Some("INVALID_FRAME"), Some(true))]),
        ),
        Verdict::Pass,
        "",
    );
    assert_eq!(r.observed_code.as_deref(), Some("INVALID_FRAME"));
    assert_eq!(
        r.observed_error_code.as_deref(),
        Some("ERR_FRAME_TOO_LARGE")
    );
    check(
        scripted(
            over,
            one_chunk(vec![reject(None, Some("NOPE"), Some(true))]),
        ),
        Verdict::Fail,
        "the SUT reported alias \"NOPE\"",
    );
    check(
        scripted(
            zero,
            one_chunk(vec![reject(Some("BOGUS"), None, Some(true))]),
        ),
        Verdict::Fail,
        "the SUT reported \"BOGUS\", which is not a canonical ERR_* code",
    );
    // A wrong code outweighs a codeless reject; a matching one anywhere passes.
    check(
        scripted(
            zero,
            one_chunk(vec![
                reject(None, None, None),
                reject(Some("ERR_UNKNOWN_PROFILE"), None, Some(true)),
            ]),
        ),
        Verdict::Fail,
        "rejected with ERR_UNKNOWN_PROFILE",
    );
    check(
        scripted(
            zero,
            one_chunk(vec![
                accept(),
                reject(Some("ERR_INVALID_FRAME"), None, Some(true)),
            ]),
        ),
        Verdict::Pass,
        "",
    );
    // Binding behaviour.
    check(
        scripted(
            zero,
            one_chunk(vec![reject(Some("ERR_INVALID_FRAME"), None, Some(false))]),
        ),
        Verdict::Fail,
        "the stream stayed open",
    );
    check(
        scripted(
            version,
            one_chunk(vec![reject(
                Some("ERR_UNSUPPORTED_VERSION"),
                None,
                Some(true),
            )]),
        ),
        Verdict::Fail,
        "the stream was terminated",
    );
    let r = check(
        scripted(
            zero,
            one_chunk(vec![reject(Some("ERR_INVALID_FRAME"), None, None)]),
        ),
        Verdict::Pass,
        "",
    );
    assert!(r.transcript.iter().any(|t| t
        .data
        .contains("does not report whether the stream was terminated")));
    // Accept vectors: every event must be an accept, and there must be one.
    check(
        scripted(valid, one_chunk(vec![])),
        Verdict::Fail,
        "nothing observed, expected accept",
    );
    check(
        scripted(
            valid,
            one_chunk(vec![
                accept(),
                reject(Some("ERR_INVALID_FRAME"), None, None),
            ]),
        ),
        Verdict::Fail,
        "event 2: rejected (ERR_INVALID_FRAME), expected accept",
    );
    check(
        scripted(
            valid,
            Ok(Answer::Ok(DecodeReply {
                chunks: vec![vec![accept()]],
                end: vec![reject(Some("ERR_INVALID_FRAME"), None, Some(true))],
            })),
        ),
        Verdict::Fail,
        "event 2: rejected",
    );
    check(
        scripted(zero, one_chunk(vec![])),
        Verdict::Fail,
        "nothing observed, expected a reject",
    );
    // Connector outcomes.
    check(
        scripted(valid, Ok(Answer::Unsupported("no decode".into()))),
        Verdict::Unsupported,
        "no decode",
    );
    check(
        scripted(valid, Err(DriverError::Timeout(5))),
        Verdict::Timeout,
        "5 ms",
    );
    check(
        scripted(valid, Err(DriverError::Crashed("signal 9".into()))),
        Verdict::Crash,
        "signal 9",
    );
    check(
        scripted(
            valid,
            Ok(Answer::Ok(DecodeReply {
                chunks: vec![vec![accept()], vec![]],
                end: Vec::new(),
            })),
        ),
        Verdict::HarnessError,
        "the SUT answered for 2 chunks, 1 was sent",
    );
}

#[test]
fn expected_lines_name_what_is_checked() {
    let rs = run_set(&fixtures());
    assert_eq!(
        rs["core_0001_valid_frame"].expected,
        "accept with version=1, profile_id=1, msg_type=1, flags=0, ts_unix_ms=1767225600000, msg_id_len=16, payload_len=46, msg_id=6c65676163792d6d73672d3030303031, payload as given"
    );
    assert_eq!(
        rs["core_0002_invalid_zero_length"].expected,
        "reject ERR_INVALID_FRAME (or ERR_FRAME_TOO_LARGE), stream terminated"
    );
    assert_eq!(
        rs["e1_0001_unsupported_version"].expected,
        "reject ERR_UNSUPPORTED_VERSION, stream stays open"
    );
    assert_eq!(rs["core_0007_unknown_outcome"].expected, "(not mapped)");
}

#[test]
fn testee_and_inproc_agree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = root.join("implementations/manifests/reference-testee.yaml");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("legacy-testee");
    let _ = std::fs::remove_dir_all(&out);
    let testee = legacy::run_dir(&fixtures(), &Some(manifest), &Some(out), 10_000).unwrap();
    let inproc = run_set(&fixtures());
    assert!(
        testee.report.sut.reported.contains("testee"),
        "{}",
        testee.report.sut.reported
    );
    assert_eq!(testee.report.results.len(), inproc.len());
    for r in &testee.report.results {
        let i = &inproc[&r.vector_id];
        assert_eq!(
            (r.verdict, &r.observed_error_code),
            (i.verdict, &i.observed_error_code),
            "{}: {:?}",
            r.vector_id,
            r.detail
        );
    }
}
