//! The reference implementation's answers to testee requests, built on swp-core. The
//! harness calls these directly for its in-process SUT, so in-process and testee runs
//! execute the same code.

use swp_core::limits::{Limits, Policy, RateLimit};
use swp_core::{Envelope, Receiver};
use swp_testee_proto::{
    CodecConfig, DecodeReply, DecodeRequest, EnvelopeView, Event, ExtensionView, Hex,
};

/// The configuration could not be turned into a receiver.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The limits are incoherent.
    #[error("limits: {0}")]
    Limits(#[from] swp_core::limits::LimitsError),
    /// A limit does not fit this platform.
    #[error("limit {0} does not fit in usize")]
    Overflow(&'static str),
    /// Payload validation was asked for a profile the reference does not validate.
    #[error(
        "cannot validate the payloads of profile {0} (only 1, 2, 10, 11, 12, 13, 14, 15, 16, 17, 18 and 19)"
    )]
    Validate(u64),
}

/// Payload validation after the core accepts a frame: the MCP mapping's payload rules
/// (profile 1: JSON-RPC shape per msg_type), A2A's P1 rules and lifecycle, and the SWP-*
/// profiles of classes C3 and C4 with their machines (`swp_profiles::channel`), with every
/// frame of one request on one channel. The SWP-* machines run with the library's defaults,
/// which are the reference's implementation-defined parameters (a 24 h replay window, the
/// six severities, no chunk size imposed on a sender, SHA-256 state ids), as its manifests
/// declare them.
#[derive(Default)]
struct ProfileCheck {
    mcp: bool,
    a2a: Option<swp_profiles::a2a::Lifecycle>,
    swp: Vec<swp_profiles::channel::Channel>,
    form: swp_profiles::p1::P1Form,
}

impl ProfileCheck {
    fn new(profiles: &[u64], form: swp_testee_proto::P1PayloadForm) -> Result<Self, ConfigError> {
        let mut c = ProfileCheck {
            form: match form {
                swp_testee_proto::P1PayloadForm::Message => swp_profiles::p1::P1Form::Message,
                swp_testee_proto::P1PayloadForm::Wrapper => swp_profiles::p1::P1Form::Wrapper,
            },
            ..ProfileCheck::default()
        };
        let config = swp_profiles::channel::Config {
            form: c.form,
            ..swp_profiles::channel::Config::default()
        };
        for &p in profiles {
            match p {
                swp_profiles::mcp::PROFILE_ID => c.mcp = true,
                swp_profiles::a2a::PROFILE_ID => {
                    c.a2a = Some(swp_profiles::a2a::Lifecycle::default());
                }
                _ if c.swp.iter().any(|ch| ch.profile_id() == p) => {}
                _ => {
                    let ch = swp_profiles::channel::Channel::new(p, &config)
                        .ok_or(ConfigError::Validate(p))?;
                    c.swp.push(ch);
                }
            }
        }
        Ok(c)
    }

    /// The refusal of an accepted envelope's payload, if any; `now_ms` is the receiver
    /// clock (the RPC replay window and the EVENTS id retention run on it).
    fn check(&mut self, e: &Envelope, now_ms: u64) -> Option<(swp_core::ErrorCode, String)> {
        use swp_profiles::a2a::{self, A2aMessage};
        if self.mcp && e.profile_id == swp_profiles::mcp::PROFILE_ID {
            return swp_profiles::mcp::parse(e.msg_type, &e.payload)
                .err()
                .map(|err| (err.code(), err.to_string()));
        }
        if let Some(ch) = self.swp.iter_mut().find(|c| c.profile_id() == e.profile_id) {
            return ch
                .feed(now_ms, "", e.msg_type, &e.payload)
                .err()
                .map(|err| (err.code(), err.to_string()));
        }
        let l = self
            .a2a
            .as_mut()
            .filter(|_| e.profile_id == a2a::PROFILE_ID)?;
        let step = match a2a::decode_form(self.form, e.msg_type, &e.payload) {
            Err(err) => return Some((err.code(), err.to_string())),
            Ok(A2aMessage::Handshake(_)) => return None,
            Ok(A2aMessage::Task(t)) => l.task("", &t),
            Ok(A2aMessage::Event(x)) => l.event("", &x),
            Ok(A2aMessage::Result(r)) => l.result("", &r),
        };
        step.err().map(|err| (err.code(), err.to_string()))
    }
}

fn usize_of(v: u64, name: &'static str) -> Result<usize, ConfigError> {
    usize::try_from(v).map_err(|_| ConfigError::Overflow(name))
}

/// Builds swp-core limits and policy from a testee configuration.
pub fn receiver_config(c: &CodecConfig) -> Result<(Limits, Policy), ConfigError> {
    let limits = Limits {
        max_frame_bytes: c.limits.max_frame_bytes,
        min_msg_id_bytes: usize_of(c.limits.min_msg_id_bytes, "min_msg_id_bytes")?,
        max_msg_id_bytes: usize_of(c.limits.max_msg_id_bytes, "max_msg_id_bytes")?,
        max_ext_bytes: usize_of(c.limits.max_ext_bytes, "max_ext_bytes")?,
        max_payload_bytes: usize_of(c.limits.max_payload_bytes, "max_payload_bytes")?,
    };
    limits.check()?;
    let policy = Policy {
        timestamp_freshness: c.policy.timestamp_freshness,
        max_clock_skew_ms: c.policy.max_clock_skew_ms,
        rate_limit: c.policy.rate_limit.map(|r| RateLimit {
            frames: r.frames,
            window_ms: r.window_ms,
        }),
        ..Policy::default()
    };
    Ok((limits, policy))
}

/// The testee view of an envelope.
pub fn envelope_view(e: &Envelope) -> EnvelopeView {
    EnvelopeView {
        version: e.version,
        profile_id: e.profile_id,
        msg_type: e.msg_type,
        flags: e.flags,
        ts_unix_ms: e.ts_unix_ms,
        msg_id: Hex(e.msg_id.clone()),
        extensions: e
            .extensions
            .iter()
            .map(|x| ExtensionView {
                ext_type: x.ext_type,
                value: Hex(x.value),
            })
            .collect(),
        payload: Hex(e.payload.clone()),
    }
}

fn event(ev: swp_core::Event, profiles: &mut ProfileCheck, now_ms: u64) -> Event {
    match ev {
        swp_core::Event::Accepted {
            envelope,
            validated,
        } => match profiles.check(&envelope, now_ms) {
            None => Event::Accept {
                envelope: envelope_view(&envelope),
                unknown_flags: Some(validated.unknown_flags),
            },
            // A payload refusal leaves the stream usable: the frame itself was sound.
            Some((code, detail)) => Event::Reject {
                code: Some(code.as_str().to_owned()),
                alias: None,
                detail: Some(detail),
                terminated: Some(false),
            },
        },
        swp_core::Event::Rejected {
            error, terminated, ..
        } => Event::Reject {
            code: Some(error.code().as_str().to_owned()),
            alias: None,
            detail: Some(error.to_string()),
            terminated: Some(terminated),
        },
    }
}

/// Runs one fresh receiver over the request's stream.
pub fn decode(req: &DecodeRequest) -> Result<DecodeReply, ConfigError> {
    let (limits, policy) = receiver_config(&req.config)?;
    let known = &req.config.known_profiles;
    let mut rx = Receiver::new(limits, policy);
    let mut profiles = ProfileCheck::new(&req.config.validate_profiles, req.config.p1_payload)?;
    let mut reply = DecodeReply {
        chunks: Vec::with_capacity(req.chunks.len()),
        end: Vec::new(),
    };
    for chunk in &req.chunks {
        rx.feed(&chunk.bytes.0);
        let mut events = Vec::new();
        while let Some(ev) = rx.poll(chunk.now_ms, |p| known.contains(&p)) {
            events.push(event(ev, &mut profiles, chunk.now_ms));
        }
        reply.chunks.push(events);
    }
    if req.end_of_stream {
        let now_ms = req.chunks.last().map_or(0, |c| c.now_ms);
        reply
            .end
            .extend(rx.finish().map(|ev| event(ev, &mut profiles, now_ms)));
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use swp_testee_proto::{Chunk, LimitsSpec, P1PayloadForm, PolicySpec};

    const NOW: u64 = 1_767_225_600_000;

    fn frame(msg_type: u8, payload: &[u8]) -> Vec<u8> {
        // version 1, profile 1, msg_type, flags 0, ts = NOW, 8-octet msg_id, no extensions.
        let mut body = vec![1, 1, msg_type, 0];
        let mut ts = NOW;
        while ts >= 0x80 {
            body.push((ts as u8 & 0x7f) | 0x80);
            ts >>= 7;
        }
        body.push(ts as u8);
        body.push(8);
        body.extend_from_slice(b"msgid-01");
        body.push(0);
        body.push(u8::try_from(payload.len()).unwrap());
        body.extend_from_slice(payload);
        let mut f = u32::try_from(body.len()).unwrap().to_be_bytes().to_vec();
        f.extend(body);
        f
    }

    fn decode_one(validate: Vec<u64>, octets: Vec<u8>) -> Event {
        let req = DecodeRequest {
            config: CodecConfig {
                limits: LimitsSpec {
                    max_frame_bytes: 1 << 20,
                    min_msg_id_bytes: 8,
                    max_msg_id_bytes: 64,
                    max_ext_bytes: 4096,
                    max_payload_bytes: 1 << 19,
                },
                policy: PolicySpec {
                    timestamp_freshness: true,
                    max_clock_skew_ms: 300_000,
                    rate_limit: None,
                },
                known_profiles: vec![1, 2],
                validate_profiles: validate,
                p1_payload: P1PayloadForm::Message,
            },
            chunks: vec![Chunk {
                now_ms: NOW,
                bytes: Hex(octets.into()),
            }],
            end_of_stream: true,
        };
        let mut reply = decode(&req).unwrap();
        assert_eq!(reply.chunks.len(), 1);
        assert_eq!(reply.chunks[0].len(), 1, "{reply:?}");
        reply.chunks.remove(0).remove(0)
    }

    fn code(e: &Event) -> Option<&str> {
        match e {
            Event::Reject { code, .. } => code.as_deref(),
            Event::Accept { .. } => None,
        }
    }

    #[test]
    fn profile_1_payloads_are_validated_only_on_request() {
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let no_id = br#"{"jsonrpc":"2.0","method":"ping"}"#;
        assert_eq!(code(&decode_one(vec![1], frame(1, ping))), None);
        assert_eq!(
            code(&decode_one(vec![1], frame(1, no_id))),
            Some("ERR_INVALID_MCP_PAYLOAD")
        );
        // msg_type 0 is no MCP-mapping message: a profile-level reject, the stream goes on.
        let e = decode_one(vec![1], frame(0, ping));
        assert_eq!(code(&e), Some("ERR_UNSUPPORTED_MSG_TYPE"));
        assert!(matches!(
            e,
            Event::Reject {
                terminated: Some(false),
                ..
            }
        ));
        // Without validation the core alone decides: both frames are sound.
        assert_eq!(code(&decode_one(vec![], frame(1, no_id))), None);
        assert_eq!(code(&decode_one(vec![], frame(0, ping))), None);
    }

    #[test]
    fn other_profiles_cannot_be_validated() {
        // 20 and 99 are no SWP profile at all (every one of 10-19 gets a machine in issue 17).
        for p in [20, 99] {
            assert_eq!(
                ProfileCheck::new(&[12, p], P1PayloadForm::Message).err(),
                Some(ConfigError::Validate(p))
            );
        }
    }
}
