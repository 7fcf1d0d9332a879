//! The testee serving loop: length-prefixed JSON requests on a reader, replies on a writer.
//! Synchronous on purpose: one request at a time is the protocol, and blocking pipes are
//! the fastest way to serve it.

use super::reference;
use serde::Serialize;
use serde_json::value::RawValue;
use std::io::{self, Read, Write};
use swp_testee_proto::{
    read_message, write_message, DecodeRequest, HelloReply, HelloRequest, Reply, Request,
    PROTOCOL_VERSION,
};

/// Operations the reference testee supports.
pub const SUPPORTED_OPS: &[&str] = &[
    "hello",
    "decode",
    "translate",
    "shutdown",
    "validate:1",
    "validate:2",
    "validate:10",
    "validate:11",
    "validate:12",
    "validate:13",
    "validate:14",
    "validate:15",
    "validate:16",
    "validate:17",
    "validate:18",
    "validate:19",
];

fn reply<T: Serialize>(id: u64, r: Result<T, String>) -> Vec<u8> {
    let (ok, error) = match r {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e)),
    };
    serde_json::to_vec(&Reply {
        id,
        ok,
        unsupported: None,
        error,
    })
    .unwrap_or_else(|e| format!(r#"{{"id":{id},"error":"cannot encode reply: {e}"}}"#).into_bytes())
}

fn unsupported(id: u64, why: String) -> Vec<u8> {
    serde_json::to_vec(&Reply::<()> {
        id,
        ok: None,
        unsupported: Some(why),
        error: None,
    })
    .unwrap_or_default()
}

/// Answers one request message. Returns the reply and whether to stop serving.
pub fn answer(msg: &[u8]) -> (Vec<u8>, bool) {
    let header: Request<&RawValue> = match serde_json::from_slice(msg) {
        Ok(h) => h,
        Err(e) => {
            return (
                reply::<()>(0, Err(format!("request is not a testee request: {e}"))),
                false,
            )
        }
    };
    let id = header.id;
    match header.op.as_str() {
        "hello" => {
            let r = serde_json::from_str::<HelloRequest>(header.args.get())
                .map_err(|e| format!("bad hello: {e}"))
                .and_then(|h| {
                    if h.protocol == PROTOCOL_VERSION {
                        Ok(HelloReply {
                            name: "swp-ref".into(),
                            version: env!("CARGO_PKG_VERSION").into(),
                            protocol: PROTOCOL_VERSION,
                            supports: SUPPORTED_OPS.iter().map(|s| s.to_string()).collect(),
                        })
                    } else {
                        Err(format!(
                            "harness speaks protocol {}, this testee speaks {PROTOCOL_VERSION}",
                            h.protocol
                        ))
                    }
                });
            (reply(id, r), false)
        }
        "decode" => {
            let r = serde_json::from_str::<DecodeRequest>(header.args.get())
                .map_err(|e| format!("bad decode request: {e}"))
                .and_then(|req| reference::decode(&req).map_err(|e| e.to_string()));
            (reply(id, r), false)
        }
        "translate" => {
            let r = serde_json::from_str::<swp_testee_proto::TranslateRequest>(header.args.get())
                .map_err(|e| format!("bad translate request: {e}"))
                .and_then(|req| super::translate::translate(&req));
            (reply(id, r), false)
        }
        "shutdown" => (reply(id, Ok(())), true),
        other => (
            unsupported(
                id,
                format!("operation {other:?} is not implemented by swp-ref"),
            ),
            false,
        ),
    }
}

/// Serves requests until end of input or `shutdown`.
pub fn serve(input: &mut impl Read, output: &mut impl Write) -> io::Result<()> {
    while let Some(msg) = read_message(input).map_err(|e| match e {
        swp_testee_proto::ReadError::Io(e) => e,
        other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
    })? {
        let (out, stop) = answer(&msg);
        write_message(output, &out)?;
        if stop {
            break;
        }
    }
    Ok(())
}
