//! The vector-file types of the `mcp_native` method's session steps (`vectors/mcpnative/`):
//! what a vector needs of the server (capabilities, negotiated versions, transport), the
//! steps that open a session, send requests and pick the server's own tools, resources and
//! prompts, and what must be observed. The engine is `method::mcpnative`.

use super::mcpx::McpVersion;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What an `mcp_native` vector needs (vector-level `mcp:`). Each condition is decided from
/// the server's own answer to the opening step, so a vector the server cannot take is not
/// applicable with the reason, never a failure.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpVectorSpec {
    /// Server capabilities the vector exercises, as dotted paths into the capabilities the
    /// server declared (`tools`, `resources`, `resources.subscribe`, `prompts`, `logging`,
    /// `completions`, `tools.listChanged`). A boolean must be `true`; an object must be
    /// present.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
    /// The negotiated protocol versions the vector applies to (default: every version).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<McpVersion>,
    /// The transport the vector applies to (default: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<McpWire>,
    /// The capabilities the harness declares as the client (default `{}`): a server request
    /// needing one the client did not declare fails the run (MCPN-022).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_capabilities: Option<serde_json::Value>,
    /// The vector needs a session of its own, and leaves its session to no other vector:
    /// it changes what the server does for the rest of the session (a log level, a
    /// subscription). Without it, a vector that opens a plain session and sends only
    /// requests and notifications may run on a session an earlier vector opened
    /// (`docs/mcp-native.md`, "Shared sessions").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fresh: bool,
    /// The vector tests what a server knows of a client's session (that it initialised).
    /// MCP makes sessions optional over Streamable HTTP: there, the harness first opens a
    /// session of its own to learn whether the server assigns an `Mcp-Session-Id`, and a
    /// server that does not is out of the vector's scope by its own choice. Over stdio the
    /// connection is the session, and the flag changes nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sessions: bool,
}

/// A transport a vector can be limited to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpWire {
    /// Newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// MCP Streamable HTTP.
    Http,
}

impl McpWire {
    /// As written in vectors and manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            McpWire::Stdio => "stdio",
            McpWire::Http => "http",
        }
    }
}

/// One action of an `mcp_native` step (`mcp:`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum McpStep {
    /// Opens the session at the manifest's protocol version: `initialize` and
    /// `notifications/initialized` for the session versions, `server/discover` for
    /// 2026-07-28. A counter-offer of another version the harness knows is accepted, and
    /// the session goes on in it; every later message is judged by that version's schema.
    Open(OpenSpec),
    /// Sends a request with the next id (bound as `${REQUEST_ID}`) and, unless `wait:
    /// false`, waits for its response (`step_ms`). On 2026-07-28 its `params._meta` carries the protocol version, the
    /// client capabilities and the client info.
    Request(RequestSpec),
    /// Sends a notification.
    Notify(NotifySpec),
    /// Sends this text as one message, as is (malformed JSON, a request without
    /// `jsonrpc`). `${NAME}` is filled. Expectations take the response carrying the line's
    /// id, or, when the server cannot read one, the next response without an id.
    Line(String),
    /// Lists the server's things and picks one the vector can use, binding `${NAME}`s for
    /// later steps; not applicable when the server lists none.
    Pick(Pick),
    /// Follows `nextCursor` through every page of a list method.
    Walk(WalkSpec),
    /// One HTTP exchange written by hand (Streamable HTTP only). A `DELETE` the server
    /// refuses with 405, or a session header the server never assigned, makes the vector
    /// not applicable (both are the server's choice).
    Http(HttpSpec),
    /// Closes the server's stdin (stdio only): the end of the session.
    CloseStdin,
    /// Calls every tool the harness may call (the manifest's `mcp_native.tools` without
    /// effects, then the tools annotated read-only and closed-world), at most `max`, each
    /// with its arguments; the step's expectations judge every result. Not applicable when
    /// there is none.
    CallTools(CallToolsSpec),
    /// Waits for the response to every request sent with `wait: false` that is not yet
    /// answered (`step_ms` for them all).
    Await,
    /// SSE resumability (Streamable HTTP only): POSTs a request, drops the connection
    /// after the first SSE event carrying an id, resumes with a `GET` carrying that id as
    /// `Last-Event-ID`, and checks that the response arrives exactly once in all (before
    /// the cut or on the resumed stream). A JSON answer, an SSE stream without ids, or a
    /// `GET` refused make the vector not applicable (the server's choice); so does a
    /// resumed stream that replays nothing (docs/spec-issues.md SI-046).
    Resume(ResumeSpec),
}

/// The `call_tools` step.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallToolsSpec {
    /// Tools called at most (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
}

/// How a session is opened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenSpec {
    /// The version to ask for instead of the manifest's (for negotiation vectors). The
    /// session then continues in the server's counter-offer when the harness knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Send `notifications/initialized` after the result (default true).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub initialized: bool,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// A request the harness sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestSpec {
    /// The method.
    pub method: String,
    /// Its params (`${NAME}` filled; a string that is exactly `${NAME}` takes the bound
    /// JSON value). Omitted: no `params` on session versions, `{}` on 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Value>,
    /// Wait for the response (default true). `false` leaves it pending: it may arrive
    /// during a later step.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub wait: bool,
    /// On 2026-07-28: the protocol version written into `params._meta` (default the
    /// negotiated one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Attach a fresh progress token (`params._meta.progressToken`), bound as
    /// `${PROGRESS_TOKEN}`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub progress: bool,
}

/// A notification the harness sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotifySpec {
    /// The method.
    pub method: String,
    /// Its params (`${NAME}` filled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Value>,
}

/// What a `pick` step looks for among the server's own things.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pick {
    /// A tool the harness may call: annotated `readOnlyHint: true` and `openWorldHint:
    /// false`, not requiring task execution, whose `inputSchema` the harness can satisfy.
    /// One with an `outputSchema` is preferred. Binds `TOOL`, `TOOL_ARGS` (generated from
    /// its `inputSchema`), and `TOOL_BAD_ARGS` when arguments breaking the schema exist.
    Tool,
    /// Like `tool`, among tools whose `inputSchema` can be broken (`TOOL_BAD_ARGS`).
    ToolWithArguments,
    /// The first listed resource: binds `RESOURCE_URI`.
    Resource,
    /// Reads up to five listed resources and picks one that came back as a blob: binds
    /// `BLOB_URI`.
    BlobResource,
    /// A listed prompt (one without required arguments preferred): binds `PROMPT` and
    /// `PROMPT_ARGS` (a string for every required argument).
    Prompt,
    /// A listed prompt with a required argument: binds `PROMPT`, `PROMPT_ARGS` and
    /// `PROMPT_ARGS_MISSING` (every required argument but one).
    PromptWithRequiredArgument,
    /// Something `completion/complete` can complete: a prompt argument, else a resource
    /// template variable. Binds `COMPLETE_REF` and `COMPLETE_ARGUMENT`.
    CompletionTarget,
    /// A listed tool the manifest declares with `does: [sampling]`: binds `TOOL` and
    /// `TOOL_ARGS`. Not applicable when the manifest declares none.
    SamplingTool,
    /// A listed tool the manifest declares with `does: [elicitation]`.
    ElicitationTool,
    /// A listed tool the manifest declares with `does: [logging]`.
    LoggingTool,
    /// A listed resource template the manifest gives values for (`mcp_native.templates`):
    /// binds `TEMPLATE` and `TEMPLATE_URI`, the template expanded (RFC 6570). Not
    /// applicable when the manifest gives none for a listed template.
    Template,
}

impl Pick {
    /// As written in vectors.
    pub fn as_str(self) -> &'static str {
        match self {
            Pick::Tool => "tool",
            Pick::ToolWithArguments => "tool_with_arguments",
            Pick::Resource => "resource",
            Pick::BlobResource => "blob_resource",
            Pick::Prompt => "prompt",
            Pick::PromptWithRequiredArgument => "prompt_with_required_argument",
            Pick::CompletionTarget => "completion_target",
            Pick::SamplingTool => "sampling_tool",
            Pick::ElicitationTool => "elicitation_tool",
            Pick::LoggingTool => "logging_tool",
            Pick::Template => "template",
        }
    }
}

/// A pagination walk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WalkSpec {
    /// The list method (`tools/list`, `resources/list`, `resources/templates/list`,
    /// `prompts/list`).
    pub method: String,
    /// Pages followed at most (default 20); a longer list stops there, unjudged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pages: Option<u32>,
}

/// One HTTP exchange written by hand.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpSpec {
    /// `POST` (default), `GET` or `DELETE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The JSON-RPC message posted (`${NAME}` filled); a request's id counts as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<serde_json::Value>,
    /// Which `Mcp-Session-Id` to send: the session's (default), none, or the one the
    /// session had before it was ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionHeader>,
    /// The `MCP-Protocol-Version` header instead of the negotiated version (`""`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// Extra headers (`Origin`, `Host`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// The request whose stream a `resume` step cuts and resumes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeSpec {
    /// The method.
    pub method: String,
    /// Its params (`${NAME}` filled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Value>,
}

/// Which session id an exchange carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionHeader {
    /// The current session's id.
    Current,
    /// No `Mcp-Session-Id` header.
    None,
    /// The id of the session a `DELETE` ended.
    Ended,
}

/// What must be observed after an `mcp_native` step (`expect: {mcp: ...}`). Whatever else
/// is given, every message the server sends is judged against the schema of the negotiated
/// version and the session's rules (`docs/mcp-native.md`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpExpect {
    /// The response is a result containing this (objects by subset, arrays when every
    /// expected element matches some element; `${NAME}` filled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    /// The result is exactly empty (`_meta`, and `resultType` on 2026-07-28, aside).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub empty: bool,
    /// The response is an error, with one of these codes when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<McpErrorSpec>,
    /// The response is an error, or a `tools/call` result with `isError: true`; never a
    /// success.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub error_or_is_error: bool,
    /// A `tools/call` result: when it is not `isError` and the tool has an `outputSchema`,
    /// `structuredContent` is present and valid against it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tool_output: bool,
    /// Every blob in the result's `contents` is valid base64.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub base64_blobs: bool,
    /// An `open` step: the server answered with a version other than the one asked for
    /// (a counter-offer), or on 2026-07-28 with error -32022 naming the supported ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counter_offer: bool,
    /// The HTTP status of this step's exchange is one of these (Streamable HTTP only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http_status: Vec<u16>,
    /// A successful (2xx) HTTP answer to this step's exchange has one of these media types.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http_content_type: Vec<String>,
    /// This step's HTTP exchange was answered without a body.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub http_no_body: bool,
    /// A notification with this method (and params containing `params`) arrived during the
    /// step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notification: Option<NotificationExpect>,
    /// No response at all arrives within this many ms after the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_ms: Option<u64>,
    /// The server process exits with status 0 within this many ms (after `close_stdin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_ms: Option<u64>,
    /// The requirements a failure of this expectation breaks (default: the vector's
    /// own); they decide whether the failure is absolute.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rule: Vec<String>,
    /// The content blocks of the step's tool results are well formed where the schema
    /// cannot say: image and audio `data` and embedded `blob`s decode as base64, and every
    /// `mimeType` is a media type (`type/subtype`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub content: bool,
    /// No `notifications/message` below this level arrived during the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_floor: Option<String>,
    /// The server sent a request with this method during the step, which the harness
    /// answered as a client that declared the capability. None arriving leaves the vector
    /// `inconclusive`: the manifest said the tool would ask, and nothing was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_request: Option<String>,
    /// Every tool in the `tools/list` result has an `inputSchema` (and `outputSchema`, when
    /// given) valid against its dialect: the one its `$schema` names, JSON Schema 2020-12
    /// when it names none. A dialect the harness does not know is noted, not judged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tool_schemas: bool,
}

/// An expected error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpErrorSpec {
    /// Accepted codes (any code when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub codes: Vec<i64>,
    /// Members `error.data` must carry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_has: Vec<String>,
}

/// An expected notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotificationExpect {
    /// Its method.
    pub method: String,
    /// Its params contain this (subset match, `${NAME}` filled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Value>,
}
