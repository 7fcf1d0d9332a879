//! The gateway's WebSocket edge: `GET /mcp` upgraded (RFC 6455), one JSON-RPC message per
//! text frame through the shared pipeline, the messages of a call written before its
//! response, the connection held to the server limits.

use super::pipeline::MAX_MESSAGE_BYTES;
use super::serve::{new_owner, refuse, Conn, Got, Serial, Shared};
use super::{http, ws};
use std::sync::Arc;
use tokio::io::AsyncWriteExt;

pub(super) async fn serve_ws(
    shared: Arc<Shared>,
    mut conn: Conn,
    head: http::Head,
    mut buf: Vec<u8>,
) -> std::io::Result<()> {
    let Some(key) = head.header("sec-websocket-key") else {
        return refuse(&mut conn, 400, "Sec-WebSocket-Key is missing").await;
    };
    if head.header("sec-websocket-version") != Some("13") {
        return refuse(&mut conn, 426, "Sec-WebSocket-Version 13 only").await;
    }
    let accept = ws::accept_key(key);
    let resp = http::response(
        101,
        "",
        b"",
        &[
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Accept", &accept),
        ],
    );
    // A 101 carries no body, so no Content-Length either.
    let resp = String::from_utf8_lossy(&resp).replace("Content-Length: 0\r\n", "");
    conn.stream.write_all(resp.as_bytes()).await?;
    let mut decoder = ws::Decoder::new(MAX_MESSAGE_BYTES);
    let mut serial = Serial::new(new_owner());
    let mut since = tokio::time::Instant::now();
    let mut was_idle = true;
    loop {
        match decoder.decode(&mut buf) {
            Ok(Some(ws::Message::Text(text))) => {
                conn.slot.set_idle(false);
                let _ = conn.charge.set(buf.len() + decoder.buffered());
                let outcome = shared
                    .exchange("websocket", "/mcp", text.as_bytes(), &serial.client)
                    .await;
                for msg in serial.drain().into_iter().chain(outcome.body) {
                    conn.send(&ws::encode(ws::opcode::TEXT, &msg)).await?;
                }
                continue;
            }
            Ok(Some(ws::Message::Ping(p))) => {
                conn.send(&ws::encode(ws::opcode::PONG, &p)).await?;
                continue;
            }
            Ok(Some(ws::Message::Pong)) => continue,
            Ok(Some(ws::Message::Close)) => {
                conn.stream
                    .write_all(&ws::close_frame(ws::close::NORMAL, ""))
                    .await?;
                return conn.stream.shutdown().await;
            }
            Ok(None) => {}
            Err(e) => {
                conn.stream
                    .write_all(&ws::close_frame(e.code, e.reason))
                    .await?;
                return conn.stream.shutdown().await;
            }
        }
        // Between messages the connection is idle; once a message has begun, all of it
        // must arrive within the body timeout.
        let idle = buf.is_empty() && decoder.buffered() == 0;
        if idle != was_idle {
            since = tokio::time::Instant::now();
            was_idle = idle;
        }
        conn.slot.set_idle(idle);
        let deadline = conn.deadline(idle, since, conn.limits.body_timeout);
        let (code, reason) = match conn.fill(&mut buf, deadline, decoder.buffered()).await? {
            Got::Data => {
                if idle {
                    since = tokio::time::Instant::now();
                    was_idle = false;
                }
                continue;
            }
            Got::Eof | Got::Evicted => return Ok(()),
            Got::Timeout if idle => (ws::close::GOING_AWAY, "idle timeout"),
            Got::Timeout => (ws::close::POLICY, "message too slow"),
            Got::OverBudget(_) => (ws::close::TRY_AGAIN_LATER, "memory budget spent"),
        };
        conn.stream
            .write_all(&ws::close_frame(code, reason))
            .await?;
        return conn.stream.shutdown().await;
    }
}
