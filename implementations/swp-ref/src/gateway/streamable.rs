//! The gateway's HTTP edge: the MCP Streamable HTTP transport on `/mcp` (POST a message,
//! GET the server's stream, DELETE the session) and the WebSocket upgrade, each request
//! held to the server limits and the origin policy. The decisions are in
//! [`super::session`]; this module owns the sockets and the waiting.
//!
//! A POSTed request is answered with one JSON body, unless something that belongs to it
//! (a progress or log notification, a server-to-client request) arrives from the upstream
//! before its response and the client's `Accept` allows `text/event-stream`: then the
//! answer becomes an SSE stream carrying those messages and, last, the response.

use super::http;
use super::pipeline::MAX_MESSAGE_BYTES;
use super::route::{self, Owner};
use super::serve::{new_owner, refuse, send_plain, Client, Conn, Got, Shared};
use super::session::{self, SessionMode};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How often an idle server stream gets an SSE comment, so proxies and clients keep it.
pub const KEEPALIVE: Duration = Duration::from_secs(15);

pub(super) async fn serve_http(shared: Arc<Shared>, mut conn: Conn) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(8192);
    loop {
        // Waiting for a request: idle (evictable, idle timeout) until its first octet, then
        // the head must be complete within the header timeout.
        let mut since = tokio::time::Instant::now();
        let head = loop {
            match http::parse_head(&buf) {
                Ok(Some(h)) => break h,
                Ok(None) => {}
                Err(e) => return refuse(&mut conn, e.status, &e.reason).await,
            }
            let idle = buf.is_empty();
            conn.slot.set_idle(idle);
            let deadline = conn.deadline(idle, since, conn.limits.header_timeout);
            match conn.fill(&mut buf, deadline, 0).await? {
                Got::Data if idle => since = tokio::time::Instant::now(),
                Got::Data => {}
                Got::Eof | Got::Evicted => return Ok(()),
                Got::Timeout if idle => return Ok(()),
                Got::Timeout => return refuse(&mut conn, 408, "request head too slow").await,
                Got::OverBudget(e) => return refuse(&mut conn, 503, &e.to_string()).await,
            }
        };
        conn.slot.set_idle(false);
        if head.path != "/mcp" {
            // Seed 001 §5: the MCP route is separate; nothing else is served here. A body
            // sent there is never read, so the connection cannot go on: its octets would
            // be taken for the next request (issue 19, D5).
            let close = head.header_has("connection", "close") || head.may_have_body();
            send_plain(&mut conn.stream, 404, "only /mcp is served", close).await?;
            if close {
                return Ok(());
            }
            buf.drain(..head.head_len.min(buf.len()));
            continue;
        }
        if let Err(why) = shared.origins.check(head.headers_named("origin")) {
            return refuse(&mut conn, 403, &why).await;
        }
        if head.method == "GET" && head.header_has("upgrade", "websocket") {
            buf.drain(..head.head_len.min(buf.len()));
            return super::wsconn::serve_ws(shared, conn, head, buf).await;
        }
        if let Err(why) = session::check_version(head.headers_named("mcp-protocol-version")) {
            return refuse(&mut conn, 400, &why).await;
        }
        match head.method.as_str() {
            "POST" => {}
            "GET" => return get_stream(&shared, conn, &head).await,
            "DELETE" => {
                if head.may_have_body() {
                    return refuse(&mut conn, 400, "DELETE carries no body").await;
                }
                buf.drain(..head.head_len.min(buf.len()));
                let (status, text) = end_session(&shared, &head).await;
                let close = head.header_has("connection", "close");
                send_plain(&mut conn.stream, status, text, close).await?;
                if close {
                    return Ok(());
                }
                continue;
            }
            _ => {
                return refuse(
                    &mut conn,
                    405,
                    "POST a JSON-RPC message, GET the server stream, DELETE the session, or \
                     upgrade to WebSocket",
                )
                .await
            }
        }
        let len = match head.content_length(MAX_MESSAGE_BYTES) {
            Ok(n) => n,
            Err(e) => return refuse(&mut conn, e.status, &e.reason).await,
        };
        let body_since = tokio::time::Instant::now();
        while buf.len() < head.head_len + len {
            let deadline = Some(body_since + conn.limits.body_timeout);
            match conn.fill(&mut buf, deadline, 0).await? {
                Got::Data => {}
                Got::Eof | Got::Evicted => return Ok(()),
                Got::Timeout => return refuse(&mut conn, 408, "request body too slow").await,
                Got::OverBudget(e) => return refuse(&mut conn, 503, &e.to_string()).await,
            }
        }
        let body: Vec<u8> = buf[head.head_len..head.head_len + len].to_vec();
        buf.drain(..head.head_len + len);
        let _ = conn.charge.set(buf.len());
        let close = head.header_has("connection", "close");
        post(&shared, &mut conn, &head, &body, close).await?;
        if close {
            return conn.stream.shutdown().await;
        }
    }
}

/// One POSTed message: checked against the session, through the pipeline and upstream,
/// answered with JSON or an SSE stream.
async fn post(
    shared: &Shared,
    conn: &mut Conn,
    head: &http::Head,
    body: &[u8],
    close: bool,
) -> std::io::Result<()> {
    let initialize = session::method_of(body).as_deref() == Some("initialize");
    let header = head.header("mcp-session-id");
    let admitted = shared
        .sessions()
        .admit(shared.session_mode, header, initialize);
    let in_session = match admitted {
        Ok(o) => o,
        Err(e) => return send_plain(&mut conn.stream, e.status(), &e.to_string(), close).await,
    };
    let (owner, version) = in_session.clone().unwrap_or_else(|| (new_owner(), None));
    let sse = session::accepts(head.headers_named("accept"), "text/event-stream");
    // Messages of this call go on its own SSE stream when the client takes one, else on
    // the session's GET stream (if open).
    let (sink, mut rx) = if sse {
        let (s, rx) = route::sink(true);
        (Some(s), Some(rx))
    } else {
        (None, None)
    };
    let client = Client {
        owner,
        sink,
        version,
    };
    let exchange = shared.exchange("http", "/mcp", body, &client);
    tokio::pin!(exchange);
    let mut streaming = false;
    let outcome = loop {
        let next = async {
            match rx.as_mut() {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            outcome = &mut exchange => break outcome,
            Some(msg) = next => {
                if !streaming {
                    conn.send(&sse_head(None, close)).await?;
                    streaming = true;
                }
                conn.send(&session::chunk(&session::sse_event(&msg))).await?;
            }
        }
    };
    // Whatever arrived before the response precedes it.
    let rest: Vec<Vec<u8>> = match rx.as_mut() {
        Some(rx) => std::iter::from_fn(|| rx.try_recv().ok()).collect(),
        None => Vec::new(),
    };
    let mut issued = None;
    if initialize && in_session.is_none() && outcome.status == 200 {
        let agreed = outcome.body.as_deref().and_then(session::agreed_version);
        issued = start_session(shared, owner, agreed).await;
    }
    if streaming || !rest.is_empty() {
        if !streaming {
            conn.send(&sse_head(issued.as_deref(), close)).await?;
        }
        let mut out = Vec::new();
        for msg in rest.iter().chain(outcome.body.as_ref()) {
            out.extend_from_slice(&session::chunk(&session::sse_event(msg)));
        }
        out.extend_from_slice(&session::chunk(b""));
        return conn.send(&out).await;
    }
    let mut extra: Vec<(&str, &str)> = Vec::new();
    if let Some(id) = &issued {
        extra.push(("Mcp-Session-Id", id));
    }
    if close {
        extra.push(("Connection", "close"));
    }
    let resp = http::response(
        outcome.status,
        "application/json",
        outcome.body.as_deref().unwrap_or_default(),
        &extra,
    );
    conn.send(&resp).await
}

/// The head of an SSE answer, its body chunked so the connection can carry more requests.
fn sse_head(session: Option<&str>, close: bool) -> Vec<u8> {
    let mut h = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
         Transfer-Encoding: chunked\r\n",
    );
    if let Some(id) = session {
        h.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
    }
    if close {
        h.push_str("Connection: close\r\n");
    }
    h.push_str("\r\n");
    h.into_bytes()
}

/// Issues a session for `owner` after a successful initialize that agreed to `version`.
async fn start_session(shared: &Shared, owner: Owner, version: Option<String>) -> Option<String> {
    let id = session::new_session_id().ok()?;
    let evicted = shared.sessions().create(id.clone(), owner, version);
    if let Some(old) = evicted {
        shared.upstream.forget(old).await;
    }
    Some(id)
}

/// DELETE: ends the session named by the header.
async fn end_session(shared: &Shared, head: &http::Head) -> (u16, &'static str) {
    let Some(id) = head.header("mcp-session-id") else {
        return (400, "Bad Request: DELETE needs the Mcp-Session-Id header");
    };
    let Some(s) = shared.sessions().remove(id) else {
        return (404, "Not Found: no live session has this Mcp-Session-Id");
    };
    if let Some(end) = &s.stream {
        end.notify_one();
    }
    shared.upstream.forget(s.owner).await;
    (200, "")
}

/// GET: the session's stream for server messages unrelated to a call, open until the
/// session ends, the client leaves or the connection is evicted. The connection is closed
/// afterwards.
async fn get_stream(shared: &Shared, mut conn: Conn, head: &http::Head) -> std::io::Result<()> {
    if head.may_have_body() {
        return refuse(&mut conn, 400, "GET carries no body").await;
    }
    let end = Arc::new(tokio::sync::Notify::new());
    let decided: Result<Owner, (u16, &str)> = match head.header("mcp-session-id") {
        // Without a session there is no stream to give: in optional mode that is the
        // transport's answer for a server that offers none at this point (405).
        None if shared.session_mode == SessionMode::Required => {
            Err((400, "GET /mcp needs the Mcp-Session-Id header"))
        }
        None => Err((405, "GET /mcp needs the Mcp-Session-Id header")),
        Some(_) if !session::accepts(head.headers_named("accept"), "text/event-stream") => {
            Err((406, "GET /mcp serves text/event-stream only"))
        }
        Some(id) => match shared.sessions().get(id) {
            None => Err((404, "Not Found: no live session has this Mcp-Session-Id")),
            Some(s) if s.stream.is_some() => Err((409, "this session's stream is already open")),
            Some(s) => {
                s.stream = Some(end.clone());
                Ok(s.owner)
            }
        },
    };
    let owner = match decided {
        Ok(o) => o,
        Err((status, why)) => return refuse(&mut conn, status, why).await,
    };
    let (sink, mut rx) = route::sink(true);
    shared.upstream.open_stream(owner, sink);
    let result = stream_until_done(&mut conn, &mut rx, &end).await;
    shared.upstream.close_stream(owner);
    if let Some(id) = head.header("mcp-session-id") {
        if let Some(s) = shared.sessions().get(id) {
            s.stream = None;
        }
    }
    result?;
    let _ = conn.send(&session::chunk(b"")).await;
    conn.stream.shutdown().await
}

async fn stream_until_done(
    conn: &mut Conn,
    rx: &mut tokio::sync::mpsc::Receiver<Vec<u8>>,
    end: &tokio::sync::Notify,
) -> std::io::Result<()> {
    conn.send(&sse_head(None, true)).await?;
    let mut scratch = [0u8; 512];
    loop {
        tokio::select! {
            msg = rx.recv() => match msg {
                Some(m) => conn.send(&session::chunk(&session::sse_event(&m))).await?,
                None => return Ok(()),
            },
            () = end.notified() => return Ok(()),
            () = conn.slot.evicted() => return Ok(()),
            // The client sends nothing on this connection; a read ends only when it leaves.
            r = conn.stream.read(&mut scratch) => match r {
                Ok(0) | Err(_) => return Ok(()),
                Ok(_) => {}
            },
            () = tokio::time::sleep(KEEPALIVE) => {
                conn.send(&session::chunk(b": keepalive\n\n")).await?;
            }
        }
    }
}
