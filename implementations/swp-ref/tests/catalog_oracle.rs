//! The mutation-testing oracle: the catalog, run by a prebuilt `swp-conform` against the
//! `swp-ref` binary this very build produced. cargo-mutants mutates swp-core, swp-profiles or
//! mcp-translate, rebuilds swp-ref and runs this test; the mutant is caught when some vector
//! stops passing. The harness is built once, outside the mutated tree (it has its own codec and,
//! without `builtin-sut`, no swp-ref in its tree), so it judges the mutant without sharing its
//! bug, and a mutant costs a rebuild of the reference only.
//!
//! Built only with the `catalog-oracle` feature (`cargo test --workspace` does not run it):
//! it needs `SWP_CONFORM`, the path of that prebuilt harness, and fails, saying so, without it.
//! `scripts/mutants.sh` sets both. `SWP_ORACLE_MANIFESTS` (space-separated file names under
//! `implementations/manifests/`) overrides the manifests run; the default is what
//! docs/mutation.md measured with.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

/// The codec and translate methods through the testee (every SWP, profile and MCP
/// translation vector the reference runs in process); the session method over mTLS (the
/// endpoint's framing, error frames, S1 and the profile receivers on the wire); the lenient
/// endpoint (the P1 wrapper form and the other policies); the MCP version-translating proxy
/// (mcp-translate's request correlation); the MCP gateway over HTTP and the relay, which use
/// swp-core and the MCP mapping on their own paths (the gateway reads its upstream's replies
/// with `e1::decode`, which nothing else in the reference calls). Cheapest first where it
/// does not matter (3 s, 7 s, 7 s, 3 s, 2 s, 1 s with 8 connections, debug, each alone); each
/// after the first caught mutants the ones before it missed.
const DEFAULT_MANIFESTS: &str = "reference-testee.yaml reference-tls.yaml reference-lenient.yaml \
     mcp-proxy-reference.yaml gateway-http.yaml reference-relay.yaml";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn catalog_passes_against_this_build() {
    let Some(conform) = std::env::var_os("SWP_CONFORM") else {
        panic!(
            "SWP_CONFORM is not set: it must name a prebuilt `swp-conform` \
             (cargo build -p swp-conform --no-default-features); scripts/mutants.sh sets it"
        );
    };
    let conform = PathBuf::from(conform);
    assert!(
        conform.is_file(),
        "SWP_CONFORM={} is not a file",
        conform.display()
    );
    let swp_ref = env!("CARGO_BIN_EXE_swp-ref");
    let manifests =
        std::env::var("SWP_ORACLE_MANIFESTS").unwrap_or_else(|_| DEFAULT_MANIFESTS.to_owned());
    let out_root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("catalog-oracle");
    // Vectors run on `SWP_ORACLE_JOBS` connections at once (default 16): the TLS and lenient
    // catalogs spend most of their time in the windows they declare (relay retries, an
    // expiry, a max-age), so 8 connections took a missed mutant from about 95 s to 20 s, and
    // 16, with the manifests at once, to 7 s.
    let jobs = std::env::var("SWP_ORACLE_JOBS").unwrap_or_else(|_| "16".to_owned());
    // The manifests run at once: each spends most of its time waiting on its own windows, so
    // together they take about as long as the slowest alone (a missed mutant's oracle went
    // from 20 s one manifest after another to about 9 s with 8 connections each).
    let mut runs: Vec<(&str, PathBuf, Child)> = manifests
        .split_whitespace()
        .map(|m| {
            let out = out_root.join(m.trim_end_matches(".yaml"));
            let child = start(&conform, swp_ref, m, &jobs, None, &out);
            (m, out, child)
        })
        .collect();
    let mut failed = Vec::new();
    // The first manifest to finish is looked at first: one confirmed failure decides the
    // mutant, and the runs still going are stopped (a broken codec makes every manifest
    // wait out its timeouts, which took a caught mutant's oracle to a minute).
    while failed.is_empty() && !runs.is_empty() {
        let Some(i) = runs.iter_mut().position(|(_, _, c)| {
            c.try_wait()
                .unwrap_or_else(|e| panic!("cannot wait for {}: {e}", conform.display()))
                .is_some()
        }) else {
            std::thread::sleep(std::time::Duration::from_millis(50));
            continue;
        };
        let (m, out, mut child) = runs.swap_remove(i);
        if child
            .wait()
            .unwrap_or_else(|e| panic!("cannot wait for {}: {e}", conform.display()))
            .success()
        {
            continue;
        }
        // A catch must not be a parallel run's timing: the vectors that failed run again one
        // at a time, and the mutant counts as caught only if they fail again. Many failures
        // are not timing (a broken codec fails most of the catalog), and rerunning them one
        // at a time would cost minutes of 3 s timeouts, so past CONFIRM_AT_MOST they stand.
        let ids = failing_ids(&out);
        if !ids.is_empty() && ids.len() <= CONFIRM_AT_MOST {
            let again = out_root.join(format!("{}-confirm", m.trim_end_matches(".yaml")));
            let status = start(&conform, swp_ref, m, "1", Some(&ids.join(",")), &again)
                .wait()
                .unwrap_or_else(|e| panic!("cannot wait for {}: {e}", conform.display()));
            if status.success() {
                eprintln!(
                    "catalog_oracle: {m}: {} failed with --jobs {jobs} but passed one at a time; \
                     not counted as a catch",
                    ids.join(", ")
                );
                continue;
            }
        }
        failed.push(format!(
            "{m}: the catalog does not pass ({}); see {}",
            if ids.is_empty() {
                "no report".to_owned()
            } else {
                ids.join(", ")
            },
            out.join("report.md").display()
        ));
    }
    for (_, _, mut child) in runs {
        // SIGTERM, not SIGKILL: the harness then stops the SUTs it started (a killed
        // harness would leave them running).
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status();
        let _ = child.wait();
    }
    assert!(
        failed.is_empty(),
        "the catalog does not pass:\n{}",
        failed.join("\n")
    );
}

/// Failures confirmed one at a time when there are at most this many.
const CONFIRM_AT_MOST: usize = 12;

/// Starts the prebuilt harness over one manifest.
fn start(
    conform: &Path,
    swp_ref: &str,
    m: &str,
    jobs: &str,
    filter: Option<&str>,
    out: &Path,
) -> Child {
    let manifest = workspace().join("implementations/manifests").join(m);
    // --strict: a SHOULD-level failure or an unobservable reject code also fails the run, so
    // a mutant that only changes a recommended code counts as caught, as it does in the
    // catalog test, where every trial must pass. Except for the lenient manifest, whose
    // unknown-profile close makes core_0009's code unobservable by design (the catalog
    // test's CODE_NOT_OBSERVABLE): there only MUST failures count.
    let mut cmd = Command::new(conform);
    cmd.current_dir(workspace())
        .env("SWP_REF", swp_ref)
        .arg("run")
        .arg("--quiet")
        .arg("--sut")
        .arg(&manifest)
        .arg("--jobs")
        .arg(jobs);
    if m != "reference-lenient.yaml" {
        cmd.arg("--strict");
    }
    if let Some(f) = filter {
        cmd.arg("--filter").arg(f);
    }
    cmd.arg("--out")
        .arg(out)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", conform.display()))
}

/// The ids of the vectors that did not pass, from the run's report.json (empty when there is
/// none: the run stopped before writing it).
fn failing_ids(out: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(out.join("report.json")) else {
        return Vec::new();
    };
    let Ok(report) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = report["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["pass"] == serde_json::Value::Bool(false))
        .filter_map(|r| r["vector_id"].as_str().map(str::to_owned))
        .collect();
    ids.sort();
    ids
}
