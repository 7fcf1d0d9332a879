//! The `mcp_native` method: the engine against the in-repo mock MCP server (`mockmcp`
//! example, no network) and the `mcpnative` namespace against two real MCP servers at pinned
//! versions (installed by scripts/install-mcp-servers.sh). Real servers deviate; their
//! verdicts are compared with reports/third-party/<server>/expected.json so a change in
//! either direction shows: every non-pass there names the rule it breaks and the observed
//! behaviour, and a failure for another reason than the one recorded is a change too.
//! `SWP_UPDATE_REPORTS=1` rewrites report.json and expected.json (keeping the recorded rules)
//! and then fails, so the rewrite is reviewed.

mod common;
use common::expected::{compare_expected, read_expected, rebuild_expected};
use common::{catalog, explain, root};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use swp_conform::catalog::Catalog;
use swp_conform::method::{self, Setup};
use swp_conform::model::{VectorResult, Verdict};
use swp_conform::select::{select, Selection};
use swp_conform::sut::Sut;

fn run(cat: &Catalog, sut: &Sut, work: &Path) -> Vec<VectorResult> {
    std::fs::create_dir_all(work).unwrap();
    let sel = Selection {
        namespaces: vec!["mcpnative".into()],
        ..Default::default()
    };
    let plan = select(cat, &sel).unwrap();
    assert!(
        plan.len() >= 11,
        "the mcpnative namespace has {} vectors",
        plan.len()
    );
    method::run(cat, sut, &Setup::new(work), &plan).unwrap()
}

fn verdicts(rs: &[VectorResult]) -> BTreeMap<String, String> {
    rs.iter()
        .map(|r| (r.vector_id.clone(), r.verdict.as_str().to_owned()))
        .collect()
}

fn mock_sut(mode: &str) -> (Sut, PathBuf) {
    let dir = root().join(format!("target/mcp-native-test/mock-{mode}"));
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        r#"name: mockmcp-{mode}
version: "0"
kind: mcp-server
start: {{command: "{}", args: ["{mode}"]}}
methods: [mcp_native]
limits: {{MAX_FRAME_BYTES: 8388608, MIN_MSG_ID_BYTES: 8, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 4096, MAX_PAYLOAD_BYTES: 8387584}}
policy: {{timestamp_freshness: false}}
mcp_native:
  transport: stdio
  protocol_version: "2025-06-18"
  timing: {{step_ms: 500, vector_ms: 5000, max_read_bytes: 1048576}}
  params: {{RESOURCE_URI: "mock://doc", PROMPT_NAME: mock-prompt}}
"#,
        common::example("mockmcp").display()
    );
    let p = dir.join("manifest.yaml");
    std::fs::write(&p, text).unwrap();
    (Sut::load(&p).unwrap(), dir)
}

#[test]
fn mock_conformant_server_passes_every_vector() {
    let cat = catalog();
    let (sut, work) = mock_sut("good");
    let rs = run(&cat, &sut, &work);
    assert!(
        rs.iter().all(|r| r.verdict == Verdict::Pass),
        "{}",
        explain(&rs)
    );
}

#[test]
fn mock_lax_server_fails_exactly_its_deviations() {
    let cat = catalog();
    let (sut, work) = mock_sut("lax");
    let rs = run(&cat, &sut, &work);
    let v = verdicts(&rs);
    for (id, verdict) in &v {
        let want = match id.as_str() {
            "mcpnative_0009_malformed_json"
            | "mcpnative_0010_missing_jsonrpc"
            | "mcpnative_0011_request_before_initialize" => "fail",
            _ => "pass",
        };
        assert_eq!(verdict, want, "{id}\n{}", explain(&rs));
    }
}

#[test]
fn mock_garbage_and_crash_are_reported() {
    let cat = catalog();
    let (sut, work) = mock_sut("garbage");
    let rs = run(&cat, &sut, &work);
    let r = rs
        .iter()
        .find(|r| r.vector_id == "mcpnative_0001_initialize")
        .unwrap();
    assert_eq!(r.verdict, Verdict::Fail, "{}", explain(&rs));
    assert!(r.detail.as_deref().unwrap_or("").contains("not JSON"));
    let (sut, work) = mock_sut("crash");
    let rs = run(&cat, &sut, &work);
    let r = rs
        .iter()
        .find(|r| r.vector_id == "mcpnative_0003_tools_list")
        .unwrap();
    assert_eq!(r.verdict, Verdict::Crash, "{}", explain(&rs));
    assert!(r.detail.as_deref().unwrap_or("").contains("status 3"));
}

/// Installs the pinned servers (idempotent); a failure fails the test with the reason.
fn install() {
    let o = Command::new("bash")
        .arg(root().join("scripts/install-mcp-servers.sh"))
        .output()
        .expect("cannot run scripts/install-mcp-servers.sh");
    assert!(
        o.status.success(),
        "installing the pinned MCP servers failed ({}):\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn real_server(cat: &Catalog, manifest: &str, dir: &str) -> Result<(), String> {
    let sut = Sut::load(&root().join("implementations/manifests").join(manifest))
        .map_err(|e| e.to_string())?;
    let work = root().join("target/mcp-native-test").join(dir);
    let started = std::time::Instant::now();
    let rs = run(cat, &sut, &work);
    let out = root().join("reports/third-party").join(dir);
    let expected_path = out.join("expected.json");
    let previous = read_expected(&expected_path).unwrap_or_default();
    if common::update_switch("SWP_UPDATE_REPORTS") {
        use swp_conform::report::model::{Report, RunInfo, SutInfo};
        let rebuilt = rebuild_expected(&rs, &previous, |_| None);
        std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
        let mut report = Report::new(
            RunInfo {
                pattern: "mcpnative_*".into(),
                no_fallback: true,
                timestamp_utc: swp_conform::report::model::rfc3339(
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_secs())
                        .unwrap_or(0),
                ),
                runner_git_sha: swp_conform::report::model::runner_git_sha(),
                duration_ms: started.elapsed().as_millis() as u64,
                command: vec!["cargo test -p swp-conform --test mcp_native".into()],
                interrupted: false,
                ..Default::default()
            },
            SutInfo {
                name: sut.manifest.name.clone(),
                version: sut.manifest.version.clone(),
                reported: method::open(cat, &sut, &Setup::new(&work))
                    .map_err(|e| e.to_string())?
                    .describe(),
            },
            rs,
            false,
        );
        report.attach(
            cat,
            swp_conform::cli::digests(cat, &sut).map_err(|e| e.to_string())?,
        );
        std::fs::write(out.join("report.json"), report.to_json()).map_err(|e| e.to_string())?;
        let text = serde_json::to_string_pretty(&rebuilt).map_err(|e| e.to_string())? + "\n";
        std::fs::write(&expected_path, text).map_err(|e| e.to_string())?;
        return Err(format!("{dir}: rewrote report.json and expected.json"));
    }
    let want = read_expected(&expected_path)?;
    let diff = compare_expected(&rs, &want);
    if !diff.is_empty() {
        return Err(format!(
            "{dir}: results changed against {} (SWP_UPDATE_REPORTS=1 rewrites it; then explain every non-pass):\n{}\n{}",
            expected_path.display(),
            diff.join("\n"),
            explain(&rs)
        ));
    }
    Ok(())
}

#[test]
fn real_servers_match_their_expected_verdicts() {
    install();
    let cat = catalog();
    let mut errs = Vec::new();
    for (manifest, dir) in [
        ("mcp-server-everything.yaml", "mcp-server-everything"),
        ("mcp-python-sdk.yaml", "mcp-python-sdk"),
    ] {
        if let Err(e) = real_server(&cat, manifest, dir) {
            errs.push(e);
        }
    }
    if common::update_switch("SWP_UPDATE_REPORTS") {
        common::rewrote(2 * errs.len(), "SWP_UPDATE_REPORTS");
    }
    assert!(errs.is_empty(), "{}", errs.join("\n\n"));
}
