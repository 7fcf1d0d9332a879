//! `swp-conform history` on three synthetic nights built from the reference's stored report:
//! one regression that came with a new SUT version, one flip with no change of SUT, harness
//! or catalog (flaky), and a second SUT whose change came with a new harness (not flaky).
//! The nights are given out of order, in both layouts `history` reads (a matrix directory
//! and a plain run's `--out`).

mod common;
use common::root;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const NIGHTS: [&str; 3] = [
    "2026-11-30T02:00:00Z",
    "2026-12-01T02:00:00Z",
    "2026-12-02T02:00:00Z",
];
/// Breaks from night 2, when the SUT went from 0.1.0 to 0.2.0.
const REGRESSED: &str = "core_0001_valid_min_frame";
/// Times out on night 3 alone, with nothing else changed.
const FLIPPED: &str = "core_0002_valid_typical_frame";
/// On the second SUT: fails on night 3, when the harness commit changed.
const HARNESS_CHANGED: &str = "e1_0001_valid_min_envelope";

fn stored_report() -> Value {
    let text =
        std::fs::read_to_string(root().join("reports/reference/inproc/report.json.snap")).unwrap();
    let body = text.splitn(3, "---\n").nth(2).unwrap();
    serde_json::from_str(body).unwrap()
}

/// The stored report as one night's run: its time, SUT version, harness commit, and the
/// verdicts changed.
fn night(base: &Value, at: &str, version: &str, sha: &str, set: &[(&str, &str)]) -> Value {
    let mut r = base.clone();
    r["run"]["timestamp_utc"] = json!(at);
    r["run"]["runner_git_sha"] = json!(sha);
    r["sut"]["version"] = json!(version);
    r["sut"]["reported"] = json!("");
    for res in r["results"].as_array_mut().unwrap() {
        if let Some((_, v)) = set.iter().find(|(id, _)| res["vector_id"] == *id) {
            res["verdict"] = json!(v);
            res["pass"] = json!(*v == "pass");
        }
    }
    r
}

fn write(p: &Path, v: &Value) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, serde_json::to_string(v).unwrap()).unwrap();
}

fn nights() -> (PathBuf, Vec<PathBuf>) {
    let dir = root().join("target/history-test");
    let _ = std::fs::remove_dir_all(&dir);
    let base = stored_report();
    for id in [REGRESSED, FLIPPED, HARNESS_CHANGED] {
        let found = base["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["vector_id"] == id && r["verdict"] == "pass");
        assert!(found, "{id} passes in the stored report");
    }
    let ref_nights = [
        night(&base, NIGHTS[0], "0.1.0", "aaaa", &[]),
        night(&base, NIGHTS[1], "0.2.0", "aaaa", &[(REGRESSED, "fail")]),
        night(
            &base,
            NIGHTS[2],
            "0.2.0",
            "aaaa",
            &[(REGRESSED, "fail"), (FLIPPED, "timeout")],
        ),
    ];
    let other = [
        night(&base, NIGHTS[0], "9", "aaaa", &[]),
        night(&base, NIGHTS[1], "9", "aaaa", &[]),
        night(&base, NIGHTS[2], "9", "bbbb", &[(HARNESS_CHANGED, "fail")]),
    ];
    let mut dirs = Vec::new();
    for (i, (a, b)) in ref_nights.iter().zip(&other).enumerate() {
        let d = dir.join(format!("night-{}", i + 1));
        // A matrix directory: one report per label.
        write(&d.join("ref/report.json"), a);
        write(&d.join("other/report.json"), b);
        dirs.push(d);
    }
    // The newest night first: runs are keyed by their reports' times, not by argument order.
    dirs.reverse();
    (dir, dirs)
}

#[test]
fn three_nights_name_the_regression_and_the_flaky_flip() {
    let (dir, dirs) = nights();
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_swp-conform"))
        .arg("history")
        .args(&dirs)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let text = common::output_text(&o);
    // The newest night regressed (the flip, and the harness-changed vector): exit 1.
    assert_eq!(o.status.code(), Some(1), "{text}");
    let h: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("history.json")).unwrap()).unwrap();
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("docs/schema/history.schema.json")).unwrap(),
    )
    .unwrap();
    assert!(jsonschema::validator_for(&schema).unwrap().is_valid(&h));
    let sut = |label: &str| {
        h["suts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["label"] == label)
            .unwrap_or_else(|| panic!("no {label}: {text}"))
            .clone()
    };
    let change = |s: &Value, id: &str| {
        s["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["vector_id"] == id)
            .unwrap_or_else(|| panic!("{id} not among the changes"))
            .clone()
    };
    let r = sut("ref");
    let runs: Vec<&str> = r["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["timestamp_utc"].as_str().unwrap())
        .collect();
    assert_eq!(runs, NIGHTS, "runs in time order");
    // Exactly the two vectors changed on this SUT.
    assert_eq!(
        r["changes"].as_array().unwrap().len(),
        2,
        "{}",
        r["changes"]
    );
    let reg = change(&r, REGRESSED);
    assert_eq!(reg["trend"], "regression");
    assert_eq!(reg["failing_since"], NIGHTS[1], "the first failing night");
    assert_eq!(reg["last_change"]["sut_version"], json!(["0.1.0", "0.2.0"]));
    assert_eq!(
        reg["flaky"], false,
        "a change with a new SUT version is not flaky"
    );
    let flip = change(&r, FLIPPED);
    assert_eq!(flip["flaky"], true, "{flip}");
    assert_eq!(flip["flaky_at"], json!([NIGHTS[2]]));
    assert_eq!(flip["now"], "timeout");
    // The second SUT: a change that came with a new harness commit is not flaky.
    let other = sut("other");
    let hc = change(&other, HARNESS_CHANGED);
    assert_eq!(hc["flaky"], false);
    assert_eq!(
        hc["last_change"]["harness"][1],
        json!(format!("{} bbbb", "0.1.0"))
    );
    assert!(text.contains(&format!("REGRESSION {REGRESSED}")), "{text}");
    assert!(text.contains(&format!("FLAKY {FLIPPED}")), "{text}");
    assert!(!text.contains(&format!("FLAKY {REGRESSED}")), "{text}");
    let page = std::fs::read_to_string(out.join("history.html")).unwrap();
    for want in [REGRESSED, FLIPPED, "class=\"flaky\"", NIGHTS[1]] {
        assert!(page.contains(want), "history.html lacks {want}");
    }
}

#[test]
fn a_plain_runs_directory_is_read_under_its_sut_name_and_an_empty_one_is_named() {
    let dir = root().join("target/history-test-plain");
    let _ = std::fs::remove_dir_all(&dir);
    let base = stored_report();
    let a = dir.join("a");
    write(
        &a.join("report.json"),
        &night(&base, NIGHTS[0], "1", "x", &[]),
    );
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let run = |dirs: &[&Path]| {
        Command::new(env!("CARGO_BIN_EXE_swp-conform"))
            .arg("history")
            .args(dirs)
            .arg("--out")
            .arg(dir.join("out"))
            .output()
            .unwrap()
    };
    let o = run(&[&a]);
    assert_eq!(o.status.code(), Some(0), "{}", common::output_text(&o));
    let h: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/history.json")).unwrap())
            .unwrap();
    assert_eq!(h["suts"][0]["label"], base["sut"]["name"]);
    let o = run(&[&a, &empty]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("empty: no report.json"), "{err}");
}
