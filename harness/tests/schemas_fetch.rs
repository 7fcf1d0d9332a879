//! `swp-conform schemas fetch` (issue 31): the pinned official MCP schemas come from a
//! mirror served over loopback HTTP or from a directory, each checked against its SHA-256;
//! a mirror with one byte changed is refused and caches nothing of it; and the MCP-native
//! method then judges with the cache alone, no `MCP_SCHEMA_DIR` and no `../shared`.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use swp_conform::method::mcpnative::pins::PINS;

/// The mirror the schemas are copied from: `MCP_SCHEMA_DIR`, else `mcp-schema` beside the
/// checkout. Absent, the test says why it is skipped, unless `SWP_REQUIRE_MCP_SCHEMAS=1`.
fn mirror(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("MCP_SCHEMA_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| common::shared::shared_dir().join("mcp-schema"));
    if PINS
        .iter()
        .all(|p| dir.join(p.version).join("schema.json").is_file())
    {
        return Some(dir);
    }
    assert!(
        std::env::var("SWP_REQUIRE_MCP_SCHEMAS").as_deref() != Ok("1"),
        "SWP_REQUIRE_MCP_SCHEMAS=1 but no mirror of the MCP schemas at {}",
        dir.display()
    );
    eprintln!(
        "schemas_fetch::{test}: skipped: no mirror of the official MCP schemas at {} (set MCP_SCHEMA_DIR or SWP_SHARED_DIR)",
        dir.display()
    );
    None
}

/// Serves `files` (path → octets) over HTTP/1.1 on loopback until the process ends; its
/// base URL.
fn serve(files: BTreeMap<String, Vec<u8>>) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            let mut r = BufReader::new(c.try_clone().unwrap());
            let mut line = String::new();
            if r.read_line(&mut line).is_err() {
                continue;
            }
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).map_or(true, |n| n == 0) || h == "\r\n" {
                    break;
                }
            }
            let path = line.split(' ').nth(1).unwrap_or("").trim_start_matches('/');
            let _ = match files.get(path) {
                Some(b) => c
                    .write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                            b.len()
                        )
                        .as_bytes(),
                    )
                    .and_then(|()| c.write_all(b)),
                None => c.write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                ),
            };
        }
    });
    base
}

fn mirror_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    PINS.iter()
        .map(|p| {
            let rel = format!("{}/schema.json", p.version);
            (rel.clone(), std::fs::read(dir.join(&rel)).unwrap())
        })
        .collect()
}

fn scratch(tag: &str) -> PathBuf {
    let d = common::root()
        .join("target/schemas-fetch-test")
        .join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The binary with its cache in `cache`, and no `MCP_SCHEMA_DIR`.
fn swp_conform(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swp-conform"))
        .args(args)
        .env_remove("MCP_SCHEMA_DIR")
        .env("SWP_CONFORM_CACHE", cache)
        .current_dir(cache.parent().unwrap())
        .output()
        .unwrap()
}

use common::output_text as text;

#[test]
fn a_mirror_over_http_is_fetched_and_a_tampered_one_refused() {
    let Some(dir) = mirror("a_mirror_over_http_is_fetched_and_a_tampered_one_refused") else {
        return;
    };
    let files = mirror_files(&dir);
    let good = serve(files.clone());
    let work = scratch("http");
    let cache = work.join("cache");
    let o = swp_conform(&cache, &["schemas", "fetch", "--from", &good]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("cached {} MCP schema(s)", PINS.len())),
        "{}",
        text(&o)
    );
    for p in &PINS {
        let got = std::fs::read(cache.join("mcp-schema").join(p.version).join("schema.json"));
        assert_eq!(
            got.ok().as_ref(),
            files.get(&format!("{}/schema.json", p.version))
        );
    }

    // One byte changed in one schema: refused, with the version, the digest and the pin.
    let mut bad = files.clone();
    let victim = format!("{}/schema.json", PINS[2].version);
    if let Some(b) = bad.get_mut(&victim).and_then(|b| b.get_mut(100)) {
        *b ^= 0x20;
    }
    let tampered = serve(bad);
    let cache2 = work.join("cache2");
    let o = swp_conform(&cache2, &["schemas", "fetch", "--from", &tampered]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains(&format!("MCP schema {}", PINS[2].version))
            && t.contains(&format!("not the pinned {}", PINS[2].sha256))
            && t.contains("refused"),
        "{t}"
    );
    assert!(!cache2
        .join("mcp-schema")
        .join(PINS[2].version)
        .join("schema.json")
        .exists());
}

#[test]
fn a_mirror_directory_is_copied_and_the_mcp_native_method_runs_from_the_cache() {
    let test = "a_mirror_directory_is_copied_and_the_mcp_native_method_runs_from_the_cache";
    let Some(dir) = mirror(test) else {
        return;
    };
    let work = scratch("dir");
    let cache = work.join("cache");
    // Before the fetch the method has no schemas, and says which command gives them.
    let manifest = work.join("mock.yaml");
    std::fs::write(
        &manifest,
        format!(
            "name: mockmcp\nversion: \"0\"\nkind: mcp-server\nstart: {{command: {:?}, args: [good]}}\nmethods: [mcp_native]\nmcp_native:\n  transport: stdio\n  protocol_version: \"2025-06-18\"\n",
            common::example("mockmcp").display().to_string()
        ),
    )
    .unwrap();
    let m = manifest.display().to_string();
    let run = |out: &str| {
        swp_conform(
            &cache,
            &[
                "run",
                "--sut",
                &m,
                "--namespace",
                "mcpnative",
                "--filter",
                "mcpnative_0003*",
                "--out",
                out,
                "-q",
            ],
        )
    };
    let verdict = |out: &str| {
        let t = std::fs::read_to_string(work.join(out).join("report.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        let r = &v["results"][0];
        (r["verdict"].as_str().unwrap_or("").to_owned(), t)
    };
    run("before");
    let (v, t) = verdict("before");
    assert_eq!(v, "harness-error", "{t}");
    assert!(t.contains("swp-conform schemas fetch"), "{t}");

    let o = swp_conform(
        &cache,
        &["schemas", "fetch", "--from", &dir.display().to_string()],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = run("after");
    let (v, t) = verdict("after");
    assert_eq!(v, "pass", "{}\n{t}", text(&o));
}
