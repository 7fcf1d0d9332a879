//! The reference's SWP-POLICYHINT receiver (profile 16): one table of constraints per
//! connection (`swp_profiles::policyhint::Policy` with the library's defaults, which are
//! the reference's declared policy: the one key it knows is `swp.test.region`, unknown keys
//! are ignored, of two disagreeing constraints in one set the later wins, an unscoped
//! constraint applies to the scope `session`).
//!
//! The unknown-key policy and the conflict rule are `swp-ref serve` options
//! (`--policyhint-unknown-keys ignore|report|refuse`, `--policyhint-conflicts last|first`);
//! under `report`, each dropped constraint with an unknown key is reported too, reason
//! `unknown_key`, after the unmet ones.
//!
//! A valid `POLICY_HINT_SET` is answered on its msg_id with `POLICY_HINT_ACK` (ack_id
//! `ack-N`, counting on the connection), then, under fresh msg_ids, one `POLICY_VIOLATION`
//! for each constraint of the set now in effect that binds (mode `MUST`) and that the
//! reference cannot satisfy: `swp.test.region` with any value but `eu`, reported with its key,
//! its effective scope and reason `unsatisfiable`. `SHOULD` and `MAY` constraints are
//! advisory: taken, never reported. Hints change nothing else: core validation and every
//! other profile behave as without them. A set the profile refuses (a constraint without
//! key, value or mode, a mode other than the three words) is rejected with an error frame.
//! Acknowledgements, violations and errors from the peer are taken and ignored: the
//! reference sends no hints of its own.

use super::{step, Action, Incoming, Out, ProfileAgent, Reject};
use bytes::Bytes;
use swp_profiles::p1::pb::policyhint::{PolicyHintAck, PolicyViolation};
use swp_profiles::p1::P1Form;
use swp_profiles::policyhint::{self, codes, Mode, Policy, PolicyError, PolicyMessage, Seen};

/// The value of `swp.test.region` the reference satisfies.
pub const SATISFIED_REGION: &str = "eu";

/// The POLICYHINT state of one connection.
#[derive(Debug)]
pub struct Agent {
    policy: Policy,
    form: P1Form,
    acks: u64,
}

impl Agent {
    /// An empty table with this policy.
    pub fn new(config: policyhint::Config, form: P1Form) -> Self {
        Agent {
            policy: Policy::new(config),
            form,
            acks: 0,
        }
    }

    fn out(&self, m: &PolicyMessage, reply_to: Option<Bytes>) -> Out {
        Out::of::<Policy>(self.form, m, reply_to)
    }
}

impl ProfileAgent for Agent {
    type Profile = Policy;

    fn for_connection(config: &super::Config, form: P1Form) -> Self {
        Agent::new(
            policyhint::Config {
                unknown_keys: config.policyhint_unknown_keys,
                conflicts: config.policyhint_conflicts,
                ..policyhint::Config::default()
            },
            form,
        )
    }

    fn form(&self) -> P1Form {
        self.form
    }

    fn on_message(&mut self, m: PolicyMessage, at: Incoming<'_>) -> Result<Action, Reject> {
        let Seen::HintSet { effective, unknown } = step::<Self>(&mut self.policy, at.ctx(), &m)?
        else {
            return Ok(Action::Nothing);
        };
        self.acks += 1;
        let ack = PolicyMessage::HintAck(PolicyHintAck {
            ack_id: format!("ack-{}", self.acks),
        });
        let mut outs = vec![self.out(&ack, Some(at.msg_id.clone()))];
        for e in effective {
            let unmet = e.key == policyhint::policy::REFERENCE_KEY && e.value != SATISFIED_REGION;
            if e.mode == Mode::Must && unmet {
                let v = PolicyMessage::Violation(PolicyViolation {
                    key: e.key,
                    scope_ref: e.scope,
                    reason_code: codes::UNSATISFIABLE.into(),
                });
                outs.push(self.out(&v, None));
            }
        }
        if self.policy.config().unknown_keys == policyhint::UnknownKeys::Violation {
            for e in unknown {
                let v = PolicyMessage::Violation(PolicyViolation {
                    key: e.key,
                    scope_ref: e.scope,
                    reason_code: codes::UNKNOWN_KEY.into(),
                });
                outs.push(self.out(&v, None));
            }
        }
        Ok(Action::Send(outs))
    }

    /// A set with more constraints than the table holds is refused from a scan of its
    /// octets: decoding 120k constraints costs tens of ms of CPU, the scan well under one.
    fn before_decode(&self, msg_type: u64, payload: &[u8]) -> Option<Reject> {
        if msg_type != policyhint::MSG_HINT_SET {
            return None;
        }
        let cap = self.policy.config().max_constraints;
        // Field 1 of PolicyHintSet is `constraints`.
        let n = swp_profiles::scan::count_field(self.form, msg_type, payload, 1)?;
        (n > cap).then(|| super::refuse::<Self>(&PolicyError::Full(cap)))
    }

    /// The refusal names the `PolicyErr.code` too (`unsatisfiable`, `unknown_key`, ...).
    fn refusal(e: &PolicyError) -> String {
        format!("{}: {e}", e.reply_code())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{code, outs};
    use super::*;
    use swp_core::ErrorCode;
    use swp_profiles::p1::pb::policyhint::{Constraint, PolicyHintSet};

    const ID: Bytes = Bytes::from_static(b"msg-000000000001");

    fn set(cs: &[(&str, &str, &str, &str)]) -> Vec<u8> {
        policyhint::encode(
            P1Form::Message,
            &PolicyMessage::HintSet(PolicyHintSet {
                constraints: cs
                    .iter()
                    .map(|(k, v, m, s)| Constraint {
                        key: (*k).into(),
                        value: (*v).into(),
                        mode: (*m).into(),
                        scope_ref: (*s).into(),
                    })
                    .collect(),
            }),
        )
    }

    #[test]
    fn acks_and_reports_unmet_must_constraints_only() {
        let mut a = Agent::new(policyhint::Config::default(), P1Form::Message);
        let r = "swp.test.region";
        let o = outs(a.handle(
            1,
            &ID,
            &set(&[
                (r, "mars", "MUST", "t1"),
                (r, "mars", "SHOULD", "t2"),
                (r, "eu", "MUST", ""),
            ]),
            "",
            0,
        ));
        assert_eq!(o.len(), 2);
        assert_eq!((o[0].msg_type, o[0].reply_to.clone()), (2, Some(ID)));
        let v = policyhint::decode(P1Form::Message, 3, &o[1].payload).unwrap();
        assert_eq!(
            v,
            PolicyMessage::Violation(PolicyViolation {
                key: r.into(),
                scope_ref: "t1".into(),
                reason_code: "unsatisfiable".into()
            })
        );
        // Unknown keys are ignored; a bad mode is refused.
        assert_eq!(
            outs(a.handle(1, &ID, &set(&[("x.y", "1", "MUST", "")]), "", 0)).len(),
            1
        );
        assert_eq!(
            code(a.handle(1, &ID, &set(&[(r, "eu", "must", "")]), "", 0)),
            ErrorCode::InvalidProfilePayload
        );
    }
}
