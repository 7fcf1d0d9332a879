//! The octets API: same-version traffic is not parsed at all (even bytes that are not JSON
//! pass), a message the rules do not change comes back as the very input octets, and a
//! translated one is serialised.

use mcp_translate::{translate_bytes, Answering, BytesOutput, Direction, Hop, Version};

fn hop(from: Version, to: Version) -> Hop {
    Hop {
        from,
        to,
        direction: Direction::ServerToClient,
    }
}

#[test]
fn same_version_octets_are_not_parsed() {
    let garbage = b"{not json at all";
    let out = translate_bytes(
        garbage,
        &hop(Version::V2025_06_18, Version::V2025_06_18),
        &Answering("x"),
    )
    .unwrap();
    assert!(matches!(out, BytesOutput::Unchanged(b) if std::ptr::eq(b, garbage.as_slice())));
    // Across versions the same octets are parsed, and refused.
    assert!(translate_bytes(
        garbage,
        &hop(Version::V2025_06_18, Version::V2024_11_05),
        &Answering("x")
    )
    .is_err());
}

#[test]
fn unchanged_messages_keep_their_octets_and_changed_ones_are_rewritten() {
    let same = br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
    let out = translate_bytes(
        same,
        &hop(Version::V2025_11_25, Version::V2024_11_05),
        &Answering("x"),
    )
    .unwrap();
    assert!(matches!(out, BytesOutput::Unchanged(b) if std::ptr::eq(b, same.as_slice())));
    let tool = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","title":"T","inputSchema":{"type":"object"}}]}}"#;
    match translate_bytes(
        tool,
        &hop(Version::V2025_06_18, Version::V2024_11_05),
        &Answering("tools/list"),
    )
    .unwrap()
    {
        BytesOutput::Translated {
            messages,
            replies,
            warnings,
        } => {
            assert_eq!(messages, vec![br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}"#.to_vec()]);
            assert!(replies.is_empty());
            assert_eq!(warnings.len(), 1);
            assert_eq!(warnings[0].path, "/result/tools/0/title");
        }
        other => panic!("{other:?}"),
    }
}
