//! SWP-TOOLDISC (profile 11, swp-tooldisc.md): the descriptor's required fields and its
//! schema reference's form (§4), gets answered deterministically by tool_id and version
//! selector (§5), and paging (§5) as docs/spec-issues-profiles.md reads it: a page holds at
//! most `page_size` tools, and a walk by cursor sees no tool twice.
//!
//! Requests and answers carry no shared id (core's msg_id is not given to the judge), so a
//! list answer is tied to a list request only while exactly one is pending, and a get answer
//! by the tool it names.

use super::common::{digest, lower_hex, show, trackable, Digest, PerSide, Queue, Table};
use super::config::Ctx;
use super::verdict::{decode, Level, Rule, Side, Violation};
use crate::p1::pb::types::tooldisc::{
    ToolDescriptor, TooldiscErr, TooldiscGetReq, TooldiscGetResp, TooldiscListReq, TooldiscListResp,
};
use std::collections::BTreeSet;

/// The profile_id of SWP-TOOLDISC.
pub(super) const PROFILE_ID: u64 = 11;

/// Walks (cursor chains) remembered per connection.
const MAX_WALKS: usize = 16;
/// Tools remembered per walk.
const MAX_WALK_TOOLS: usize = 1024;

const MSG_TYPE: Rule = Rule {
    name: "tooldisc.msg-type-assigned",
    profile: "TOOLDISC",
    requirement: "TOOLDISC-012",
    level: Level::Must,
    section: "§3, §6",
    checks: "msg_type is 1 LIST_REQ, 2 LIST_RESP, 3 GET_REQ, 4 GET_RESP or 5 ERR",
};
const DESC_TOOL_ID: Rule = Rule {
    name: "tooldisc.descriptor-tool-id",
    profile: "TOOLDISC",
    requirement: "TOOLDISC-002",
    level: Level::Must,
    section: "§4",
    checks: "every descriptor carries a non-empty tool_id",
};
const DESC_NAME: Rule = Rule {
    name: "tooldisc.descriptor-name",
    profile: "TOOLDISC",
    requirement: "TOOLDISC-003",
    level: Level::Must,
    section: "§4",
    checks: "every descriptor carries a non-empty name",
};
const DESC_VERSION: Rule = Rule {
    name: "tooldisc.descriptor-version",
    profile: "TOOLDISC",
    requirement: "TOOLDISC-004",
    level: Level::Must,
    section: "§4",
    checks: "every descriptor carries a non-empty version",
};
const DESC_SCHEMA_REF: Rule = Rule {
    name: "tooldisc.descriptor-schema-ref",
    profile: "TOOLDISC",
    requirement: "TOOLDISC-005",
    level: Level::Must,
    section: "§4",
    checks: "every descriptor carries a non-empty schema_ref",
};
const SCHEMA_REF_RESOLVABLE: Rule = Rule {
    name: "tooldisc.schema-ref-resolvable",
    profile: "TOOLDISC",
    requirement: "TOOLDISC-007",
    level: Level::Must,
    section: "§4 (SI: by form)",
    checks: "schema_ref is an absolute URI or sha256:/sha384:/sha512: plus that digest in lower-case hex",
};
const GET_RESP_HAS_TOOL: Rule = Rule {
    name: "tooldisc.get-resp-has-tool",
    profile: "TOOLDISC",
    requirement: "TOOLDISC-010",
    level: Level::Must,
    section: "§4, §6",
    checks: "a TOOLDISC_GET_RESP carries its descriptor",
};
const GET_NAMES_TOOL: Rule = Rule {
    name: "tooldisc.get-names-tool",
    profile: "TOOLDISC",
    requirement: "TOOLDISC-009",
    level: Level::Must,
    section: "§5",
    checks: "a TOOLDISC_GET_REQ names a non-empty tool_id",
};
const DESCRIPTOR_STABLE: Rule = Rule {
    name: "tooldisc.descriptor-stable",
    profile: "TOOLDISC",
    requirement: "TOOLDISC-002",
    level: Level::Must,
    section: "§4 (SI: stable tool_id)",
    checks: "one sender's (tool_id, version) names one descriptor for the whole connection",
};
const GET_ANSWERS_REQUEST: Rule = Rule {
    name: "tooldisc.get-answers-request",
    profile: "TOOLDISC",
    requirement: "TOOLDISC-009",
    level: Level::Must,
    section: "§5",
    checks: "a GET_RESP gives the tool and version selected by the peer's pending GET_REQ",
};
const DEFAULT_VERSION_STABLE: Rule = Rule {
    name: "tooldisc.default-version-stable",
    profile: "TOOLDISC",
    requirement: "TOOLDISC-009",
    level: Level::Must,
    section: "§5 (SI: default version)",
    checks: "a get without version selector is answered with the same version every time",
};
const PAGE_SIZE: Rule = Rule {
    name: "tooldisc.page-size",
    profile: "TOOLDISC",
    requirement: "TOOLDISC-008",
    level: Level::Should,
    section: "§5 (SI: paging)",
    checks: "a LIST_RESP holds at most the page_size its request asked for (0: any)",
};
const WALK_NO_REPEAT: Rule = Rule {
    name: "tooldisc.walk-no-repeat",
    profile: "TOOLDISC",
    requirement: "TOOLDISC-008",
    level: Level::Should,
    section: "§5 (SI: paging)",
    checks: "a walk by page_token sees no (tool_id, version) twice",
};

/// Every SWP-TOOLDISC rule.
pub(super) const RULES: &[&Rule] = &[
    &MSG_TYPE,
    &DESC_TOOL_ID,
    &DESC_NAME,
    &DESC_VERSION,
    &DESC_SCHEMA_REF,
    &SCHEMA_REF_RESOLVABLE,
    &GET_RESP_HAS_TOOL,
    &GET_NAMES_TOOL,
    &DESCRIPTOR_STABLE,
    &GET_ANSWERS_REQUEST,
    &DEFAULT_VERSION_STABLE,
    &PAGE_SIZE,
    &WALK_NO_REPEAT,
];

/// A decoded SWP-TOOLDISC message whose own fields hold.
pub(super) enum Msg {
    ListReq(TooldiscListReq),
    ListResp(TooldiscListResp),
    GetReq(TooldiscGetReq),
    GetResp(ToolDescriptor),
    Err,
}

/// Decodes by msg_type and checks the class's required fields.
pub(super) fn check(msg_type: u64, bare: &[u8]) -> Result<Msg, Violation> {
    match msg_type {
        1 => Ok(Msg::ListReq(decode(bare, "tooldisc.TooldiscListReq")?)),
        2 => {
            let m: TooldiscListResp = decode(bare, "tooldisc.TooldiscListResp")?;
            for t in &m.tools {
                check_descriptor(t)?;
            }
            Ok(Msg::ListResp(m))
        }
        3 => {
            let m: TooldiscGetReq = decode(bare, "tooldisc.TooldiscGetReq")?;
            if m.tool_id.is_empty() {
                return Err(GET_NAMES_TOOL.violation("TOOLDISC_GET_REQ without tool_id"));
            }
            Ok(Msg::GetReq(m))
        }
        4 => {
            let m: TooldiscGetResp = decode(bare, "tooldisc.TooldiscGetResp")?;
            let tool = m
                .tool
                .ok_or_else(|| GET_RESP_HAS_TOOL.violation("TOOLDISC_GET_RESP without tool"))?;
            check_descriptor(&tool)?;
            Ok(Msg::GetResp(tool))
        }
        5 => {
            let _: TooldiscErr = decode(bare, "tooldisc.TooldiscErr")?;
            Ok(Msg::Err)
        }
        t => Err(MSG_TYPE.violation(format!("msg_type {t} is not assigned in SWP-TOOLDISC"))),
    }
}

fn check_descriptor(t: &ToolDescriptor) -> Result<(), Violation> {
    let name = show(t.tool_id.as_bytes());
    if t.tool_id.is_empty() {
        return Err(DESC_TOOL_ID.violation("tool descriptor without tool_id"));
    }
    if t.name.is_empty() {
        return Err(DESC_NAME.violation(format!("tool {name} without name")));
    }
    if t.version.is_empty() {
        return Err(DESC_VERSION.violation(format!("tool {name} without version")));
    }
    if t.schema_ref.is_empty() {
        return Err(DESC_SCHEMA_REF.violation(format!("tool {name} without schema_ref")));
    }
    if !schema_ref_valid(&t.schema_ref) {
        return Err(SCHEMA_REF_RESOLVABLE.violation(format!(
            "tool {name}: schema_ref {} is neither an absolute URI nor a content hash",
            show(t.schema_ref.as_bytes())
        )));
    }
    Ok(())
}

/// A schema reference resolvable by its form (SI): a content hash `sha256:`, `sha384:` or
/// `sha512:` with exactly that digest's length in lower-case hex, or an absolute URI (an RFC
/// 3986 scheme, `:`, a non-empty rest without white space or control characters).
fn schema_ref_valid(s: &str) -> bool {
    for (prefix, hex_len) in [("sha256:", 64), ("sha384:", 96), ("sha512:", 128)] {
        if let Some(rest) = s.strip_prefix(prefix) {
            return rest.len() == hex_len && lower_hex(rest.as_bytes());
        }
    }
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    let scheme_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    scheme_ok && !rest.is_empty() && !rest.chars().any(|c| c.is_whitespace() || c.is_control())
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct PendingList {
    page_size: u32,
    page_token: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct PendingGet {
    tool_id: String,
    version: String,
}

/// Pending requests per asker, descriptors per sender, and cursor walks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct State {
    lists: PerSide<Queue<PendingList>>,
    gets: PerSide<Queue<PendingGet>>,
    /// An error answered one of several pending requests: which one is unknown, so answers
    /// are not tied to requests until the asker's queues drain.
    ambiguous: PerSide<bool>,
    descriptors: Table<(Side, String, String), Digest>,
    defaults: Table<(Side, String), String>,
    /// The tools seen so far by the walk a (sender, next_page_token) continues.
    walks: Table<(Side, String), BTreeSet<Digest>>,
}

impl Default for State {
    fn default() -> Self {
        State {
            lists: PerSide::default(),
            gets: PerSide::default(),
            ambiguous: PerSide::default(),
            descriptors: Table::default(),
            defaults: Table::default(),
            walks: Table::with_cap(MAX_WALKS),
        }
    }
}

fn tool_key(t: &ToolDescriptor) -> Digest {
    digest(&[t.tool_id.as_bytes(), t.version.as_bytes()])
}

fn tool_content(t: &ToolDescriptor) -> Digest {
    digest(&[
        t.name.as_bytes(),
        t.schema_ref.as_bytes(),
        &t.descriptor_payload,
    ])
}

impl State {
    /// Judges `msg` from `ctx.side`, then records it.
    pub(super) fn observe(&mut self, ctx: &Ctx, msg: Msg) -> Result<(), Violation> {
        let side = ctx.side;
        match msg {
            Msg::ListReq(r) => {
                if trackable(r.page_token.as_bytes()) {
                    self.lists.get_mut(side).push(PendingList {
                        page_size: r.page_size,
                        page_token: r.page_token,
                    });
                } else {
                    self.lists.get_mut(side).mark_lost();
                }
                Ok(())
            }
            Msg::ListResp(page) => self.list_resp(side, page),
            Msg::GetReq(g) => {
                if trackable(g.tool_id.as_bytes()) && trackable(g.version.as_bytes()) {
                    self.gets.get_mut(side).push(PendingGet {
                        tool_id: g.tool_id,
                        version: g.version,
                    });
                } else {
                    self.gets.get_mut(side).mark_lost();
                }
                Ok(())
            }
            Msg::GetResp(tool) => self.get_resp(side, tool),
            Msg::Err => {
                let asker = side.other();
                let (lists, gets) = (self.lists.get(asker).len(), self.gets.get(asker).len());
                match (lists, gets) {
                    (1, 0) => {
                        self.lists.get_mut(asker).pop_front();
                    }
                    (0, 1) => {
                        self.gets.get_mut(asker).pop_front();
                    }
                    (0, 0) => {}
                    _ => *self.ambiguous.get_mut(asker) = true,
                }
                self.settle(asker);
                Ok(())
            }
        }
    }

    /// Clears the ambiguity once every request of `asker` is answered.
    fn settle(&mut self, asker: Side) {
        if self.lists.get(asker).is_empty() && self.gets.get(asker).is_empty() {
            *self.ambiguous.get_mut(asker) = false;
        }
    }

    /// The descriptors of one message must agree with what the sender said before.
    fn check_stable(&self, side: Side, tools: &[ToolDescriptor]) -> Result<(), Violation> {
        let mut overlay: Vec<(Digest, Digest)> = Vec::new();
        for t in tools {
            let (k, c) = (tool_key(t), tool_content(t));
            let key = (side, t.tool_id.clone(), t.version.clone());
            let earlier = self
                .descriptors
                .get(&key)
                .copied()
                .or_else(|| overlay.iter().find(|(ok, _)| *ok == k).map(|(_, oc)| *oc));
            if earlier.is_some_and(|e| e != c) {
                return Err(DESCRIPTOR_STABLE.violation(format!(
                    "tool {} version {} changed its descriptor",
                    show(t.tool_id.as_bytes()),
                    show(t.version.as_bytes())
                )));
            }
            overlay.push((k, c));
        }
        Ok(())
    }

    fn record(&mut self, side: Side, tools: &[ToolDescriptor]) {
        for t in tools {
            if trackable(t.tool_id.as_bytes()) && trackable(t.version.as_bytes()) {
                let key = (side, t.tool_id.clone(), t.version.clone());
                self.descriptors.insert(key, tool_content(t));
            }
        }
    }

    fn list_resp(&mut self, side: Side, page: TooldiscListResp) -> Result<(), Violation> {
        self.check_stable(side, &page.tools)?;
        let asker = side.other();
        let q = self.lists.get(asker);
        let judged = q.len() == 1 && !q.overflowed() && !*self.ambiguous.get(asker);
        let mut next_walk: Option<BTreeSet<Digest>> = None;
        if let (true, Some(req)) = (judged, q.front()) {
            let size = usize::try_from(req.page_size).unwrap_or(usize::MAX);
            if req.page_size > 0 && page.tools.len() > size {
                return Err(PAGE_SIZE.violation(format!(
                    "a page of {} tools answers page_size {}",
                    page.tools.len(),
                    req.page_size
                )));
            }
            // A first page starts a walk; a continuation extends the walk its token names.
            let seen = if req.page_token.is_empty() {
                Some(BTreeSet::new())
            } else {
                self.walks.get(&(side, req.page_token.clone())).cloned()
            };
            if let Some(mut seen) = seen {
                for t in &page.tools {
                    if !seen.insert(tool_key(t)) {
                        return Err(WALK_NO_REPEAT.violation(format!(
                            "tool {} version {} seen twice in one walk",
                            show(t.tool_id.as_bytes()),
                            show(t.version.as_bytes())
                        )));
                    }
                }
                if seen.len() <= MAX_WALK_TOOLS {
                    next_walk = Some(seen);
                }
            }
        }
        self.record(side, &page.tools);
        if !self.lists.get(asker).is_empty() {
            if !judged {
                // Several pending: which one this answers is unknown.
                *self.ambiguous.get_mut(asker) = true;
            }
            self.lists.get_mut(asker).pop_front();
        }
        if let Some(seen) = next_walk {
            if !page.next_page_token.is_empty() && trackable(page.next_page_token.as_bytes()) {
                self.walks.insert((side, page.next_page_token), seen);
            }
        }
        self.settle(asker);
        Ok(())
    }

    fn get_resp(&mut self, side: Side, tool: ToolDescriptor) -> Result<(), Violation> {
        self.check_stable(side, std::slice::from_ref(&tool))?;
        let asker = side.other();
        let q = self.gets.get(asker);
        // A request naming this very version first, then one without a selector: so that
        // answers in another order than their requests are not misattributed.
        let matched = q
            .position(|g| g.tool_id == tool.tool_id && g.version == tool.version)
            .or_else(|| q.position(|g| g.tool_id == tool.tool_id && g.version.is_empty()));
        let mut default_for: Option<String> = None;
        match matched {
            Some(at) => {
                if let Some(req) = self.pending_get(asker, at) {
                    if req.version.is_empty() {
                        let key = (side, tool.tool_id.clone());
                        if let Some(prev) = self.defaults.get(&key) {
                            if *prev != tool.version {
                                return Err(DEFAULT_VERSION_STABLE.violation(format!(
                                    "tool {} without selector answered with version {} after {}",
                                    show(tool.tool_id.as_bytes()),
                                    show(tool.version.as_bytes()),
                                    show(prev.as_bytes())
                                )));
                            }
                        }
                        default_for = Some(tool.tool_id.clone());
                    }
                }
                self.gets.get_mut(asker).remove(at);
            }
            None => {
                let asked_this_tool = q.position(|g| g.tool_id == tool.tool_id).is_some();
                let only_one = q.len() == 1 && !q.overflowed() && !*self.ambiguous.get(asker);
                if asked_this_tool || only_one {
                    return Err(GET_ANSWERS_REQUEST.violation(format!(
                        "GET_RESP with tool {} version {} answers no pending GET_REQ",
                        show(tool.tool_id.as_bytes()),
                        show(tool.version.as_bytes())
                    )));
                }
                // Nothing asked for it: an unsolicited descriptor, which no rule forbids.
            }
        }
        self.record(side, std::slice::from_ref(&tool));
        if let Some(id) = default_for {
            if trackable(id.as_bytes()) && trackable(tool.version.as_bytes()) {
                self.defaults.insert((side, id), tool.version);
            }
        }
        self.settle(asker);
        Ok(())
    }

    /// The pending GET of `asker` at position `at`.
    fn pending_get(&self, asker: Side, at: usize) -> Option<&PendingGet> {
        self.gets.get(asker).iter().nth(at)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{enc, sequence_property, Run, Step};
    use super::super::{Config, Side::*};
    use super::*;
    use proptest::prelude::*;

    fn tool(id: &str, version: &str, name: &str) -> ToolDescriptor {
        ToolDescriptor {
            tool_id: id.into(),
            name: name.into(),
            version: version.into(),
            schema_ref: "https://example.test/schema.json".into(),
            descriptor_payload: Default::default(),
        }
    }
    fn list_req(size: u32, token: &str) -> TooldiscListReq {
        TooldiscListReq {
            page_size: size,
            page_token: token.into(),
            filter: String::new(),
        }
    }
    fn page(tools: Vec<ToolDescriptor>, next: &str) -> TooldiscListResp {
        TooldiscListResp {
            tools,
            next_page_token: next.into(),
        }
    }
    fn get_req(id: &str, version: &str) -> TooldiscGetReq {
        TooldiscGetReq {
            tool_id: id.into(),
            version: version.into(),
        }
    }
    fn get_resp(t: ToolDescriptor) -> TooldiscGetResp {
        TooldiscGetResp { tool: Some(t) }
    }

    #[test]
    fn msg_type_must_be_assigned() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Endpoint, 6, &list_req(0, ""), "tooldisc.msg-type-assigned");
        r.ok(Endpoint, 1, &list_req(0, ""));
    }

    #[test]
    fn descriptors_carry_their_required_fields() {
        let mut r = Run::new(PROFILE_ID);
        let cases = [
            (tool("", "1", "n"), "tooldisc.descriptor-tool-id"),
            (tool("t", "1", ""), "tooldisc.descriptor-name"),
            (tool("t", "", "n"), "tooldisc.descriptor-version"),
        ];
        for (t, rule) in cases {
            r.err(Endpoint, 2, &page(vec![t.clone()], ""), rule);
            r.err(Endpoint, 4, &get_resp(t), rule);
        }
        let mut t = tool("t", "1", "n");
        t.schema_ref.clear();
        r.err(Endpoint, 4, &get_resp(t), "tooldisc.descriptor-schema-ref");
        r.ok(Endpoint, 2, &page(vec![tool("t", "1", "n")], ""));
    }

    #[test]
    fn schema_refs_are_uris_or_content_hashes() {
        for good in [
            "https://x.test/s.json",
            "urn:example:tool",
            "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            assert!(schema_ref_valid(good), "{good}");
        }
        for bad in [
            "schema.json",
            "./s.json",
            ":x",
            "1http://x",
            "http:",
            "http://a b",
            "sha256:abc",
            "sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            assert!(!schema_ref_valid(bad), "{bad}");
        }
        let mut r = Run::new(PROFILE_ID);
        let mut t = tool("t", "1", "n");
        t.schema_ref = "schema.json".into();
        r.err(Endpoint, 4, &get_resp(t), "tooldisc.schema-ref-resolvable");
    }

    #[test]
    fn a_get_resp_carries_its_tool_and_a_get_names_one() {
        let mut r = Run::new(PROFILE_ID);
        r.err(
            Endpoint,
            4,
            &TooldiscGetResp { tool: None },
            "tooldisc.get-resp-has-tool",
        );
        r.err(Harness, 3, &get_req("", "1"), "tooldisc.get-names-tool");
        r.ok(Harness, 3, &get_req("t", "1"));
        r.ok(Endpoint, 4, &get_resp(tool("t", "1", "n")));
    }

    #[test]
    fn a_tool_version_names_one_descriptor() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Endpoint, 2, &page(vec![tool("t", "1", "n")], ""));
        r.err(
            Endpoint,
            4,
            &get_resp(tool("t", "1", "other")),
            "tooldisc.descriptor-stable",
        );
        r.err(
            Endpoint,
            2,
            &page(vec![tool("u", "1", "a"), tool("u", "1", "b")], ""),
            "tooldisc.descriptor-stable",
        );
        r.ok(Endpoint, 4, &get_resp(tool("t", "2", "other")));
        r.ok(Harness, 4, &get_resp(tool("t", "1", "other")));
    }

    #[test]
    fn a_get_is_answered_by_its_tool_and_version() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 3, &get_req("t", "2"));
        r.err(
            Endpoint,
            4,
            &get_resp(tool("t", "1", "n")),
            "tooldisc.get-answers-request",
        );
        r.err(
            Endpoint,
            4,
            &get_resp(tool("u", "2", "n")),
            "tooldisc.get-answers-request",
        );
        r.ok(Endpoint, 4, &get_resp(tool("t", "2", "n")));
        // Nothing pending: an unsolicited descriptor is taken.
        r.ok(Endpoint, 4, &get_resp(tool("u", "2", "n")));
    }

    #[test]
    fn answers_in_another_order_than_their_requests_are_matched_by_version() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 3, &get_req("t", ""));
        r.ok(Harness, 3, &get_req("t", "2"));
        r.ok(Endpoint, 4, &get_resp(tool("t", "2", "n")));
        r.ok(Endpoint, 4, &get_resp(tool("t", "1", "n")));
        // The default was 1.
        r.ok(Harness, 3, &get_req("t", ""));
        r.err(
            Endpoint,
            4,
            &get_resp(tool("t", "2", "n")),
            "tooldisc.default-version-stable",
        );
    }

    #[test]
    fn the_default_version_is_the_same_every_time() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 3, &get_req("t", ""));
        r.ok(Endpoint, 4, &get_resp(tool("t", "2", "n")));
        r.ok(Harness, 3, &get_req("t", ""));
        r.err(
            Endpoint,
            4,
            &get_resp(tool("t", "1", "n")),
            "tooldisc.default-version-stable",
        );
        r.ok(Endpoint, 4, &get_resp(tool("t", "2", "n")));
        // With a selector, another version is fine.
        r.ok(Harness, 3, &get_req("t", "1"));
        r.ok(Endpoint, 4, &get_resp(tool("t", "1", "n")));
    }

    #[test]
    fn a_page_holds_at_most_page_size_tools() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &list_req(1, ""));
        let two = page(vec![tool("a", "1", "n"), tool("b", "1", "n")], "");
        r.err(Endpoint, 2, &two, "tooldisc.page-size");
        r.ok(Endpoint, 2, &page(vec![tool("a", "1", "n")], "c1"));
        r.ok(Harness, 1, &list_req(0, ""));
        r.ok(Endpoint, 2, &two);
    }

    #[test]
    fn a_walk_sees_no_tool_twice() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &list_req(1, ""));
        r.ok(Endpoint, 2, &page(vec![tool("a", "1", "n")], "c1"));
        r.ok(Harness, 1, &list_req(1, "c1"));
        r.err(
            Endpoint,
            2,
            &page(vec![tool("a", "1", "n")], "c2"),
            "tooldisc.walk-no-repeat",
        );
        r.ok(Endpoint, 2, &page(vec![tool("b", "1", "n")], "c2"));
        r.ok(Harness, 1, &list_req(1, "c2"));
        r.err(
            Endpoint,
            2,
            &page(vec![tool("b", "1", "n")], ""),
            "tooldisc.walk-no-repeat",
        );
        r.ok(Endpoint, 2, &page(vec![tool("c", "1", "n")], ""));
        // The same first page again starts a new walk.
        r.ok(Harness, 1, &list_req(1, ""));
        r.ok(Endpoint, 2, &page(vec![tool("a", "1", "n")], "c1"));
    }

    #[test]
    fn with_several_requests_pending_lists_are_not_tied() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &list_req(5, ""));
        r.ok(Harness, 1, &list_req(1, ""));
        r.ok(Endpoint, 2, &page(vec![tool("a", "1", "n")], ""));
        // Which request is left is unknown: not judged.
        let two = page(vec![tool("a", "1", "n"), tool("b", "1", "n")], "");
        r.ok(Endpoint, 2, &two);
        // Drained: judged again.
        r.ok(Harness, 1, &list_req(1, ""));
        r.err(Endpoint, 2, &two, "tooldisc.page-size");
    }

    fn step() -> impl Strategy<Value = Step> {
        let id = prop::sample::select(vec!["a", "b", ""]);
        let ver = prop::sample::select(vec!["1", "2", ""]);
        let name = prop::sample::select(vec!["n", "m"]);
        let token = prop::sample::select(vec!["", "c1", "c2"]);
        let side = prop::sample::select(vec![Harness, Endpoint]);
        let t = (id.clone(), ver.clone(), name).prop_map(|(i, v, n)| tool(i, v, n));
        let msg = prop_oneof![
            (0u32..3, token.clone()).prop_map(|(s, t)| (1u64, enc(&list_req(s, t)))),
            (prop::collection::vec(t.clone(), 0..3), token)
                .prop_map(|(ts, n)| (2u64, enc(&page(ts, n)))),
            (id, ver).prop_map(|(i, v)| (3u64, enc(&get_req(i, v)))),
            t.prop_map(|t| (4u64, enc(&get_resp(t)))),
            Just((5u64, enc(&TooldiscErr::default()))),
            (0u64..7, prop::collection::vec(any::<u8>(), 0..16)),
        ];
        (0u64..100, side, msg).prop_map(|(t, s, (mt, b))| (t, s, mt, b))
    }

    proptest! {
        #[test]
        fn sequences_keep_the_state_on_refusal(steps in prop::collection::vec(step(), 0..40)) {
            sequence_property(PROFILE_ID, &Config::default(), &steps);
        }
    }
}
