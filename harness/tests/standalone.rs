//! The binary stands alone (issue 31): copied out of the checkout and run from an empty
//! directory, it finds its catalog inside itself, says which catalog and spec versions it
//! carries, and writes the same report on the built-in reference as the in-tree one
//! (`reports/reference/inproc/`).

use std::path::{Path, PathBuf};
use std::process::Command;
use swp_conform::report::model::Report;
use swp_conform::report::render_all;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A scratch directory of this test's own, emptied first.
fn scratch(tag: &str) -> PathBuf {
    let d = root()
        .join("target/standalone-test")
        .join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The binary, copied once out of cargo's target directory. Once: a copy still open for
/// writing while another test thread forks would make its exec fail (`ETXTBSY`).
fn exe() -> &'static Path {
    static EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        let bin = scratch("bin");
        let exe = bin.join("swp-conform");
        std::fs::copy(env!("CARGO_BIN_EXE_swp-conform"), &exe).unwrap();
        exe
    })
}

/// The copied binary, run from `dir/work` with its cache in `dir/cache` and nothing of
/// cargo's environment.
fn copied(dir: &Path) -> impl Fn(&[&str]) -> std::process::Output + '_ {
    let exe = exe();
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    move |args: &[&str]| {
        let mut c = Command::new(exe);
        c.args(args).current_dir(&work).env_clear();
        c.env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("SWP_CONFORM_CACHE", dir.join("cache"));
        c.output().unwrap()
    }
}

/// The body of an insta snapshot (after its `---` header).
fn snapshot_body(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut parts = text.splitn(3, "---\n");
    parts.next();
    parts.next();
    parts.next().unwrap_or_default().to_owned()
}

#[test]
fn version_names_the_builtin_catalog_and_the_spec_versions() {
    let dir = scratch("version");
    let run = copied(&dir);
    let o = run(&["--version"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let digest = swp_conform::cli::catalog_digest(&root().join("vectors")).unwrap();
    assert!(
        out.contains(&format!("sha256 {digest}")),
        "the in-tree catalog's digest {digest} in:\n{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.contains("core-spec") && l.contains("Draft v0.1")),
        "{out}"
    );
    assert!(out.starts_with(&format!(
        "swp-conform {} (commit ",
        env!("CARGO_PKG_VERSION")
    )));
    // The catalog was written into the cache given, nowhere else.
    assert!(dir.join("cache/catalog").is_dir());
    assert_eq!(std::fs::read_dir(dir.join("work")).unwrap().count(), 0);
}

#[test]
fn a_copied_binary_reproduces_the_in_tree_report_from_an_empty_directory() {
    let dir = scratch("run");
    let run = copied(&dir);
    let o = run(&["run", "--out", "out", "-q"]);
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(dir.join("work/out/report.json")).unwrap();
    let rep = Report::from_json(&text).unwrap_or_else(|e| panic!("{e}"));
    let pinned = root().join("reports/reference/inproc");
    for (name, text) in render_all(&rep.redacted()).unwrap() {
        if name == "report.html" {
            continue; // pinned too, but its diff is unreadable; the JSON and Markdown say it
        }
        let want = snapshot_body(&pinned.join(format!("{name}.snap")));
        if text.trim_end() != want.trim_end() {
            let diff = similar::TextDiff::from_lines(want.trim_end(), text.trim_end())
                .unified_diff()
                .context_radius(2)
                .to_string();
            panic!("{name} of the copied binary differs from the in-tree one:\n{diff}");
        }
    }
}
