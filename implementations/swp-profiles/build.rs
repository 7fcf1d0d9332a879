//! Compiles the project's P1 `.proto` files with protox (no system `protoc`): Rust types
//! for every package, and the file descriptor set embedded so the harness can encode and
//! decode any named message by reflection.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The project's `.proto` files sit at the workspace root, shared with the harness,
    // which compiles the same files into its own types.
    let dir = PathBuf::from("../../proto");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "proto"))
        .collect();
    files.sort();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    println!("cargo:rerun-if-changed=../../proto");
    let fds = protox::compile(&files, [&dir])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("p1_descriptors.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    prost_build::Config::new().bytes(["."]).compile_fds(fds)?;
    Ok(())
}
