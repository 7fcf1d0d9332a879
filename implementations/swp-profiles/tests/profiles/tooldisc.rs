//! SWP-TOOLDISC (profile 11): required descriptor fields, schema-reference forms, stable
//! descriptors and pages, walks that never repeat a tool, and deterministic gets.

use crate::FORMS;
use swp_core::ErrorCode;
use swp_profiles::p1::pb::tooldisc::{
    ToolDescriptor, TooldiscErr, TooldiscGetReq, TooldiscGetResp, TooldiscListReq, TooldiscListResp,
};
use swp_profiles::payload::PayloadError;
use swp_profiles::tooldisc::{
    self, schema_ref_valid, Catalog, CatalogError, Config, Seen, TooldiscMessage,
};
use swp_profiles::{Ctx, Profile};

fn tool(id: &str, version: &str) -> ToolDescriptor {
    ToolDescriptor {
        tool_id: id.into(),
        name: format!("{id} tool"),
        version: version.into(),
        schema_ref: format!("urn:x:{id}:{version}"),
        descriptor_payload: Default::default(),
    }
}

fn list(size: u32, token: &str) -> TooldiscMessage {
    TooldiscMessage::ListReq(TooldiscListReq {
        page_size: size,
        page_token: token.into(),
        filter: String::new(),
    })
}

fn page(tools: Vec<ToolDescriptor>, next: &str) -> TooldiscMessage {
    TooldiscMessage::ListResp(TooldiscListResp {
        tools,
        next_page_token: next.into(),
    })
}

fn get(id: &str, v: &str) -> TooldiscMessage {
    TooldiscMessage::GetReq(TooldiscGetReq {
        tool_id: id.into(),
        version: v.into(),
    })
}

fn got(t: ToolDescriptor) -> TooldiscMessage {
    TooldiscMessage::GetResp(TooldiscGetResp { tool: Some(t) })
}

/// TOOLDISC-012: msg_types outside 1..=5 are ERR_UNSUPPORTED_MSG_TYPE.
#[test]
fn unassigned_msg_types_are_unsupported() {
    for form in FORMS {
        for t in [0, 6, 7] {
            assert_eq!(
                tooldisc::decode(form, t, b"").unwrap_err().code(),
                ErrorCode::UnsupportedMsgType
            );
        }
    }
}

/// TOOLDISC-002 … TOOLDISC-005, TOOLDISC-010: every descriptor, listed or fetched, has a
/// tool_id, a name, a version and a schema reference.
#[test]
fn required_descriptor_fields() {
    let blank: [fn(&mut ToolDescriptor); 4] = [
        |t| t.tool_id.clear(),
        |t| t.name.clear(),
        |t| t.version.clear(),
        |t| t.schema_ref.clear(),
    ];
    for (f, name) in blank
        .iter()
        .zip(["tool_id", "name", "version", "schema_ref"])
    {
        let mut t = tool("a", "1");
        f(&mut t);
        for m in [page(vec![tool("b", "1"), t.clone()], ""), got(t.clone())] {
            for form in FORMS {
                match tooldisc::decode(form, m.msg_type(), &tooldisc::encode(form, &m)) {
                    Err(PayloadError::MissingField { field, .. }) => assert_eq!(field, name),
                    other => panic!("{name}: {other:?}"),
                }
            }
        }
    }
    let none = TooldiscMessage::GetResp(TooldiscGetResp { tool: None });
    assert!(tooldisc::decode(FORMS[0], 4, &tooldisc::encode(FORMS[0], &none)).is_err());
    assert!(tooldisc::decode(FORMS[0], 3, &tooldisc::encode(FORMS[0], &get("", "1"))).is_err());
    // Listing requests and errors need nothing.
    for m in [
        list(0, ""),
        TooldiscMessage::Err(TooldiscErr::default()),
        page(vec![], ""),
    ] {
        for form in FORMS {
            assert_eq!(
                tooldisc::decode(form, m.msg_type(), &tooldisc::encode(form, &m)),
                Ok(m.clone())
            );
        }
    }
}

/// TOOLDISC-007, TOOLDISC-011: a schema reference is an absolute URI or a content hash.
#[test]
fn schema_reference_forms() {
    let h = "a".repeat(64);
    for ok in [
        "https://s.example/x.json",
        "urn:swp:x",
        "file:///s.json",
        &format!("sha256:{h}"),
        &format!("sha384:{}", "0".repeat(96)),
        &format!("sha512:{}", "f".repeat(128)),
    ] {
        assert!(schema_ref_valid(ok), "{ok}");
    }
    for bad in [
        "",
        "schema.json",
        "./x.json",
        "not a uri",
        "https:",
        "1http://x",
        "http://a b",
        "sha256:zz",
        &format!("sha256:{}", "A".repeat(64)),
        &format!("sha256:{}", "a".repeat(63)),
        "sha512:abc",
    ] {
        assert!(!schema_ref_valid(bad), "{bad:?}");
    }
    let mut t = tool("a", "1");
    t.schema_ref = "schema.json".into();
    let e = tooldisc::decode(FORMS[0], 4, &tooldisc::encode(FORMS[0], &got(t))).unwrap_err();
    assert!(
        matches!(
            e,
            PayloadError::Invalid {
                field: "schema_ref",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.code(), ErrorCode::InvalidProfilePayload);
}

/// TOOLDISC-008: pages within size, stable, and a walk by cursor never repeats a tool.
#[test]
fn paging() {
    let mut c = Catalog::new(Config::default());
    c.step(Ctx::scoped(""), &list(1, "")).unwrap();
    assert!(matches!(
        c.step(
            Ctx::scoped(""),
            &page(vec![tool("a", "1"), tool("b", "1")], "n1")
        ),
        Err(CatalogError::PageTooLarge { asked: 1, got: 2 })
    ));
    assert_eq!(
        c.step(Ctx::scoped(""), &page(vec![tool("a", "1")], "n1")),
        Ok(Seen::Page {
            solicited: true,
            continued: false
        })
    );
    // The next page repeats "a": refused; another tool is fine.
    c.step(Ctx::scoped(""), &list(1, "n1")).unwrap();
    assert!(matches!(
        c.step(Ctx::scoped(""), &page(vec![tool("a", "1")], "n2")),
        Err(CatalogError::RepeatedAcrossPages { .. })
    ));
    assert_eq!(
        c.step(Ctx::scoped(""), &page(vec![tool("b", "1")], "")),
        Ok(Seen::Page {
            solicited: true,
            continued: true
        })
    );
    // The same first request again: the same page, or refused.
    c.step(Ctx::scoped(""), &list(1, "")).unwrap();
    assert_eq!(
        c.step(Ctx::scoped(""), &page(vec![tool("b", "1")], "n1")),
        Err(CatalogError::PageChanged)
    );
    assert!(c
        .step(Ctx::scoped(""), &page(vec![tool("a", "1")], "n1"))
        .is_ok());
    // A token no listing issued starts a walk of its own (cursors are opaque).
    c.step(Ctx::scoped(""), &list(0, "zzz")).unwrap();
    assert!(c
        .step(Ctx::scoped(""), &page(vec![tool("a", "1")], ""))
        .is_ok());
    // Another descriptor under a known (tool_id, version).
    let mut changed = tool("a", "1");
    changed.name = "other".into();
    assert!(matches!(
        c.step(Ctx::scoped(""), &page(vec![changed], "")),
        Err(CatalogError::DescriptorChanged { .. })
    ));
}

/// TOOLDISC-009, TOOLDISC-013: a GET is answered with the tool and version asked for, the
/// same way every time; an error answers the oldest waiting request.
#[test]
fn deterministic_gets() {
    let mut c = Catalog::new(Config::default());
    c.step(Ctx::scoped(""), &get("a", "")).unwrap();
    assert!(matches!(
        c.step(Ctx::scoped(""), &got(tool("b", "1"))),
        Err(CatalogError::WrongTool { .. })
    ));
    assert_eq!(
        c.step(Ctx::scoped(""), &got(tool("a", "2"))),
        Ok(Seen::Tool { solicited: true })
    );
    c.step(Ctx::scoped(""), &get("a", "")).unwrap();
    assert!(matches!(
        c.step(Ctx::scoped(""), &got(tool("a", "1"))),
        Err(CatalogError::GetChanged(_))
    ));
    assert!(c.step(Ctx::scoped(""), &got(tool("a", "2"))).is_ok());
    c.step(Ctx::scoped(""), &get("a", "1")).unwrap();
    assert!(matches!(
        c.step(Ctx::scoped(""), &got(tool("a", "2"))),
        Err(CatalogError::WrongTool { .. })
    ));
    assert!(c.step(Ctx::scoped(""), &got(tool("a", "1"))).is_ok());
    // Nothing waiting: taken, judged only as a descriptor.
    assert_eq!(
        c.step(Ctx::scoped(""), &got(tool("z", "1"))),
        Ok(Seen::Tool { solicited: false })
    );
    let err = TooldiscMessage::Err(TooldiscErr::default());
    assert_eq!(
        c.step(Ctx::scoped(""), &err),
        Ok(Seen::Error { solicited: false })
    );
    c.step(Ctx::scoped(""), &get("missing", "")).unwrap();
    assert_eq!(
        c.step(Ctx::scoped(""), &err),
        Ok(Seen::Error { solicited: true })
    );
}
