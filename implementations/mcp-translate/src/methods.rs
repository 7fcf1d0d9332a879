//! The method table: every MCP method of every known version, whether it is a request or a
//! notification, who may send it, the version that introduced it and the one that removed
//! it.

use crate::version::Version::{
    self, V2024_11_05 as V24, V2025_06_18 as V06, V2025_11_25 as V11, V2026_07_28 as V26,
};

/// Who sends a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sender {
    /// Clients only.
    Client,
    /// Servers only.
    Server,
    /// Either side.
    Both,
}

/// One method.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MethodInfo {
    /// The method name.
    pub name: &'static str,
    /// A request (has an id and a response) rather than a notification.
    pub request: bool,
    /// Who may send it.
    pub sender: Sender,
    /// The first version that defines it.
    pub since: Version,
    /// The first version that no longer defines it as a JSON-RPC message.
    pub until: Option<Version>,
}

impl MethodInfo {
    /// Whether `v` defines this method as a JSON-RPC message.
    pub fn exists_in(&self, v: Version) -> bool {
        self.since <= v && self.until.is_none_or(|u| v < u)
    }

    /// Who sends it in `v`: 2026-07-28 has no server requests, so clients stop sending
    /// progress (there is nothing of theirs to report progress on).
    pub fn sender_in(&self, v: Version) -> Sender {
        if self.name == "notifications/progress" && v >= V26 {
            Sender::Server
        } else {
            self.sender
        }
    }

    /// A server request that 2026-07-28 carries inside an `input_required` result instead
    /// of as a JSON-RPC request (`InputRequest`, schema 2026-07-28 line 537).
    pub fn is_input_request(&self) -> bool {
        INPUT_REQUESTS.contains(&self.name)
    }
}

const fn m(
    name: &'static str,
    request: bool,
    sender: Sender,
    since: Version,
    until: Option<Version>,
) -> MethodInfo {
    MethodInfo {
        name,
        request,
        sender,
        since,
        until,
    }
}

use Sender::{Both, Client, Server};

/// The server requests 2026-07-28 sends as input requests.
pub(crate) const INPUT_REQUESTS: [&str; 3] =
    ["sampling/createMessage", "roots/list", "elicitation/create"];

/// The client requests a 2026-07-28 server may answer with an `input_required` result
/// (`CallToolResultResponse`, `GetPromptResultResponse`, `ReadResourceResultResponse`).
pub(crate) const INPUT_CAPABLE: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

const GONE: Option<Version> = Some(V26);

/// Every method. `notifications/resources/updated` is in 2024-11-05 (errata 2).
pub(crate) const METHODS: &[MethodInfo] = &[
    m("initialize", true, Client, V24, GONE),
    m("ping", true, Both, V24, GONE),
    m("server/discover", true, Client, V26, None),
    m("subscriptions/listen", true, Client, V26, None),
    m("resources/list", true, Client, V24, None),
    m("resources/templates/list", true, Client, V24, None),
    m("resources/read", true, Client, V24, None),
    m("resources/subscribe", true, Client, V24, GONE),
    m("resources/unsubscribe", true, Client, V24, GONE),
    m("prompts/list", true, Client, V24, None),
    m("prompts/get", true, Client, V24, None),
    m("tools/list", true, Client, V24, None),
    m("tools/call", true, Client, V24, None),
    m("logging/setLevel", true, Client, V24, GONE),
    m("completion/complete", true, Client, V24, None),
    m("sampling/createMessage", true, Server, V24, GONE),
    m("roots/list", true, Server, V24, GONE),
    m("elicitation/create", true, Server, V06, GONE),
    m("tasks/get", true, Both, V11, GONE),
    m("tasks/result", true, Both, V11, GONE),
    m("tasks/list", true, Both, V11, GONE),
    m("tasks/cancel", true, Both, V11, GONE),
    m("notifications/cancelled", false, Both, V24, None),
    m("notifications/progress", false, Both, V24, None),
    m("notifications/initialized", false, Client, V24, GONE),
    m("notifications/roots/list_changed", false, Client, V24, GONE),
    m("notifications/message", false, Server, V24, None),
    m("notifications/resources/updated", false, Server, V24, None),
    m(
        "notifications/resources/list_changed",
        false,
        Server,
        V24,
        None,
    ),
    m("notifications/tools/list_changed", false, Server, V24, None),
    m(
        "notifications/prompts/list_changed",
        false,
        Server,
        V24,
        None,
    ),
    m(
        "notifications/elicitation/complete",
        false,
        Server,
        V11,
        GONE,
    ),
    m("notifications/tasks/status", false, Both, V11, GONE),
    m(
        "notifications/subscriptions/acknowledged",
        false,
        Server,
        V26,
        None,
    ),
];

/// The table entry of `name`.
pub(crate) fn lookup(name: &str) -> Option<&'static MethodInfo> {
    METHODS.iter().find(|x| x.name == name)
}
