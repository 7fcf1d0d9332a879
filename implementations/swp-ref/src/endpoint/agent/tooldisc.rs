//! The reference's SWP-TOOLDISC responder (profile 11): a fixed catalog of four tool
//! descriptors ([`TOOLS`], sorted by tool_id then version), deterministic so vectors can
//! state it (docs/profiles.md).
//!
//! - **List.** The filter is a substring of the tool_id (empty: all). A page holds
//!   `page_size` tools (0: [`DEFAULT_PAGE`]; at most [`MAX_PAGE`]). `next_page_token` is an
//!   opaque cursor, empty on the last page; a token the reference did not issue for the
//!   same filter gets `TOOLDISC_ERR` `invalid_page_token`.
//! - **Get.** By tool_id, and version when one is given; without one, the latest version.
//!   A tool or version not held gets `TOOLDISC_ERR` `not_found`, its message starting
//!   `ERR_NOT_FOUND`, the same every time.
//!
//! Answers reuse the request's msg_id. The reference asks nothing itself: a page, a tool or
//! an error from the peer is judged by the channel's catalog judge (an invalid descriptor or
//! schema reference is rejected, `ERR_INVALID_PROFILE_PAYLOAD`) and otherwise taken
//! silently. What the agent sends goes through the same judge first.

use super::{step, Action, Config, Incoming, Out, ProfileAgent, Reject};
use bytes::Bytes;
use sha2::{Digest, Sha256};
use swp_profiles::p1::pb::tooldisc::{
    ToolDescriptor, TooldiscErr, TooldiscGetResp, TooldiscListReq, TooldiscListResp,
};
use swp_profiles::p1::P1Form;
use swp_profiles::payload::shown;
use swp_profiles::tooldisc::{self, codes, Catalog, TooldiscMessage};
use swp_profiles::Profile;

/// The catalog: (tool_id, name, version, schema_ref, descriptor_payload).
pub const TOOLS: [(&str, &str, &str, &str, &str); 4] = [
    (
        "swp.test.clock",
        "clock",
        "1.0.0",
        "urn:swp:test:schema:clock",
        r#"{"hints":{"cost":"advisory: free"}}"#,
    ),
    (
        "swp.test.echo",
        "echo",
        "1.0.0",
        "https://swp.example/schemas/echo-1.json",
        r#"{"hints":{"rate":"advisory: 10/s"}}"#,
    ),
    (
        "swp.test.sum",
        "sum",
        "1.0.0",
        "sha256:9be10bd31bff19d09356339a083c839a5482d2b08c28046cb8f19a913dff637d",
        "{}",
    ),
    (
        "swp.test.sum",
        "sum",
        "2.0.0",
        "sha256:48764c3b1c82fb2c7fb919a9b8eae204ca5aeae4e6fe75093a85b5c082e4b074",
        "{}",
    ),
];
/// Tools on a page when the request leaves the size to the responder.
pub const DEFAULT_PAGE: usize = 50;
/// The largest page.
pub const MAX_PAGE: usize = 100;

fn descriptor(i: usize) -> ToolDescriptor {
    let (tool_id, name, version, schema_ref, payload) = TOOLS[i];
    ToolDescriptor {
        tool_id: tool_id.into(),
        name: name.into(),
        version: version.into(),
        schema_ref: schema_ref.into(),
        descriptor_payload: Bytes::from_static(payload.as_bytes()),
    }
}

/// The cursor to the tool at `offset` of the listing under `filter`: opaque to the peer,
/// tagged so a token for another filter or offset is not taken.
pub fn page_token(filter: &str, offset: usize) -> String {
    let mut h = Sha256::new();
    h.update(filter.as_bytes());
    h.update([0]);
    h.update(offset.to_string().as_bytes());
    let d = h.finalize();
    let tag: String = d[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("c1.{offset}.{tag}")
}

fn offset_of(filter: &str, token: &str) -> Option<usize> {
    if token.is_empty() {
        return Some(0);
    }
    let offset: usize = token.strip_prefix("c1.")?.split('.').next()?.parse().ok()?;
    (page_token(filter, offset) == token).then_some(offset)
}

/// The TOOLDISC state of one connection.
#[derive(Debug)]
pub struct Agent {
    judge: Catalog,
    form: P1Form,
}

impl Agent {
    /// The responder with the library's caps.
    pub fn new(form: P1Form) -> Self {
        Agent {
            judge: Catalog::new(tooldisc::Config::default()),
            form,
        }
    }

    fn err(code: &str, message: String) -> TooldiscMessage {
        TooldiscMessage::Err(TooldiscErr {
            code: code.into(),
            message,
        })
    }

    fn list(r: &TooldiscListReq) -> TooldiscMessage {
        let Some(offset) = offset_of(&r.filter, &r.page_token) else {
            return Self::err(
                codes::INVALID_PAGE_TOKEN,
                format!(
                    "ERR_INVALID_PROFILE_PAYLOAD: page token {} was not issued for this listing",
                    shown(&r.page_token)
                ),
            );
        };
        let size = match r.page_size as usize {
            0 => DEFAULT_PAGE,
            n => n.min(MAX_PAGE),
        };
        let matching: Vec<usize> = (0..TOOLS.len())
            .filter(|&i| TOOLS[i].0.contains(r.filter.as_str()))
            .collect();
        let end = offset.saturating_add(size).min(matching.len());
        let tools = matching
            .get(offset..end)
            .unwrap_or_default()
            .iter()
            .map(|&i| descriptor(i))
            .collect();
        TooldiscMessage::ListResp(TooldiscListResp {
            tools,
            next_page_token: if end < matching.len() {
                page_token(&r.filter, end)
            } else {
                String::new()
            },
        })
    }

    fn get(tool_id: &str, version: &str) -> TooldiscMessage {
        let found = (0..TOOLS.len())
            .rev()
            .find(|&i| TOOLS[i].0 == tool_id && (version.is_empty() || TOOLS[i].2 == version));
        match found {
            Some(i) => TooldiscMessage::GetResp(TooldiscGetResp {
                tool: Some(descriptor(i)),
            }),
            None => Self::err(
                codes::NOT_FOUND,
                format!(
                    "ERR_NOT_FOUND: no tool {} version {}",
                    shown(tool_id),
                    shown(version)
                ),
            ),
        }
    }
}

impl ProfileAgent for Agent {
    type Profile = Catalog;

    /// The peer's descriptors and pages the judge remembers (up to a frame each).
    fn held_bytes(&self) -> usize {
        self.judge.held_bytes()
    }

    fn for_connection(_: &Config, form: P1Form) -> Self {
        Agent::new(form)
    }

    fn form(&self) -> P1Form {
        self.form
    }

    fn on_message(&mut self, m: TooldiscMessage, at: Incoming<'_>) -> Result<Action, Reject> {
        step::<Self>(&mut self.judge, at.ctx(), &m)?;
        let answer = match &m {
            TooldiscMessage::ListReq(r) => Self::list(r),
            TooldiscMessage::GetReq(g) => Self::get(&g.tool_id, &g.version),
            _ => return Ok(Action::Nothing),
        };
        // Our answer passes our own judge: pages within size, stable, gets as asked.
        if self.judge.step(at.ctx(), &answer).is_err() {
            return Ok(Action::Nothing);
        }
        Ok(Action::Send(vec![Out::of::<Catalog>(
            self.form,
            &answer,
            Some(at.msg_id.clone()),
        )]))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{code, outs};
    use super::*;
    use swp_core::ErrorCode;
    use swp_profiles::p1::pb::tooldisc::TooldiscGetReq;

    const ID: Bytes = Bytes::from_static(b"msg-000000000001");

    fn ask(a: &mut Agent, m: TooldiscMessage) -> TooldiscMessage {
        let o = outs(a.handle(
            m.msg_type(),
            &ID,
            &tooldisc::encode(P1Form::Message, &m),
            "",
            0,
        ));
        assert_eq!(o.len(), 1);
        tooldisc::decode(P1Form::Message, o[0].msg_type, &o[0].payload).unwrap()
    }

    fn list(a: &mut Agent, size: u32, token: &str, filter: &str) -> TooldiscMessage {
        ask(
            a,
            TooldiscMessage::ListReq(TooldiscListReq {
                page_size: size,
                page_token: token.into(),
                filter: filter.into(),
            }),
        )
    }

    #[test]
    fn a_walk_by_cursor_sees_every_tool_once() {
        let mut a = Agent::new(P1Form::Message);
        let mut token = String::new();
        let mut seen = Vec::new();
        loop {
            let TooldiscMessage::ListResp(p) = list(&mut a, 1, &token, "") else {
                panic!("a page")
            };
            assert!(p.tools.len() <= 1);
            seen.extend(
                p.tools
                    .iter()
                    .map(|t| (t.tool_id.clone(), t.version.clone())),
            );
            if p.next_page_token.is_empty() {
                break;
            }
            token = p.next_page_token;
        }
        assert_eq!(seen.len(), TOOLS.len());
        // The first page's cursor, as the reference manifests declare it.
        assert_eq!(page_token("", 1), "c1.1.2215e8ac");
        // A filter, and a cursor of another filter.
        let TooldiscMessage::ListResp(p) = list(&mut a, 0, "", "sum") else {
            panic!()
        };
        assert_eq!(p.tools.len(), 2);
        assert!(p.next_page_token.is_empty());
        assert!(
            matches!(list(&mut a, 1, &page_token("", 1), "sum"), TooldiscMessage::Err(e) if e.code == codes::INVALID_PAGE_TOKEN)
        );
    }

    #[test]
    fn gets_by_id_and_version_and_missing_tools() {
        let mut a = Agent::new(P1Form::Message);
        let get = |a: &mut Agent, id: &str, v: &str| {
            ask(
                a,
                TooldiscMessage::GetReq(TooldiscGetReq {
                    tool_id: id.into(),
                    version: v.into(),
                }),
            )
        };
        assert!(
            matches!(get(&mut a, "swp.test.sum", ""), TooldiscMessage::GetResp(r) if r.tool.as_ref().unwrap().version == "2.0.0")
        );
        assert!(
            matches!(get(&mut a, "swp.test.sum", "1.0.0"), TooldiscMessage::GetResp(r) if r.tool.as_ref().unwrap().version == "1.0.0")
        );
        let missing = get(&mut a, "nope", "");
        assert!(matches!(&missing, TooldiscMessage::Err(e) if e.code == codes::NOT_FOUND));
        assert_eq!(get(&mut a, "nope", ""), missing);
        assert!(matches!(
            get(&mut a, "swp.test.sum", "9"),
            TooldiscMessage::Err(_)
        ));
        assert_eq!(
            code(a.handle(6, &ID, b"", "", 0)),
            ErrorCode::UnsupportedMsgType
        );
    }
}
