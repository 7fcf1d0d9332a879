//! The `mcp_proxy` method: the `mcpxproxy` vectors against the reference proxy
//! (`swp-ref mcp-proxy`, manifests/mcp-proxy-reference.yaml), with the harness as the
//! proxy's client and as its upstream server at the version each vector chooses; and
//! against the same proxy misconfigured to present the wrong version, which the vectors
//! must catch.

mod common;

use std::path::{Path, PathBuf};
use swp_conform::catalog::{self, vector::Body, Catalog};
use swp_conform::method::{self, Setup};
use swp_conform::plan::select::{select, Selection};
use swp_conform::report::result::{VectorResult, Verdict};
use swp_conform::sut::Sut;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(sut: &Sut, name: &str) -> Vec<VectorResult> {
    let cat: Catalog =
        catalog::load::load(&root().join("vectors")).unwrap_or_else(|e| panic!("{e}"));
    let plan = select(
        &cat,
        &Selection {
            namespaces: vec!["mcpxproxy".into()],
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        plan.len() >= 8,
        "the mcpxproxy namespace has {} vectors",
        plan.len()
    );
    let work = root().join(format!("target/mcp-proxy-test/{name}"));
    std::fs::create_dir_all(&work).unwrap();
    method::run(&cat, sut, &Setup::new(&work), &plan).unwrap()
}

fn explain(rs: &[VectorResult]) -> String {
    rs.iter()
        .filter(|r| r.verdict != Verdict::Pass)
        .map(|r| {
            format!(
                "{} [{}] {}",
                r.vector_id,
                r.verdict.as_str(),
                r.detail.as_deref().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_reference_proxy_passes_every_vector() {
    let sut =
        Sut::load(&root().join("implementations/manifests/mcp-proxy-reference.yaml")).unwrap();
    let rs = run(&sut, "reference");
    assert!(
        rs.iter().all(|r| r.verdict == Verdict::Pass),
        "{}",
        explain(&rs)
    );
}

#[test]
fn a_proxy_presenting_the_wrong_version_is_caught() {
    // The same proxy, always presenting 2025-11-25: it no longer translates for the older
    // clients the vectors play.
    let text =
        std::fs::read_to_string(root().join("implementations/manifests/mcp-proxy-reference.yaml"))
            .unwrap()
            .replace("\"${CLIENT_VERSION}\"", "\"2025-11-25\"");
    let dir = root().join("target/mcp-proxy-test");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("wrong-version.yaml");
    std::fs::write(&path, text).unwrap();
    let sut = Sut::load(&path).unwrap();
    let rs = run(&sut, "wrong-version");
    // Every vector whose client is not at 2025-11-25 fails; those whose client is still
    // pass: the failures are translation's.
    let cat = common::catalog();
    let failing: Vec<&str> = cat
        .vectors
        .iter()
        .filter(|lv| {
            matches!(&lv.vector.body, Body::McpProxy(b) if b
                .proxy
                .as_ref()
                .is_some_and(|p| p.client_version.as_str() != "2025-11-25"))
        })
        .map(|lv| lv.vector.header.id.as_str())
        .collect();
    common::assert_fails_exactly(&rs, &failing);
}
