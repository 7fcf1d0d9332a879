//! Compiles the project's P1 `.proto` files (the workspace's `proto/`) with protox, no
//! system `protoc`: the harness's own Rust types for every profile package and the file
//! descriptor set it encodes, decodes and compares payloads with. The harness judges with
//! these, never with the reference's profile library, so a misreading built into the
//! reference cannot also pass its own judge.
//!
//! It also makes the binary stand alone (issue 31): the catalog under `../vectors` is
//! embedded file by file (`catalog_files.rs`, materialised at run time by
//! `catalog::embedded`), and the commit it was built from is fixed at build time
//! (`SWP_CONFORM_GIT_SHA`), so a binary copied elsewhere needs neither the checkout nor git.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from("../proto");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "proto"))
        .collect();
    files.sort();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    println!("cargo:rerun-if-changed=../proto");
    let fds = protox::compile(&files, [&dir])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("p1_descriptors.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    prost_build::Config::new().bytes(["."]).compile_fds(fds)?;
    embed_catalog(&out)?;
    git_sha();
    Ok(())
}

/// Writes `catalog_files.rs`: every file under `../vectors` as `(relative path, octets)`,
/// sorted by path, and a SHA-256 over both that names this catalog in the cache.
fn embed_catalog(out: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    use sha2::{Digest, Sha256};
    let root = std::fs::canonicalize("../vectors")?;
    println!("cargo:rerun-if-changed=../vectors");
    let mut files = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(&root)?
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned());
                files.push((rel.collect::<Vec<_>>().join("/"), p));
            }
        }
    }
    files.sort();
    let mut h = Sha256::new();
    let mut src =
        String::from("/// The catalog's files: (path under `vectors/`, octets), sorted by path.\n");
    src.push_str("pub static FILES: &[(&str, &[u8])] = &[\n");
    for (rel, p) in &files {
        let body = std::fs::read(p)?;
        h.update((rel.len() as u64).to_le_bytes());
        h.update(rel.as_bytes());
        h.update((body.len() as u64).to_le_bytes());
        h.update(&body);
        src.push_str(&format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            p.display().to_string()
        ));
    }
    src.push_str("];\n");
    let digest: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    src.push_str(&format!(
        "/// SHA-256 over every (path, octets) of [`FILES`]: the cache key of this catalog.\npub const KEY: &str = {digest:?};\n"
    ));
    std::fs::write(out.join("catalog_files.rs"), src)?;
    Ok(())
}

/// `SWP_CONFORM_GIT_SHA`: the commit the binary is built from, or `nogit` outside a git
/// checkout. Rebuilt when HEAD or the branch it names moves.
fn git_sha() {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let sha = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "nogit".into());
    for f in ["HEAD", "packed-refs"] {
        if let Some(p) = git(&["rev-parse", "--git-path", f]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(p) = git(&["rev-parse", "--git-path", &r]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    println!("cargo:rustc-env=SWP_CONFORM_GIT_SHA={sha}");
}
