//! The messages a vendor reads (issue 31): a SUT whose program cannot be started is a
//! harness error whose class verdicts say so, with the command and the OS error, not a
//! protocol failure of its first vector.

mod common;
use common::root;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use swp_conform::report::model::Report;

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("messages-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The committed manifest `name` with each `(from, to)` replaced, asserting `from` is there
/// so the test fails loudly when the manifest changes under it.
fn edited(name: &str, edits: &[(&str, &str)]) -> String {
    let mut text =
        std::fs::read_to_string(root().join("implementations/manifests").join(name)).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{name} no longer has {from:?}");
        text = text.replace(from, to);
    }
    text
}

/// `swp-conform run -q --sut MANIFEST --filter FILTER --out DIR` and more `args`.
fn run(manifest: &Path, filter: &str, out: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swp-conform"))
        .current_dir(root())
        .args(["run", "-q", "--sut"])
        .arg(manifest)
        .args(["--filter", filter, "--out"])
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

/// A manifest whose program does not exist: every vector is a harness error that names the
/// command and the OS error, and each class's reason says the SUT could not be started,
/// over TCP (started once per run) and over stdio (once per vector) alike.
#[test]
fn a_sut_that_cannot_start_is_a_harness_error_at_the_class_level() {
    let dir = scratch("not-started");
    for name in ["reference-tcp.yaml", "reference-stdio.yaml"] {
        let manifest = dir.join(name);
        std::fs::write(
            &manifest,
            edited(
                name,
                &[("command: ${SWP_REF}", "command: ./no-such-swp-endpoint")],
            ),
        )
        .unwrap();
        let out = dir.join(format!("out-{name}"));
        let o = run(&manifest, "core_0001*,core_0002*", &out, &[]);
        let said = String::from_utf8_lossy(&o.stdout).into_owned();
        let rep =
            Report::from_json(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
        for r in &rep.results {
            assert_eq!(r.verdict.as_str(), "harness-error", "{name}: {r:?}");
            let why = r.sut_not_started.as_deref().unwrap_or_default();
            assert!(
                why.starts_with("cannot start `./no-such-swp-endpoint serve --listen ")
                    && why.ends_with("No such file or directory (os error 2)"),
                "{name}: {why}"
            );
        }
        let c0 = &rep.classes[0];
        assert_eq!(c0.status.as_str(), "incomplete", "{name}: {c0:?}");
        assert!(
            c0.reason
                .starts_with("the SUT could not be started: cannot start `./no-such-swp-endpoint ")
                && c0
                    .reason
                    .contains("No such file or directory (os error 2); "),
            "{name}: {}",
            c0.reason
        );
        assert!(
            said.contains("class C0 incomplete: the SUT could not be started: cannot start `"),
            "{name}: {said}"
        );
        assert!(!said.contains("failed at MUST level"), "{name}: {said}");
    }
}
