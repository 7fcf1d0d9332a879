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
use std::process::Command;

/// The codec and translate methods through the testee (every SWP, profile and MCP
/// translation vector the reference runs in process); the session method over mTLS (the
/// endpoint's framing, error frames, S1 and the profile receivers on the wire); the lenient
/// endpoint (the P1 wrapper form and the other policies); the MCP version-translating proxy
/// (mcp-translate's request correlation). Cheapest first (14 s, 24 s, 15 s, 10 s, debug,
/// loaded machine); each of the last three caught mutants the ones before it missed.
const DEFAULT_MANIFESTS: &str =
    "reference-testee.yaml reference-tls.yaml reference-lenient.yaml mcp-proxy-reference.yaml";

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
    let mut failed = Vec::new();
    for m in manifests.split_whitespace() {
        let manifest = workspace().join("implementations/manifests").join(m);
        let out = out_root.join(m.trim_end_matches(".yaml"));
        // --strict: a SHOULD-level failure or an unobservable reject code also fails the
        // run, so a mutant that only changes a recommended code counts as caught, as it
        // does in the catalog test, where every trial must pass. Except for the lenient
        // manifest, whose unknown-profile close makes core_0009's code unobservable by
        // design (the catalog test's CODE_NOT_OBSERVABLE): there only MUST failures count.
        let mut cmd = Command::new(&conform);
        cmd.current_dir(workspace())
            .env("SWP_REF", swp_ref)
            .arg("run")
            .arg("--sut")
            .arg(&manifest);
        if m != "reference-lenient.yaml" {
            cmd.arg("--strict");
        }
        let status = cmd
            .arg("--out")
            .arg(&out)
            .status()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", conform.display()));
        if !status.success() {
            failed.push(format!(
                "{m}: swp-conform exited with {status}; see {}",
                out.join("report.md").display()
            ));
            // One failing manifest decides the mutant; the next would only cost time (a
            // broken codec on the wire turns most vectors into 3 s timeouts).
            break;
        }
    }
    assert!(
        failed.is_empty(),
        "the catalog does not pass:\n{}",
        failed.join("\n")
    );
}
