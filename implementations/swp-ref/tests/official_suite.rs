//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance` 0.1.16, whose
//! client is the official TypeScript SDK) against the reference gateway over SWP:
//! `swp-ref serve --fixtures conformance` on loopback TCP, `swp-ref mcp-gateway --listen
//! http://127.0.0.1:0` in front of it.
//!
//! - Under the default envelope policy (mcp) every active server scenario must pass, and
//!   every pending one must pass or be listed with a reason in docs/mcp-gateway.md
//!   ("Pending scenarios"), a list checked against the suite's own.
//! - Under `--envelope seed-003` the suite's failures must be exactly the seed's refusals of
//!   what MCP allows: an integer id, or a request without params.
//!
//! The suite and its Node 22 are installed, pinned and cached under target/ by
//! scripts/install-official-conformance.sh (npm must be on PATH).

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_swp-ref");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The Node 22 binary and the suite's CLI, installed by the project's script.
fn install() -> (PathBuf, PathBuf) {
    let out = Command::new(root().join("scripts/install-official-conformance.sh"))
        .stderr(Stdio::inherit())
        .output()
        .expect("cannot run scripts/install-official-conformance.sh");
    assert!(
        out.status.success(),
        "scripts/install-official-conformance.sh failed (npm must be on PATH)"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let (Some(node), Some(cli)) = (lines.next(), lines.next()) else {
        panic!("the install script printed {text:?}")
    };
    (PathBuf::from(node), PathBuf::from(cli))
}

fn work(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Starts `args` and waits for the port it writes to `port_file`.
fn start(args: &[&str], port_file: &Path) -> (Kill, u16) {
    let child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut k = Kill(child);
    let t0 = Instant::now();
    loop {
        if let Some(p) = std::fs::read_to_string(port_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return (k, p);
        }
        assert!(
            k.0.try_wait().unwrap().is_none(),
            "{args:?} exited before listening"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "{args:?} did not listen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One scenario's outcome: its checks' statuses and, for failures, what they said.
#[derive(Debug, Default)]
struct Scenario {
    passed: usize,
    failed: Vec<String>,
    checks: Vec<Value>,
}

/// Runs one suite (`active`, `pending`) against `url`; the scenarios by name.
fn run_suite(
    node: &Path,
    cli: &Path,
    url: &str,
    suite: &str,
    out: &Path,
) -> BTreeMap<String, Scenario> {
    let run = Command::new(node)
        .arg(cli)
        .args(["server", "--url", url, "--suite", suite, "-o"])
        .arg(out)
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let ran: BTreeSet<String> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("=== Running scenario: "))
        .filter_map(|l| l.strip_suffix(" ==="))
        .map(str::to_owned)
        .collect();
    assert!(
        stdout.contains("Total: "),
        "the suite printed no summary:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let mut scenarios = BTreeMap::new();
    for entry in std::fs::read_dir(out).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        // server-<scenario>-<ISO timestamp with dashes>
        let Some(rest) = name.strip_prefix("server-") else {
            continue;
        };
        let Some(scenario) = ran.iter().find(|s| {
            rest.strip_prefix(s.as_str())
                .is_some_and(|t| t.starts_with("-20"))
        }) else {
            continue;
        };
        let checks: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(dir.join("checks.json")).unwrap())
                .unwrap();
        let s: &mut Scenario = scenarios.entry(scenario.clone()).or_default();
        for c in checks {
            match c["status"].as_str() {
                Some("SUCCESS") => s.passed += 1,
                Some("FAILURE") => s.failed.push(c.to_string()),
                _ => {}
            }
            s.checks.push(c);
        }
    }
    assert_eq!(
        scenarios.keys().cloned().collect::<BTreeSet<_>>(),
        ran,
        "a scenario of the {suite} suite left no checks.json"
    );
    scenarios
}

/// The pending scenarios docs/mcp-gateway.md lists, each with its status text.
fn documented_pending() -> BTreeMap<String, String> {
    let doc = std::fs::read_to_string(root().join("docs/mcp-gateway.md")).unwrap();
    let section = doc
        .split("### Pending scenarios")
        .nth(1)
        .expect("docs/mcp-gateway.md has no 'Pending scenarios' section");
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells.get(1)?.trim_matches('`').to_owned();
            Some((name, cells.get(2)?.to_string()))
        })
        .collect()
}

fn total(s: &BTreeMap<String, Scenario>) -> (usize, usize) {
    s.values()
        .fold((0, 0), |(p, f), x| (p + x.passed, f + x.failed.len()))
}

/// Whether a failed check (its JSON text) is the seed's refusal of an integer id or of a
/// request without params: the gateway's INVALID_ENVELOPE answer, however deeply the SDK's
/// error message and the check's details quote it.
fn seed_refusal(check: &str) -> bool {
    let t = check.replace('\\', "");
    t.contains("INVALID_ENVELOPE")
        && (t.contains(r#"is not of type "string" (at /id)"#)
            || t.contains(r#""params" is a required property"#))
}

#[test]
fn the_official_suite_passes_against_the_gateway_over_swp() {
    let (node, cli) = install();
    let dir = work("official-suite");
    let serve_port = dir.join("serve.port");
    let (_serve, up) = start(
        &[
            "serve",
            "--listen",
            "tcp://127.0.0.1:0",
            "--fixtures",
            "conformance",
            "--port-file",
            serve_port.to_str().unwrap(),
        ],
        &serve_port,
    );
    let upstream = format!("tcp://127.0.0.1:{up}");
    let gateway = |policy: &str| {
        let pf = dir.join(format!("gateway-{policy}.port"));
        start(
            &[
                "mcp-gateway",
                "--listen",
                "http://127.0.0.1:0",
                "--envelope",
                policy,
                "--port-file",
                pf.to_str().unwrap(),
                "--upstream",
                &upstream,
            ],
            &pf,
        )
    };

    // The default policy: every active scenario passes.
    let (_g, port) = gateway("mcp");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let active = run_suite(&node, &cli, &url, "active", &dir.join("mcp-active"));
    let failing: Vec<_> = active
        .iter()
        .filter(|(_, s)| !s.failed.is_empty())
        .collect();
    assert!(failing.is_empty(), "active scenarios failed: {failing:#?}");
    assert!(
        active.len() >= 30,
        "only {} active scenarios ran",
        active.len()
    );
    // The suite only checks that the server asked and that the tool returned content; the
    // content must also carry what the SDK answered, which reached the endpoint only if the
    // gateway sent the answer upstream on the request's msg_id (mapping §5, both ways).
    for (scenario, said) in [
        (
            "tools-call-sampling",
            "LLM response: This is a test response from the client",
        ),
        ("tools-call-elicitation", "User response: action=accept"),
        ("tools-call-elicitation", "testuser"),
    ] {
        let text = active[scenario]
            .checks
            .iter()
            .find_map(|c| c.pointer("/details/result/content/0/text")?.as_str())
            .unwrap_or_default();
        assert!(text.contains(said), "{scenario}: the tool said {text:?}");
    }
    let (passed, _) = total(&active);
    eprintln!(
        "official suite, active: {} scenarios, {passed} checks passed",
        active.len()
    );

    // Pending: each passes, or docs/mcp-gateway.md says why not; the list is the suite's.
    let pending = run_suite(&node, &cli, &url, "pending", &dir.join("mcp-pending"));
    let documented = documented_pending();
    assert_eq!(
        documented.keys().collect::<Vec<_>>(),
        pending.keys().collect::<Vec<_>>(),
        "docs/mcp-gateway.md's pending list is not the suite's"
    );
    for (name, s) in &pending {
        let status = &documented[name];
        if status.starts_with("passes") {
            assert!(
                s.failed.is_empty(),
                "{name} is documented as passing: {:?}",
                s.failed
            );
        } else {
            assert!(
                status.len() > "fails: ".len() + 10,
                "{name} fails without a reason in docs/mcp-gateway.md: {status:?}"
            );
        }
    }
    let (pending_passed, _) = total(&pending);
    eprintln!(
        "official suite, pending: {} scenarios, {pending_passed} checks passed",
        pending.len()
    );

    // seed-003: the same suite fails only where the seed refuses what MCP allows.
    let (_s, port) = gateway("seed-003");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let seed = run_suite(&node, &cli, &url, "active", &dir.join("seed-active"));
    let refusals: Vec<&String> = seed.values().flat_map(|s| &s.failed).collect();
    assert!(
        !refusals.is_empty(),
        "the seed-003 gateway accepted the SDK's integer ids"
    );
    let other: Vec<_> = refusals.iter().filter(|c| !seed_refusal(c)).collect();
    assert!(
        other.is_empty(),
        "seed-003 failures that are not id or params refusals: {other:#?}"
    );
    eprintln!(
        "official suite under seed-003: {} checks failed, all id or params refusals",
        refusals.len()
    );
}

#[test]
fn seed_refusals_are_told_from_other_failures() {
    let id = r#"{"errorMessage":"{\"error\":{\"data\":{\"canonical\":\"INVALID_ENVELOPE\",\"detail\":\"envelope schema: 0 is not of type \\\"string\\\" (at /id)\"}}}"}"#;
    assert!(seed_refusal(id), "{id}");
    for other in [
        r#"{"errorMessage":"Tool did not return content"}"#,
        r#"{"errorMessage":"{\"canonical\":\"INVALID_ENVELOPE\",\"detail\":\"not JSON\"}"}"#,
        r#"{"errorMessage":"{\"canonical\":\"TOOL_NOT_FOUND\"}"}"#,
    ] {
        assert!(!seed_refusal(other), "{other}");
    }
}
