//! The reference as an SWP-ARTIFACT sender and receiver (profile 14).
//!
//! As sender it offers two artifacts, hashed with `sha-256` and sent in chunks of 4,096
//! octets:
//!
//! | artifact_id | content |
//! |---|---|
//! | `swp.test.small` | the 10 octets `0123456789` |
//! | `swp.test.blob` | 100,000 octets, octet i = i mod 251 |
//!
//! An `ART_GET` is answered with the `ART_OFFER`, then the chunks of `artifact::source`
//! (global indexes, every chunk but the last carrying the library's stateless resume
//! token), all under fresh msg_ids. A GET it cannot serve is answered with `ART_ERR` on the
//! request's msg_id: `not_found` for an unknown artifact, `invalid_range`,
//! `invalid_resume_token`; retryable false.
//!
//! As receiver it fetches what a peer offers: an `ART_OFFER` of at most 1 MiB is answered
//! with an `ART_GET` of the whole artifact; the chunks are judged by `artifact::Transfers`
//! (order, range, placement by contiguity, integrity against the offer) and a complete,
//! verified transfer is acknowledged with `ART_ACK` of its last chunk. A chunk it refuses
//! (out of order, outside the range, a digest that does not match the offer, larger than
//! 1 MiB) is rejected with an error frame, `ERR_INVALID_PROFILE_PAYLOAD`. A larger offer is
//! answered `ART_ERR` `too_large`.

use super::{step, Action, Config, Incoming, Out, ProfileAgent, Reject};
use bytes::Bytes;
use swp_profiles::artifact::{self, source, ArtifactMessage, HashAlg, Seen, Transfers};
use swp_profiles::p1::pb::artifact::{ArtAck, ArtErr, ArtGet};
use swp_profiles::p1::P1Form;
use swp_profiles::payload::shown;
use swp_profiles::{Ctx, Profile};

/// A 10-octet artifact: one chunk.
pub const SMALL: &str = "swp.test.small";
/// A 100,000-octet artifact: 25 chunks.
pub const BLOB: &str = "swp.test.blob";
/// The chunk size the reference sends.
pub const CHUNK_BYTES: u64 = 4096;
/// The largest artifact the reference fetches when offered, and the largest chunk it takes.
pub const MAX_UPLOAD_BYTES: u64 = 1 << 20;
/// `ART_ERR.code` for an offer over [`MAX_UPLOAD_BYTES`].
pub const TOO_LARGE: &str = "too_large";

/// The content of `BLOB`, made once per process: every connection's agent shares it (an
/// idle connection cost 116 KiB when each made its own copy).
pub fn blob() -> Bytes {
    static BLOB_DATA: std::sync::LazyLock<Bytes> = std::sync::LazyLock::new(|| {
        Bytes::from(
            (0..100_000u32)
                .map(|i| (i % 251) as u8)
                .collect::<Vec<u8>>(),
        )
    });
    BLOB_DATA.clone()
}

/// The `ART_OFFER` of one of the reference's artifacts. The blob's is made once per
/// process: hashing 100,000 octets for every GET made each request cost a hash's CPU.
fn offer_of(name: &str, data: &Bytes) -> swp_profiles::p1::pb::artifact::ArtOffer {
    static BLOB_OFFER: std::sync::LazyLock<swp_profiles::p1::pb::artifact::ArtOffer> =
        std::sync::LazyLock::new(|| source::offer(BLOB, &blob(), HashAlg::Sha256, Bytes::new()));
    if name == BLOB && *data == blob() {
        BLOB_OFFER.clone()
    } else {
        source::offer(name, data, HashAlg::Sha256, Bytes::new())
    }
}

/// The ARTIFACT state of one connection.
#[derive(Debug)]
pub struct Agent {
    form: P1Form,
    /// Transfers the reference sends: chunk placement judged exactly.
    sending: Transfers,
    /// Transfers the reference receives: the sender's chunk size is its own.
    receiving: Transfers,
    artifacts: Vec<(&'static str, Bytes)>,
}

impl Agent {
    /// The agent with its two artifacts.
    pub fn new(form: P1Form) -> Self {
        Agent {
            form,
            sending: Transfers::new(artifact::Config {
                chunk_size: Some(CHUNK_BYTES),
                ..artifact::Config::default()
            }),
            receiving: Transfers::new(artifact::Config {
                max_chunk_bytes: MAX_UPLOAD_BYTES,
                ..artifact::Config::default()
            }),
            artifacts: vec![(SMALL, Bytes::from_static(b"0123456789")), (BLOB, blob())],
        }
    }

    fn out(&self, m: &ArtifactMessage, reply_to: Option<&Bytes>) -> Out {
        Out::of::<Transfers>(self.form, m, reply_to.cloned())
    }

    fn error(&self, code: &str, message: String, reply_to: &Bytes) -> Action {
        let m = ArtifactMessage::Err(ArtErr {
            code: code.into(),
            message,
            retryable: false,
        });
        Action::Send(vec![self.out(&m, Some(reply_to))])
    }

    /// Answers a GET for one of the reference's artifacts.
    fn serve(&mut self, g: &ArtGet, msg_id: &Bytes, ctx: Ctx<'_>) -> Action {
        let Some((name, data)) = self
            .artifacts
            .iter()
            .find(|(n, _)| *n == g.artifact_id)
            .cloned()
        else {
            return self.error(
                artifact::codes::NOT_FOUND,
                format!("ERR_NOT_FOUND: no artifact {}", shown(&g.artifact_id)),
                msg_id,
            );
        };
        let chunks = match source::serve(name, &data, CHUNK_BYTES, g) {
            Ok(c) => c,
            Err(e) => {
                return self.error(
                    e.reply_code(),
                    format!("{}: {e}", e.code().as_str()),
                    msg_id,
                )
            }
        };
        let offer = ArtifactMessage::Offer(offer_of(name, &data));
        let get = ArtifactMessage::Get(g.clone());
        let mut outs = Vec::with_capacity(chunks.len() + 1);
        // The whole exchange passes our own machine: the peer's GET, then what we send.
        if let Err(e) = self.sending.step(ctx, &get) {
            return self.error(e.reply_code(), e.to_string(), msg_id);
        }
        if self.sending.step(ctx, &offer).is_ok() {
            outs.push(self.out(&offer, None));
        }
        for c in chunks {
            let m = ArtifactMessage::Chunk(c);
            if self.sending.step(ctx, &m).is_err() {
                break;
            }
            outs.push(self.out(&m, None));
        }
        Action::from_outs(outs)
    }
}

impl ProfileAgent for Agent {
    type Profile = Transfers;

    fn for_connection(_: &Config, form: P1Form) -> Self {
        Agent::new(form)
    }

    fn form(&self) -> P1Form {
        self.form
    }

    fn on_message(&mut self, m: ArtifactMessage, at: Incoming<'_>) -> Result<Action, Reject> {
        let ctx = at.ctx();
        Ok(match &m {
            ArtifactMessage::Get(g) => self.serve(g, at.msg_id, ctx),
            ArtifactMessage::Ack(_) => {
                step::<Self>(&mut self.sending, ctx, &m)?;
                Action::Nothing
            }
            ArtifactMessage::Offer(o) => match step::<Self>(&mut self.receiving, ctx, &m)? {
                Seen::Offered if o.total_size > MAX_UPLOAD_BYTES => self.error(
                    TOO_LARGE,
                    format!(
                        "artifact {} has {} octets; this endpoint takes at most {MAX_UPLOAD_BYTES}",
                        o.artifact_id, o.total_size
                    ),
                    at.msg_id,
                ),
                Seen::Offered => {
                    let get = ArtifactMessage::Get(ArtGet {
                        artifact_id: o.artifact_id.clone(),
                        ..ArtGet::default()
                    });
                    step::<Self>(&mut self.receiving, ctx, &get)?;
                    Action::Send(vec![self.out(&get, None)])
                }
                _ => Action::Nothing,
            },
            ArtifactMessage::Chunk(c) => match step::<Self>(&mut self.receiving, ctx, &m)? {
                Seen::Complete { verified: true } => {
                    let ack = ArtifactMessage::Ack(ArtAck {
                        artifact_id: c.artifact_id.clone(),
                        chunk_index: c.chunk_index,
                    });
                    Action::Send(vec![self.out(&ack, None)])
                }
                _ => Action::Nothing,
            },
            ArtifactMessage::Err(_) => Action::Nothing,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{code, outs};
    use super::*;
    use swp_core::ErrorCode;
    use swp_profiles::p1::pb::artifact::{ArtChunk, ArtOffer};

    const ID: Bytes = Bytes::from_static(b"msg-000000000001");

    fn enc(m: ArtifactMessage) -> Vec<u8> {
        artifact::encode(P1Form::Message, &m)
    }

    fn decoded(o: &[Out]) -> Vec<ArtifactMessage> {
        o.iter()
            .map(|x| artifact::decode(P1Form::Message, x.msg_type, &x.payload).unwrap())
            .collect()
    }

    fn get(id: &str, start: u64, end: u64, token: &str) -> Vec<u8> {
        enc(ArtifactMessage::Get(ArtGet {
            artifact_id: id.into(),
            start,
            end,
            resume_token: token.into(),
        }))
    }

    #[test]
    fn the_sender_serves_ranges_and_resumes() {
        let mut a = Agent::new(P1Form::Message);
        let m = decoded(&outs(a.handle(2, &ID, &get(BLOB, 0, 0, ""), "", 0)));
        assert_eq!(m.len(), 26);
        // The receiver's judge verifies what we sent.
        let mut judge = Transfers::new(artifact::Config {
            chunk_size: Some(CHUNK_BYTES),
            ..artifact::Config::default()
        });
        judge
            .step(
                Ctx::scoped(""),
                &ArtifactMessage::Get(ArtGet {
                    artifact_id: BLOB.into(),
                    ..ArtGet::default()
                }),
            )
            .unwrap();
        let mut last = None;
        for x in &m {
            last = Some(judge.step(Ctx::scoped(""), x).unwrap());
        }
        assert_eq!(last, Some(Seen::Complete { verified: true }));
        // A token from chunk 2 resumes at chunk 3.
        let ArtifactMessage::Chunk(c2) = &m[3] else {
            panic!()
        };
        let r = decoded(&outs(a.handle(
            2,
            &ID,
            &get(BLOB, 0, 0, &c2.resume_token),
            "",
            0,
        )));
        assert!(
            matches!(&r[1], ArtifactMessage::Chunk(c) if c.chunk_index == 3 && c.offset == 3 * CHUNK_BYTES)
        );
        // A range inside one chunk.
        let r = decoded(&outs(a.handle(2, &ID, &get(BLOB, 10, 20, ""), "", 0)));
        assert!(
            matches!(&r[..], [ArtifactMessage::Offer(_), ArtifactMessage::Chunk(c)] if c.data.len() == 10 && c.is_terminal && c.chunk_index == 0)
        );
        // An empty range is malformed whatever the artifact: a refused payload.
        assert_eq!(
            code(a.handle(2, &ID, &get(BLOB, 5, 5, ""), "", 0)),
            ErrorCode::InvalidProfilePayload
        );
        for (g, want) in [
            (get(BLOB, 100_000, 0, ""), "invalid_range"),
            (get(BLOB, 0, 100_001, ""), "invalid_range"),
            (get(BLOB, 0, 0, "r1.1.2.3.zz"), "invalid_resume_token"),
            (get("nope", 0, 0, ""), "not_found"),
        ] {
            let r = decoded(&outs(a.handle(2, &ID, &g, "", 0)));
            assert!(
                matches!(&r[..], [ArtifactMessage::Err(e)] if e.code == want),
                "{r:?}"
            );
        }
    }

    fn offer(data: &[u8]) -> Vec<u8> {
        enc(ArtifactMessage::Offer(ArtOffer {
            artifact_id: "up".into(),
            total_size: data.len() as u64,
            hash_alg: "sha-256".into(),
            hash: Bytes::from(HashAlg::Sha256.digest(data)),
            metadata: Bytes::new(),
        }))
    }

    fn chunk(i: u64, offset: u64, data: &'static [u8], last: bool) -> Vec<u8> {
        enc(ArtifactMessage::Chunk(ArtChunk {
            artifact_id: "up".into(),
            chunk_index: i,
            offset,
            data: Bytes::from_static(data),
            is_terminal: last,
            resume_token: String::new(),
        }))
    }

    #[test]
    fn the_receiver_fetches_verifies_and_acknowledges() {
        let mut a = Agent::new(P1Form::Message);
        let m = decoded(&outs(a.handle(1, &ID, &offer(b"abcdefgh"), "", 0)));
        assert!(matches!(&m[..], [ArtifactMessage::Get(g)] if g.artifact_id == "up" && g.end == 0));
        assert_eq!(
            a.handle(3, &ID, &chunk(0, 0, b"abcd", false), "", 0),
            Action::Nothing
        );
        let m = decoded(&outs(a.handle(3, &ID, &chunk(1, 4, b"efgh", true), "", 0)));
        assert!(matches!(&m[..], [ArtifactMessage::Ack(x)] if x.chunk_index == 1));
    }

    #[test]
    fn the_receiver_rejects_disorder_and_corruption() {
        let mut a = Agent::new(P1Form::Message);
        outs(a.handle(1, &ID, &offer(b"abcdefgh"), "", 0));
        assert_eq!(
            code(a.handle(3, &ID, &chunk(1, 4, b"efgh", true), "", 0)),
            ErrorCode::InvalidProfilePayload
        );
        assert_eq!(
            a.handle(3, &ID, &chunk(0, 0, b"abcd", false), "", 0),
            Action::Nothing
        );
        assert_eq!(
            code(a.handle(3, &ID, &chunk(1, 4, b"efgX", true), "", 0)),
            ErrorCode::InvalidProfilePayload
        );
        assert_eq!(
            code(a.handle(6, &ID, b"", "", 0)),
            ErrorCode::UnsupportedMsgType
        );
    }
}
