//! Helpers shared by the harness's integration tests: the workspace root, the catalog, a
//! listing of what did not pass, the example programs (broken SUTs, mock servers) built on
//! demand, and the peak memory of a command they run.

// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

pub mod badswp;
pub mod expected;
pub mod shared;
pub mod trivial;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use swp_conform::catalog::{self, Catalog};
use swp_conform::report::result::{VectorResult, Verdict};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The catalog under `vectors/`, or a panic naming every load problem.
pub fn catalog() -> Catalog {
    catalog::load::load(&root().join("vectors")).unwrap_or_else(|e| panic!("{e}"))
}

/// One paragraph per result that did not pass: id, verdict, why, expected, observed.
pub fn explain(rs: &[VectorResult]) -> String {
    rs.iter()
        .filter(|r| r.verdict != Verdict::Pass)
        .map(|r| {
            format!(
                "{} [{}] {}\n  expected: {}\n  observed: {}",
                r.vector_id,
                r.verdict.as_str(),
                r.detail.as_deref().unwrap_or(""),
                r.expected,
                r.observed
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The path of example `name`, built (once per test process) so it is never stale: a test
/// target run alone does not build the examples.
pub fn example(name: &str) -> PathBuf {
    static BUILT: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|p| p.parent()).unwrap();
    let p = dir.join("examples").join(name);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if built
        .get_or_insert_with(HashSet::new)
        .insert(name.to_owned())
    {
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or("cargo".into()));
        // Cargo gives a test process the variables of the crate under test (CARGO_PKG_*,
        // CARGO_MANIFEST_DIR, OUT_DIR, ...). Passed on to a nested build they differ from
        // an outer build's, and build scripts that watch them (ring's) run again each time.
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy();
            if k.starts_with("CARGO_PKG_")
                || k.starts_with("CARGO_CRATE_")
                || k.starts_with("CARGO_BIN_")
                || k == "CARGO_MANIFEST_DIR"
                || k == "CARGO_MANIFEST_PATH"
                || k == "CARGO_PRIMARY_PACKAGE"
                || k == "CARGO_TARGET_TMPDIR"
                || k == "OUT_DIR"
            {
                cmd.env_remove(k.as_ref());
            }
        }
        let st = cmd
            .current_dir(root())
            .args(["build", "-q", "-p", "swp-conform", "--example", name])
            .status()
            .unwrap();
        assert!(st.success(), "cargo build --example {name}");
    }
    p
}

/// Whether the update switch `name` is on: only the value `1` turns it on, so `NAME=0` or a
/// stray empty variable never turns a check into a write.
pub fn update_switch(name: &str) -> bool {
    std::env::var(name).as_deref() == Ok("1")
}

/// After an update switch rewrote `n` files: the test fails anyway, so a run with the switch
/// on can never pass by comparing a file with itself.
pub fn rewrote(n: usize, switch: &str) -> ! {
    panic!("{switch}=1 rewrote {n} file(s); review the diff and commit, then run without {switch}")
}

/// Asserts that the vectors failing in `rs` are exactly `failing` (by id prefix, such as
/// `mcp_0015`) and that every other vector ran and passed: a broken implementation is
/// caught by the vectors of the rule it breaks and by no other, and nothing was skipped.
pub fn assert_fails_exactly(rs: &[VectorResult], failing: &[&str]) {
    let listed = |id: &str| failing.iter().any(|p| id.starts_with(p));
    let mut wrong = Vec::new();
    for r in rs {
        let want = if listed(&r.vector_id) {
            Verdict::Fail
        } else {
            Verdict::Pass
        };
        if r.verdict != want {
            wrong.push(format!(
                "{} [{}], expected {}: {}",
                r.vector_id,
                r.verdict.as_str(),
                want.as_str(),
                r.detail.as_deref().unwrap_or("")
            ));
        }
    }
    for p in failing {
        if !rs.iter().any(|r| r.vector_id.starts_with(p)) {
            wrong.push(format!("{p}: expected to fail, but it did not run"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Runs the vectors whose ids start with one of `ids` against the SUT that `manifest` (YAML
/// text, written to a work directory named `name`) describes, in catalog order.
pub fn run_with_manifest(name: &str, manifest: &str, ids: &[&str]) -> Vec<VectorResult> {
    use swp_conform::method::{self, Setup};
    use swp_conform::sut::Sut;
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&work).unwrap();
    let path = work.join("manifest.yaml");
    std::fs::write(&path, manifest).unwrap();
    let sut = Sut::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let cat = catalog();
    let plan: Vec<_> = cat
        .vectors
        .iter()
        .filter(|v| ids.iter().any(|a| v.vector.header.id.starts_with(a)))
        .collect();
    assert_eq!(plan.len(), ids.len(), "{ids:?}");
    method::run(&cat, &sut, &Setup::new(&work), &plan).unwrap()
}

/// What [`run_measured`] prints last on stderr, before the peak.
const PEAK_MARK: &str = "swp-test-peak-rss-kib=";

/// Runs `program` with `args` in `cwd`, and the peak resident set, in KiB, of it and of
/// every process it waited for (its SUTs): python3's `getrusage(RUSAGE_CHILDREN)` once it
/// exited, so nothing it allocated between two samples and its exit is missed, and the
/// cargo builds of this test process are not counted.
pub fn run_measured<S: AsRef<std::ffi::OsStr>>(
    program: &Path,
    args: &[S],
    cwd: &Path,
) -> (std::process::Output, u64) {
    let script = format!(
        "import resource, subprocess, sys\n\
         rc = subprocess.call(sys.argv[1:])\n\
         sys.stderr.write('\\n{PEAK_MARK}%d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n\
         sys.exit(rc if rc >= 0 else 128 - rc)\n"
    );
    let o = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(program)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("python3 runs the measured command");
    let err = String::from_utf8_lossy(&o.stderr);
    let kib = err
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(PEAK_MARK))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak reported; stderr:\n{err}"));
    (o, kib)
}

/// A finished command's stdout then stderr, as text, for assertion messages.
pub fn output_text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
