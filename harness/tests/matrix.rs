//! `swp-conform matrix`: the SWP stacks side by side over the whole catalog (the real
//! matrix CI runs), a broken stack that must show up as disagreements, a column that leaves
//! no report, and the reference matrix page pinned under `reports/reference/matrix/`.
//! Every check recomputes what the page claims from the columns' own report.json files,
//! with code of its own, not with the matrix's.

mod common;
use common::root;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use swp_conform::matrix::model::{ColumnSeed, Matrix, MatrixRun};

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swp-conform"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run swp-conform")
}

fn out_dir(name: &str) -> PathBuf {
    let d = root().join("target/matrix-test").join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn read_json(p: &Path) -> Value {
    let t = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// matrix.json conforms to its published schema.
fn conforms_to_schema(m: &Value) {
    let schema = read_json(&root().join("docs/schema/matrix.schema.json"));
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(m)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "matrix.json: {}", errors.join("\n"));
}

/// Each column's verdict per vector, read from its report.json (results and skipped).
fn verdicts_of(report: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for key in ["results", "not_applicable"] {
        for r in report[key].as_array().into_iter().flatten() {
            out.insert(
                r["vector_id"].as_str().unwrap_or_default().to_owned(),
                r["verdict"].as_str().unwrap_or_default().to_owned(),
            );
        }
    }
    out
}

/// The rows where one column meets a vector and another breaks it, computed here from the
/// reports: met = pass or a reject whose code the wire cannot show; broken = fail, timeout,
/// crash, or unsupported (docs/matrix.md).
fn disagreements(cols: &[(String, BTreeMap<String, String>)]) -> BTreeSet<String> {
    let ids: BTreeSet<&String> = cols.iter().flat_map(|(_, v)| v.keys()).collect();
    ids.into_iter()
        .filter(|id| {
            let vs: Vec<&str> = cols
                .iter()
                .filter_map(|(_, v)| v.get(*id).map(String::as_str))
                .collect();
            let met = vs
                .iter()
                .any(|v| matches!(*v, "pass" | "reject-code-not-observable"));
            let broke = vs
                .iter()
                .any(|v| matches!(*v, "fail" | "timeout" | "crash" | "unsupported"));
            met && broke
        })
        .map(|id| (*id).clone())
        .collect()
}

/// Checks matrix.json against the reports it was built from, and returns it.
fn check_against_reports(dir: &Path) -> Value {
    let m = read_json(&dir.join("matrix.json"));
    conforms_to_schema(&m);
    let mut cols = Vec::new();
    for c in m["columns"].as_array().unwrap() {
        let label = c["label"].as_str().unwrap().to_owned();
        let report_path = dir.join(&label).join("report.json");
        if !report_path.is_file() {
            assert_eq!(c["status"], "no-report", "{label}");
            continue;
        }
        let report = read_json(&report_path);
        assert_eq!(
            c["claims"], report["claims"],
            "{label}: claims in the header"
        );
        assert_eq!(
            c["headline"].as_str().unwrap_or(""),
            report["headline_claim"].as_str().unwrap_or(""),
            "{label}: the claim line, profile claims included"
        );
        cols.push((label, verdicts_of(&report)));
    }
    let labels: Vec<String> = m["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap().to_owned())
        .collect();
    for row in m["rows"].as_array().unwrap() {
        let id = row["vector_id"].as_str().unwrap();
        for (i, label) in labels.iter().enumerate() {
            let got = row["cells"][i]["verdict"].as_str();
            let want = cols
                .iter()
                .find(|(l, _)| l == label)
                .and_then(|(_, v)| v.get(id))
                .map(String::as_str);
            assert_eq!(got, want, "{id} × {label}");
        }
    }
    let listed: BTreeSet<String> = m["disagreements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["vector_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(listed, disagreements(&cols), "the disagreement list");
    m
}

/// The page in Chromium counts what matrix.json says; `false` when no browser can be had.
fn browser_counts_match(dir: &Path, m: &Value) -> bool {
    let o = Command::new("bash")
        .arg(root().join("scripts/check-matrix-page.sh"))
        .arg(dir.join("matrix.html"))
        .output()
        .expect("run scripts/check-matrix-page.sh");
    let check = match o.status.code() {
        Some(0) => String::from_utf8_lossy(&o.stdout).into_owned(),
        Some(3) if std::env::var("SWP_REQUIRE_BROWSER").as_deref() != Ok("1") => {
            eprintln!("SKIPPED: no chromium here and it cannot be installed");
            return false;
        }
        _ => panic!("matrix page check failed:\n{}", common::output_text(&o)),
    };
    let attr = |name: &str| -> Option<u64> {
        let key = format!(" {name}=\"");
        let i = check.find(&key)? + key.len();
        check[i..].split('"').next()?.parse().ok()
    };
    assert_eq!(
        attr("data-js-rows"),
        m["counts"]["rows"].as_u64(),
        "{check}"
    );
    assert_eq!(
        attr("data-js-columns"),
        m["counts"]["columns"].as_u64(),
        "{check}"
    );
    assert_eq!(
        attr("data-js-disagree"),
        m["counts"]["disagreements"].as_u64(),
        "{check}"
    );
    for (v, n) in m["counts"]["cells"].as_object().unwrap() {
        assert_eq!(
            attr(&format!("data-js-cells-{v}")),
            n.as_u64(),
            "cells {v}: {check}"
        );
    }
    true
}

/// The matrix CI runs: the SWP stacks side by side over the whole catalog (the reference over
/// TLS and the independent endpoints), and the reference MCP gateway in front of the
/// reference endpoint as an intermediary pair.
const SWP_MATRIX: &str = "suts:
  - {label: reference-tls, manifest: reference-tls.yaml}
  - {label: foreign-py, manifest: foreign-py.yaml}
  - {label: foreign-js, manifest: foreign-js.yaml}
pairs:
  - {label: gateway+serve, manifest: gateway-http.yaml, intermediary: swp-ref mcp-gateway, upstream: swp-ref serve}
";

#[test]
fn the_swp_stacks_side_by_side_over_the_whole_catalog() {
    let dir = out_dir("swp");
    std::fs::create_dir_all(&dir).unwrap();
    // The matrix file sits with the manifests it names.
    let spec = root().join("target/matrix-test/swp-matrix.yaml");
    let manifests = root().join("implementations/manifests");
    std::fs::write(
        &spec,
        SWP_MATRIX.replace("manifest: ", &format!("manifest: {}/", manifests.display())),
    )
    .unwrap();
    let out = dir.to_string_lossy().into_owned();
    let o = bin(&[
        "matrix",
        "--quiet",
        "--jobs",
        "2",
        "--matrix",
        &spec.to_string_lossy(),
        "--out",
        &out,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::output_text(&o));
    let m = check_against_reports(&dir);
    let rows = m["counts"]["rows"].as_u64().unwrap();
    let cat = common::catalog();
    assert_eq!(rows, cat.vectors.len() as u64, "one row per catalog vector");
    for c in m["columns"].as_array().unwrap() {
        assert_eq!(c["status"], "complete", "{}", c["label"]);
    }
    // The pair's cell in the pairs view counts what its column met.
    let pair = &m["pairs"][0];
    assert_eq!(pair["intermediary"], "swp-ref mcp-gateway");
    assert!(pair["meets"].as_u64().unwrap() >= 10, "{pair}");
    assert_eq!(pair["breaks"], 0, "{pair}");
    browser_counts_match(&dir, &m);
    // What the run prints names each column's claims.
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("reference-tls") && text.contains("foreign-py"),
        "{text}"
    );
}

/// The manifest of a column that cannot be run: the path does not exist.
const MISSING: &str = "implementations/manifests/no-such-sut.yaml";

#[test]
fn a_broken_stack_disagrees_where_it_breaks_and_a_lost_column_says_why() {
    let dir = out_dir("broken");
    std::fs::create_dir_all(&dir).unwrap();
    let reject_all = common::trivial::manifest("reject-all", &dir.join("manifests"));
    let spec = dir.join("matrix.yaml");
    std::fs::write(
        &spec,
        format!(
            "suts:\n  - {{label: reference}}\n  - {{label: reject-all, manifest: {}}}\n  - {{label: lost, manifest: {}}}\n",
            reject_all.display(),
            root().join(MISSING).display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = bin(&[
        "matrix",
        "--quiet",
        "--jobs",
        "3",
        "--run-jobs",
        "4",
        "--filter",
        "core_00*",
        "--matrix",
        &spec.to_string_lossy(),
        "--out",
        &out.to_string_lossy(),
    ]);
    // A column without a report makes the matrix incomplete: exit 1.
    assert_eq!(o.status.code(), Some(1), "{}", common::output_text(&o));
    let m = check_against_reports(&out);
    let lost = &m["columns"][2];
    assert_eq!(lost["status"], "no-report");
    let why = lost["why"].as_str().unwrap();
    assert!(
        why.contains("no report.json") && why.contains("no-such-sut.yaml"),
        "the lost column says why: {why}"
    );
    // Refusing every frame breaks every vector that expects an accept: each must be listed
    // as a disagreement with the reference.
    let n = m["counts"]["disagreements"].as_u64().unwrap();
    assert!(n >= 10, "only {n} disagreements: {}", m["disagreements"]);
    for d in m["disagreements"].as_array().unwrap() {
        assert_eq!(d["meets"], serde_json::json!(["reference"]), "{d}");
        assert_eq!(d["breaks"], serde_json::json!(["reject-all"]), "{d}");
    }
    let page = std::fs::read_to_string(out.join("matrix.html")).unwrap();
    assert!(
        page.contains("no report: "),
        "the page names the lost column"
    );
    // Rebuilding from the reports alone gives the same document outside the run block.
    let before = std::fs::read_to_string(out.join("matrix.json")).unwrap();
    let o = bin(&[
        "matrix",
        "--rebuild",
        "--matrix",
        &spec.to_string_lossy(),
        "--out",
        &out.to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", common::output_text(&o));
    let after = std::fs::read_to_string(out.join("matrix.json")).unwrap();
    let strip = |t: &str| {
        let mut v: Matrix = serde_json::from_str(t).unwrap();
        v.run = MatrixRun::default();
        v.to_json()
    };
    assert!(
        strip(&before) == strip(&after),
        "a rebuild from the reports changed matrix.json outside the run block"
    );
    assert_eq!(
        m["run"]["runs"][2]["exit_code"], 2,
        "the lost column's run exited with 2"
    );
}

/// The body of an insta snapshot file.
fn snapshot_body(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.splitn(3, "---\n")
        .nth(2)
        .unwrap_or_default()
        .to_owned()
}

/// The reference's committed reports (one per transport, and the lenient choices) as one
/// matrix: regenerated by scripts/update-reference-reports.sh after the reports.
#[test]
fn reference_matrix() {
    let dir = out_dir("reference");
    let labels = ["inproc", "stdio", "tcp", "tls", "lenient"];
    for l in labels {
        let body = snapshot_body(
            &root()
                .join("reports/reference")
                .join(l)
                .join("report.json.snap"),
        );
        std::fs::create_dir_all(dir.join(l)).unwrap();
        std::fs::write(dir.join(l).join("report.json"), body).unwrap();
    }
    let seeds: Vec<ColumnSeed> = labels
        .iter()
        .map(|l| ColumnSeed {
            label: (*l).to_owned(),
            pair: None,
            run: None,
            missing: None,
        })
        .collect();
    let m = swp_conform::matrix::build(&dir, &seeds, MatrixRun::default()).redacted();
    swp_conform::matrix::write(&dir, &m).unwrap();
    check_against_reports(&dir);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("reports/reference/matrix"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_description(
        "the reference's reports as one matrix; regenerate: scripts/update-reference-reports.sh",
    );
    settings.bind(|| {
        insta::assert_snapshot!("matrix.json", m.to_json());
        insta::assert_snapshot!("matrix.html", swp_conform::matrix::html::render(&m));
    });
}
