//! One connection's receive pipeline, sans-IO: octets in, accepted envelopes or rejects out.
//! Framing → E1 decode → rate limit → policy validation → profile lookup, in that order.

use crate::e1;
use crate::envelope::Envelope;
use crate::frame::FrameDecoder;
use crate::limits::{Limits, Policy, RateLimit};
use crate::reject::CoreError;
use crate::validate::{validate, Validated};
use bytes::Bytes;

/// The outcome for one frame (or for the stream, on framing errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A frame passed every core check and its profile is known.
    Accepted {
        /// The envelope.
        envelope: Envelope,
        /// What validation surfaced.
        validated: Validated,
    },
    /// A frame (or the stream) was rejected.
    Rejected {
        /// Why.
        error: CoreError,
        /// The `msg_id` of the rejected frame, when decoding got that far (for error replies).
        msg_id: Option<Bytes>,
        /// Whether the stream is now terminated (frame boundary lost).
        terminated: bool,
    },
}

/// Fixed-window frame counter: at most `frames` frames per window; a window opens at the
/// first frame that arrives after the previous window closed.
#[derive(Debug, Clone)]
struct RateWindow {
    limit: RateLimit,
    start_ms: u64,
    count: u32,
}

impl RateWindow {
    fn admit(&mut self, now_ms: u64) -> bool {
        if self.count == 0 || now_ms.saturating_sub(self.start_ms) >= self.limit.window_ms {
            self.start_ms = now_ms;
            self.count = 0;
        }
        self.count = self.count.saturating_add(1);
        self.count <= self.limit.frames
    }
}

/// The receive side of one connection.
#[derive(Debug)]
pub struct Receiver {
    limits: Limits,
    policy: Policy,
    frames: FrameDecoder,
    rate: Option<RateWindow>,
}

impl Receiver {
    /// A receiver with the given limits and policy.
    pub fn new(limits: Limits, policy: Policy) -> Self {
        Receiver {
            limits,
            policy,
            frames: FrameDecoder::new(limits),
            rate: policy.rate_limit.map(|limit| RateWindow {
                limit,
                start_ms: 0,
                count: 0,
            }),
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Appends octets that arrived.
    pub fn feed(&mut self, data: &[u8]) {
        self.frames.feed(data);
    }

    /// Whether a framing error ended the stream.
    pub fn is_terminated(&self) -> bool {
        self.frames.is_terminated()
    }

    /// Octets fed and not yet returned as events: whole frames waiting, and the start of
    /// the next.
    pub fn buffered(&self) -> usize {
        self.frames.buffered()
    }

    /// The next event, or `None` when more octets are needed. `knows` says whether a
    /// profile is registered for a `profile_id`.
    pub fn poll(&mut self, now_ms: u64, knows: impl Fn(u64) -> bool) -> Option<Event> {
        let body = match self.frames.next_body() {
            Ok(Some(b)) => b,
            Ok(None) => return None,
            Err(CoreError::Terminated) => return None,
            Err(error) => {
                return Some(Event::Rejected {
                    error,
                    msg_id: None,
                    terminated: true,
                })
            }
        };
        Some(self.judge(body, now_ms, knows))
    }

    /// End of stream; a reject when it ended inside a frame.
    pub fn finish(&mut self) -> Option<Event> {
        self.frames.finish().err().map(|error| Event::Rejected {
            error,
            msg_id: None,
            terminated: true,
        })
    }

    fn judge(&mut self, body: Bytes, now_ms: u64, knows: impl Fn(u64) -> bool) -> Event {
        let reject = |error, msg_id| Event::Rejected {
            error,
            msg_id,
            terminated: false,
        };
        if let Some(rate) = &mut self.rate {
            if !rate.admit(now_ms) {
                return reject(
                    CoreError::RateLimited {
                        frames: rate.limit.frames,
                        window_ms: rate.limit.window_ms,
                    },
                    None,
                );
            }
        }
        let envelope = match e1::decode_owned(body, &self.limits) {
            Ok(e) => e,
            Err(e) => return reject(e, None),
        };
        let validated = match validate(&envelope, &self.policy, now_ms) {
            Ok(v) => v,
            Err(e) => return reject(e, Some(envelope.msg_id)),
        };
        if !knows(envelope.profile_id) {
            return reject(
                CoreError::UnknownProfile {
                    profile_id: envelope.profile_id,
                },
                Some(envelope.msg_id),
            );
        }
        Event::Accepted {
            envelope,
            validated,
        }
    }
}
