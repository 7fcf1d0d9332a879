//! The CI recipe of docs/certify.md runs as written (issue 31): `docs/ci/nightly.sh` writes
//! the baseline on the first night, passes a night like it, and fails a night that
//! regressed, keeping each night's reports and what changed since the night before; the
//! GitHub Actions workflow beside it runs that script and keeps the reports.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch() -> PathBuf {
    let d = common::root()
        .join("target/certify-recipe-test")
        .join(std::process::id().to_string());
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One night of the recipe in `dir`, against `sut` (the built-in reference when `None`).
fn night(dir: &Path, name: &str, sut: Option<&Path>) -> Output {
    let mut c = Command::new(common::root().join("docs/ci/nightly.sh"));
    c.current_dir(dir)
        .env("SWP_CONFORM", env!("CARGO_BIN_EXE_swp-conform"))
        .env("SWP_CONFORM_CACHE", dir.join("cache"))
        .env("SWP_NIGHT", name)
        .env("SWP_ARGS", "--namespace core");
    match sut {
        Some(s) => c.env("SWP_SUT", s),
        None => c.env_remove("SWP_SUT"),
    };
    c.output().unwrap()
}

use common::output_text as text;

#[test]
fn the_nightly_script_writes_a_baseline_passes_a_steady_night_and_fails_a_regression() {
    let dir = scratch();
    // Night 1: no baseline yet; the reference's failures (none) become it.
    let o = night(&dir, "night-1", None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("wrote the baseline"), "{}", text(&o));
    assert!(dir.join("swp-baseline.yaml").is_file());
    let version = std::fs::read_to_string(dir.join("reports/night-1/harness-version.txt")).unwrap();
    assert!(version.contains("catalog: built in"), "{version}");

    // Night 2: the same SUT, no regression; what changed since night 1 is kept.
    let o = night(&dir, "night-2", None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("no regression"), "{}", text(&o));
    assert!(dir.join("reports/night-2/report.json").is_file());
    assert!(dir.join("reports/night-2/since-last-night.txt").is_file());
    // And `history` across both nights, as the recipe keeps them.
    let h: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("reports/night-2/history/history.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        h["suts"][0]["runs"].as_array().map(Vec::len),
        Some(2),
        "{h}"
    );
    assert!(dir.join("reports/night-2/history/history.html").is_file());

    // Night 3: a stack that refuses everything; its failures are not in the baseline.
    let sut = dir.join("reject-all.yaml");
    std::fs::write(
        &sut,
        format!(
            "name: reject-all\nversion: \"0\"\nkind: endpoint\nstart: {{command: {:?}, args: [reject-all]}}\nmethods: [session]\nlimits: {{MAX_FRAME_BYTES: 8388608, MIN_MSG_ID_BYTES: 8, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 4096, MAX_PAYLOAD_BYTES: 8387584}}\npolicy: {{timestamp_freshness: false}}\nsession:\n  transport: stdio\n  reject_signal: {{mode: error-frame, error_frame: {{profile_id: 1, msg_type: 2, code_pointer: /error/data/swp_error}}}}\n  timing: {{step_ms: 1500, silence_ms: 50, vector_ms: 20000}}\n",
            common::example("trivialsut").display().to_string()
        ),
    )
    .unwrap();
    let o = night(&dir, "night-3", Some(&sut));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("REGRESSION against swp-baseline.yaml"),
        "{}",
        text(&o)
    );
    let md = std::fs::read_to_string(dir.join("reports/night-3/report.md")).unwrap();
    assert!(md.contains("core_0001"), "{md}");
}

#[test]
fn the_workflow_runs_the_script_and_keeps_the_reports() {
    let yml = std::fs::read_to_string(common::root().join("docs/ci/nightly.yml")).unwrap();
    for want in [
        "schedule:",
        "cargo install --locked --path swp-conform/harness",
        "run: swp-conform/docs/ci/nightly.sh",
        "actions/upload-artifact",
        "path: conformance-reports/",
        "if: always()",
    ] {
        assert!(yml.contains(want), "docs/ci/nightly.yml lacks {want:?}");
    }
    let guide = std::fs::read_to_string(common::root().join("docs/certify.md")).unwrap();
    assert!(guide.contains("docs/ci/nightly.sh") && guide.contains("docs/ci/nightly.yml"));
}
