//! Compiles the project's P1 `.proto` files (the workspace's `proto/`) with protox, no
//! system `protoc`: the harness's own Rust types for every profile package and the file
//! descriptor set it encodes, decodes and compares payloads with. The harness judges with
//! these, never with the reference's profile library, so a misreading built into the
//! reference cannot also pass its own judge.

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
    Ok(())
}
