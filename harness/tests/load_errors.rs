//! A catalog with mistakes is rejected with every problem named by file, line and column and
//! what was expected: unknown fields, unknown requirements, duplicate ids, bad codes and
//! bad expressions.

use std::path::{Path, PathBuf};

const REQS: &str = "document: core-spec\ntitle: T\nrequirements:\n  - id: CORE-001\n    level: MUST\n    section: \"3\"\n    summary: s\n    testable: codec\n    aliases: [C-001]\n";
const INDEX: &str = "source: test\ncatalog: []\n";

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("requirements")).unwrap();
    std::fs::create_dir_all(d.join("core")).unwrap();
    std::fs::write(d.join("requirements/core-spec.yaml"), REQS).unwrap();
    std::fs::write(d.join("catalog-index.yaml"), INDEX).unwrap();
    d
}

fn vector(id: &str, body: &str) -> String {
    format!("id: {id}\ntitle: t\nnamespace: core\nrequirements: [CORE-001]\nmethods: [codec]\nsteps:\n{body}")
}

fn problems(dir: &Path) -> Vec<String> {
    match swp_conform::catalog::load::load(dir) {
        Ok(_) => Vec::new(),
        Err(e) => e.problems.iter().map(|p| p.to_string()).collect(),
    }
}

#[test]
fn a_good_catalog_loads_and_aliases_resolve() {
    let d = scratch("good");
    let v = vector(
        "core_0001_x",
        "  - send: {frame: {}}\n    expect: {accept: {}}\n",
    )
    .replace("[CORE-001]", "[C-001]");
    std::fs::write(d.join("core/core_0001_x.yaml"), v).unwrap();
    assert_eq!(problems(&d), Vec::<String>::new());
}

#[test]
fn unknown_field_is_named_with_line_and_column() {
    let d = scratch("unknown_field");
    let v = vector(
        "core_0001_x",
        "  - send: {frame: {}}\n    expect: {accept: {}}\n    colour: blue\n",
    );
    std::fs::write(d.join("core/core_0001_x.yaml"), v).unwrap();
    let p = problems(&d);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("core_0001_x.yaml:9:"), "{}", p[0]);
    assert!(p[0].contains("colour"), "{}", p[0]);
}

#[test]
fn unknown_requirement_duplicate_id_bad_code_and_bad_expression_are_all_reported() {
    let d = scratch("many");
    std::fs::create_dir_all(d.join("e1")).unwrap();
    let bad_req = vector(
        "core_0001_x",
        "  - send: {frame: {}}\n    expect: {accept: {}}\n",
    )
    .replace("[CORE-001]", "[CORE-999]");
    std::fs::write(d.join("core/core_0001_x.yaml"), bad_req).unwrap();
    let bad_code = vector(
        "core_0002_y",
        "  - send: {frame: {}}\n    expect: {reject: ERR_NOPE}\n",
    );
    std::fs::write(d.join("core/core_0002_y.yaml"), bad_code).unwrap();
    let bad_expr = vector(
        "core_0003_z",
        "  - send: {raw: [{u32be: \"${MAX_FRAME} + 1\"}]}\n    expect: nothing\n",
    );
    std::fs::write(d.join("core/core_0003_z.yaml"), bad_expr).unwrap();
    // Same id as core_0002_y, in a file of another name: both the file-name rule and the
    // duplicate rule fire.
    let dup = vector(
        "core_0002_y",
        "  - send: {frame: {}}\n    expect: {accept: {}}\n",
    );
    std::fs::write(d.join("core/core_0004_w.yaml"), dup).unwrap();
    let p = problems(&d).join("\n");
    assert!(
        p.contains("core_0001_x.yaml:4:") && p.contains("unknown requirement \"CORE-999\""),
        "{p}"
    );
    assert!(
        p.contains("core_0002_y.yaml:8:") && p.contains("\"ERR_NOPE\" is not a canonical"),
        "{p}"
    );
    assert!(
        p.contains("core_0003_z.yaml:7:") && p.contains("unknown parameter ${MAX_FRAME}"),
        "{p}"
    );
    assert!(p.contains("duplicate vector id \"core_0002_y\""), "{p}");
    assert!(p.contains("must equal the file name"), "{p}");
}

#[test]
fn a_malformed_requirement_file_is_rejected() {
    let d = scratch("bad_reqs");
    std::fs::write(
        d.join("requirements/core-spec.yaml"),
        REQS.replace("level: MUST", "level: MUSTN'T"),
    )
    .unwrap();
    let p = problems(&d).join("\n");
    assert!(p.contains("core-spec.yaml:5:"), "{p}");
}

#[test]
fn a_capture_used_before_it_is_bound_is_named() {
    let d = scratch("captures");
    let v = format!(
        "id: core_0001_x\ntitle: t\nnamespace: core\nrequirements: [CORE-001]\nmethods: [mcp_proxy]\ntopology: intermediary\nproxy: {{client_version: \"2026-07-28\"}}\nsteps:\n{}",
        concat!(
            "  - send: {jsonrpc_line: '{\"jsonrpc\":\"2.0\",\"id\":?{early},\"result\":{}}'}\n",
            "    expect: {arrives: {side: upstream, json: {\"id\": \"?{k}\", \"x\": {\"?{key}\": 1}}}}\n",
            "  - send: {jsonrpc_line: '{\"jsonrpc\":\"2.0\",\"id\":?{k},\"result\":{?{key}:2},\"t\":\"?{ text\"}'}\n",
            "    expect: {silence: {ms: 10}}\n",
        )
    );
    std::fs::write(d.join("core/core_0001_x.yaml"), v).unwrap();
    let p = problems(&d);
    // `?{k}` and `?{key}` (a value and an object key) are bound by step 1 before step 2
    // uses them, and `?{ text` is no use: only `?{early}` is a problem, with its place.
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].contains("core_0001_x.yaml:") && p[0].contains("`?{early}` is used before"),
        "{p:?}"
    );
}

#[test]
fn a_block_or_expectation_of_another_family_is_named_where_it_is() {
    let d = scratch("family");
    // Line 6 is `proxy:`, a block of the mcp_proxy method in a codec vector.
    let v = vector(
        "core_0001_x",
        "  - send: {frame: {}}\n    expect: {accept: {}}\n",
    )
    .replace(
        "steps:\n",
        "proxy: {client_version: \"2025-11-25\"}\nsteps:\n",
    );
    std::fs::write(d.join("core/core_0001_x.yaml"), v).unwrap();
    // Line 8 expects a JSON-RPC response, which only mcp_native and mcp_gateway read.
    let v = vector(
        "core_0002_y",
        "  - send: {frame: {}}\n    expect: {response: {id: 1}}\n",
    );
    std::fs::write(d.join("core/core_0002_y.yaml"), v).unwrap();
    // Methods of two families.
    let v = vector(
        "core_0003_z",
        "  - send: {frame: {}}\n    expect: {accept: {}}\n",
    )
    .replace("[codec]", "[codec, translate]");
    std::fs::write(d.join("core/core_0003_z.yaml"), v).unwrap();
    let p = problems(&d).join("\n");
    assert!(
        p.contains("core_0001_x.yaml:6:")
            && p.contains(
                "`proxy` is for mcp_proxy vectors; this vector's methods are codec and session"
            ),
        "{p}"
    );
    assert!(
        p.contains("core_0002_y.yaml:8:")
            && p.contains("step 1: `response` is for mcp_native and mcp_gateway vectors"),
        "{p}"
    );
    assert!(
        p.contains("core_0003_z.yaml:5:")
            && p.contains("methods codec and translate cannot be combined"),
        "{p}"
    );
}

#[test]
fn a_gateway_envelope_condition_and_mcp_actions_are_held_to_the_gateway_method() {
    let d = scratch("gateway_envelope");
    // The condition on a vector no gateway runs.
    let v = vector(
        "core_0001_x",
        "  - send: {frame: {}}\n    expect: {accept: {}}\n",
    )
    .replace(
        "steps:",
        "applies_when: {gateway_envelope: seed-003}\nsteps:",
    );
    std::fs::write(d.join("core/core_0001_x.yaml"), v).unwrap();
    // A gateway vector may send raw lines judged by `mcp` expectations, but not open a
    // session.
    std::fs::create_dir_all(d.join("gateway")).unwrap();
    let gw = |id: &str, steps: &str| {
        format!("id: {id}\ntitle: t\nnamespace: gateway\nrequirements: [CORE-001]\nmethods: [mcp_gateway]\napplies_when: {{gateway_envelope: mcp}}\nsteps:\n{steps}")
    };
    let line = "  - mcp: {line: 'x'}\n    expect: {mcp: {error: {codes: [-32700]}}}\n";
    std::fs::write(
        d.join("gateway/gateway_0001_x.yaml"),
        gw("gateway_0001_x", line),
    )
    .unwrap();
    let open = "  - mcp: {open: {}}\n";
    std::fs::write(
        d.join("gateway/gateway_0002_x.yaml"),
        gw("gateway_0002_x", &format!("{open}{line}")),
    )
    .unwrap();
    let p = problems(&d);
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(
        p.iter().any(|x| x.contains("core_0001_x.yaml")
            && x.contains("`applies_when.gateway_envelope` needs `methods: [mcp_gateway]`")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|x| x.contains("gateway_0002_x.yaml")
                && x.contains("takes `mcp: {line}` steps only")),
        "{p:?}"
    );
}
