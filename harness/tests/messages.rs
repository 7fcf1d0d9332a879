//! The messages a vendor reads (issue 31): the rendered reports of a run with failures hold no
//! Rust `Debug` form (`Some(String("…"))`), and a SUT whose program cannot be started is a
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

/// Where `text` shows Rust's `Debug` form of an `Option`, a JSON value or an enum: each hit
/// with a little context.
fn debug_forms(text: &str) -> Vec<String> {
    const FORMS: [&str; 8] = [
        "Some(", "String(", "Number(", "Bool(", "Array(", "Object {", "U64(", "I64(",
    ];
    let context = |at: usize| {
        let from = text[..at]
            .char_indices()
            .rev()
            .nth(60)
            .map_or(0, |(i, _)| i);
        let to = text[at..]
            .char_indices()
            .nth(60)
            .map_or(text.len(), |(i, _)| at + i);
        text[from..to].to_owned()
    };
    let mut hits: Vec<String> = FORMS
        .iter()
        .flat_map(|f| text.match_indices(f).map(|(i, _)| context(i)))
        .collect();
    // `None` alone, as a word: not inside `NoneOf` or a longer name.
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    for (i, _) in text.match_indices("None") {
        if !word(text[..i].chars().next_back()) && !word(text[i + 4..].chars().next()) {
            hits.push(context(i));
        }
    }
    hits
}

/// `text` without its `<script>` elements: the page's own JavaScript calls `String(…)`.
fn without_scripts(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("<script") {
        out.push_str(&rest[..i]);
        rest = rest[i..]
            .find("</script>")
            .map_or("", |j| &rest[i + j + "</script>".len()..]);
    }
    out.push_str(rest);
    out
}

/// A run with failures of several kinds (an identity in the wrong form, rejects whose code
/// the manifest's pointer cannot find, a vector its baseline expected to fail passing), in
/// every format: nothing in them reads as Rust.
#[test]
fn the_reports_of_a_failing_run_hold_no_rust_debug_output() {
    let dir = scratch("debug");
    let manifest = dir.join("vendor.yaml");
    std::fs::write(
        &manifest,
        edited(
            "reference-tls.yaml",
            &[
                (
                    "    tls13_only: true\n",
                    "    tls13_only: true\n    identity_form: {field: cn}\n",
                ),
                (
                    "code_pointer: /error/data/swp_error",
                    "code_pointer: /error/data/code",
                ),
            ],
        ),
    )
    .unwrap();
    let baseline = dir.join("baseline.yaml");
    std::fs::write(
        &baseline,
        "expected_failures:\n  - vector: \"core_0001_valid_min_frame\"\n    verdict: fail\nflaky: []\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = run(
        &manifest,
        "core_0001*,core_0007*,s1_0103*",
        &out,
        &["--baseline", baseline.to_str().unwrap()],
    );
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(1), "{said}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    // The failures this test is about are there, in words.
    for what in [
        "the endpoint reports identity \"spiffe://swp-conform.test/harness-client\" at /result/identity",
        "a frame arrived, profile_id=1 msg_type=2",
        "unexpected-pass",
    ] {
        assert!(md.contains(what), "{what:?} not in report.md:\n{md}");
    }
    let mut found = Vec::new();
    for f in ["report.json", "junit.xml", "report.md", "report.html"] {
        let text = without_scripts(&std::fs::read_to_string(out.join(f)).unwrap());
        found.extend(
            debug_forms(&text)
                .into_iter()
                .map(|h| format!("{f}: …{h}…")),
        );
    }
    found.extend(
        debug_forms(&said)
            .into_iter()
            .map(|h| format!("console: …{h}…")),
    );
    assert!(
        found.is_empty(),
        "Rust Debug output in the reports:\n{}",
        found.join("\n")
    );
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
