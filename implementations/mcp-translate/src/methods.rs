//! The method table: every MCP method of every known version, whether it is a request or a
//! notification, who may send it, and the version that introduced it.

use crate::version::Version::{self, V2024_11_05 as V24, V2025_06_18 as V06, V2025_11_25 as V11};

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
}

const fn m(name: &'static str, request: bool, sender: Sender, since: Version) -> MethodInfo {
    MethodInfo {
        name,
        request,
        sender,
        since,
    }
}

use Sender::{Both, Client, Server};

/// Every method. `notifications/resources/updated` is in 2024-11-05 (errata 2).
pub(crate) const METHODS: &[MethodInfo] = &[
    m("initialize", true, Client, V24),
    m("ping", true, Both, V24),
    m("resources/list", true, Client, V24),
    m("resources/templates/list", true, Client, V24),
    m("resources/read", true, Client, V24),
    m("resources/subscribe", true, Client, V24),
    m("resources/unsubscribe", true, Client, V24),
    m("prompts/list", true, Client, V24),
    m("prompts/get", true, Client, V24),
    m("tools/list", true, Client, V24),
    m("tools/call", true, Client, V24),
    m("logging/setLevel", true, Client, V24),
    m("completion/complete", true, Client, V24),
    m("sampling/createMessage", true, Server, V24),
    m("roots/list", true, Server, V24),
    m("elicitation/create", true, Server, V06),
    m("tasks/get", true, Both, V11),
    m("tasks/result", true, Both, V11),
    m("tasks/list", true, Both, V11),
    m("tasks/cancel", true, Both, V11),
    m("notifications/cancelled", false, Both, V24),
    m("notifications/progress", false, Both, V24),
    m("notifications/initialized", false, Client, V24),
    m("notifications/roots/list_changed", false, Client, V24),
    m("notifications/message", false, Server, V24),
    m("notifications/resources/updated", false, Server, V24),
    m("notifications/resources/list_changed", false, Server, V24),
    m("notifications/tools/list_changed", false, Server, V24),
    m("notifications/prompts/list_changed", false, Server, V24),
    m("notifications/elicitation/complete", false, Server, V11),
    m("notifications/tasks/status", false, Both, V11),
];

/// The table entry of `name`.
pub(crate) fn lookup(name: &str) -> Option<&'static MethodInfo> {
    METHODS.iter().find(|x| x.name == name)
}
