//! The actions of a session step: send octets (to the endpoint, or as its upstream peer),
//! half-close, forge or replay a TLS record, and send the manifest's slow request or
//! identity probe.

use super::conv::Conv;
use super::work::{Inputs, StepFailure};
use crate::plan::materialize::{self, Action};
use crate::report::result::{Dir, Verdict};
use crate::support::transcript::transcript_hex;
use bytes::Bytes;

/// What an action put on the wire.
#[derive(Debug, Default)]
pub struct Sent {
    /// The msg_id of the first frame sent to the endpoint, for replies that must reuse it.
    pub msg_id: Option<Bytes>,
    /// The msg_ids of every frame sent, for naming the step a later reject belongs to.
    pub ids: Vec<Bytes>,
    /// The octets sent, for `forwarded` expectations.
    pub octets: Vec<u8>,
    /// Frames went to the endpoint from the client side, so accepts of them can be
    /// confirmed.
    pub to_endpoint: bool,
}

/// The frame `f` (prefix and body) with its msg_id replaced; `None` if it is not one frame.
fn with_msg_id(f: &Bytes, id: Bytes) -> Option<Bytes> {
    let body = f.slice(4.min(f.len())..);
    let mut env = crate::frames::e1::decode(&body, &crate::frames::Limits::unbounded()).ok()?;
    env.msg_id = id;
    crate::frames::e1::frame_bytes(&env).ok()
}

/// A TLS 1.2/1.3 application-data record whose contents cannot authenticate.
fn forged_record() -> Vec<u8> {
    let mut rec = vec![0x17, 0x03, 0x03, 0x00, 0x30];
    rec.extend((0..48u8).map(|x| x.wrapping_mul(37).wrapping_add(11)));
    rec
}

/// Performs one step's action. A failed send is noted, not fatal: what the endpoint did
/// (closing, say) is judged by the step's expectations.
pub fn perform(
    conv: &mut Conv<'_>,
    action: &Action,
    upstream: bool,
    inputs: &mut Inputs<'_>,
    label: &str,
    expected: &str,
) -> Result<Sent, Box<StepFailure>> {
    let harness = |why: String| StepFailure::new(Verdict::HarnessError, why, expected, "");
    let mut sent = Sent::default();
    match action {
        Action::SendAsReply(b) => {
            // The answer reuses the msg_id the intermediary gave the request it forwarded.
            let Some((_, id)) = conv.forwarded.clone() else {
                return Err(harness(
                    "`reply_to_forwarded` needs an earlier `forwarded_payload` step on the upstream side".into(),
                ));
            };
            let Some(b) = with_msg_id(b, id) else {
                return Err(harness(
                    "`reply_to_forwarded` needs a structural frame".into(),
                ));
            };
            conv.log(Dir::Sent, format!("upstream {}", transcript_hex(&b)));
            let Some(u) = conv.upstream.as_mut() else {
                return Err(harness(
                    "an upstream step needs the intermediary topology".into(),
                ));
            };
            if let Err(e) = u.send(&b) {
                conv.note(format!("upstream send failed: {e}"));
            }
            sent.octets = b.to_vec();
        }
        Action::Send(b) if upstream => {
            conv.log(Dir::Sent, format!("upstream {}", transcript_hex(b)));
            let Some(u) = conv.upstream.as_mut() else {
                return Err(harness(
                    "an upstream step needs the intermediary topology".into(),
                ));
            };
            if let Err(e) = u.send(b) {
                conv.note(format!("upstream send failed: {e}"));
            }
            sent.octets = b.to_vec();
        }
        Action::Send(b) => {
            sent.ids = conv.ids_in(b);
            sent.msg_id = sent.ids.first().cloned();
            sent.to_endpoint = true;
            if let Err(e) = conv.send(b) {
                conv.note(format!("send failed: {e}"));
            }
            sent.octets = b.to_vec();
        }
        Action::End => {
            conv.note("half-close (end of stream)");
            if let Err(e) = conv.wire.half_close() {
                conv.note(format!("half-close failed: {e}"));
            }
        }
        Action::CorruptRecord => {
            let rec = forged_record();
            conv.log(
                Dir::Sent,
                format!("forged TLS record {}", hex::encode(&rec)),
            );
            if let Err(e) = conv.wire.send_raw(&rec) {
                conv.note(format!("raw send failed: {e}"));
            }
        }
        Action::SlowRequest(id) => {
            let Some(f) = &conv.spec.slow_request else {
                return Err(harness("no slow request".into()));
            };
            let b = materialize::build_frame(f, inputs.params, Some(id.clone()))
                .map_err(|e| harness(format!("slow request cannot be built: {e}")))?;
            sent.msg_id = Some(id.clone());
            if let Err(e) = conv.send(&b) {
                conv.note(format!("send failed: {e}"));
            }
        }
        Action::ReplayRecord => match conv.wire.replay_last_record() {
            Ok(rec) => conv.log(
                Dir::Sent,
                format!("replayed TLS record {}", transcript_hex(&rec)),
            ),
            Err(e) => return Err(harness(format!("{label}cannot replay a record: {e}"))),
        },
        Action::IdentityProbe => {
            let Some(ip) = inputs.identity_probe else {
                return Err(harness("no identity probe".into()));
            };
            let (id, f) = inputs
                .requests
                .build(&ip.frame, inputs.params, "swp-ident")
                .map_err(|e| harness(format!("identity probe cannot be built: {e}")))?;
            sent.msg_id = Some(id);
            if let Err(e) = conv.send(&f) {
                conv.note(format!("send failed: {e}"));
            }
        }
    }
    Ok(sent)
}
