//! The part of a connection that runs the conformance fixtures: their answers, the scripts
//! they start (notifications over time, a server-to-client request and its answer), and
//! the frames those produce. A child of `connection`, so it works on its private state.

use super::super::mcp::{Action, MSG_TYPE_NOTIFICATION, MSG_TYPE_REQUEST};
use super::super::reply::{self, Reject};
use super::super::script::{self, Script};
use super::super::PROFILE_MCP;
use super::{Connection, Fixtures, Notice};
use bytes::Bytes;
use swp_core::{Envelope, ErrorCode};

impl Connection {
    /// The conformance fixtures' answer to a request, when they serve the method and the
    /// peer may ask for it.
    pub(super) fn fixture_action(&mut self, env: &Envelope) -> Option<Action> {
        if self.config.fixtures != Fixtures::Conformance || env.msg_type != MSG_TYPE_REQUEST {
            return None;
        }
        let Ok(swp_profiles::mcp::McpMessage::Request { id, method, params }) =
            swp_profiles::mcp::parse(env.msg_type, &env.payload)
        else {
            return None;
        };
        if self.authz.denies(self.identity.as_deref(), &method) {
            // The reference handler turns the refusal into its reject.
            return None;
        }
        super::super::conformance::handle(&mut self.fixture_state, id, &method, params)
    }

    /// Writes what scripts produced: notifications and server-to-client requests under
    /// msg_ids of the endpoint's own, terminal responses on their request's msg_id.
    pub(super) fn script_out(&mut self, outs: Vec<script::Out>, now_ms: u64) {
        for out in outs {
            match out {
                script::Out::Notify(payload) => {
                    if let Err(e) =
                        self.originate(PROFILE_MCP, MSG_TYPE_NOTIFICATION, payload, now_ms)
                    {
                        self.notice(Notice::ReplyDropped(e));
                    }
                }
                script::Out::Ask { msg_id, payload } => {
                    let limits = self.config.limits;
                    if let Err(e) = reply::put_profile_frame(
                        &mut self.tx,
                        &limits,
                        PROFILE_MCP,
                        MSG_TYPE_REQUEST,
                        now_ms,
                        msg_id,
                        Bytes::from(payload),
                    ) {
                        self.notice(Notice::ReplyDropped(e));
                    }
                }
                script::Out::Reply { msg_id, payload } => {
                    self.in_flight.end(&msg_id);
                    self.respond(msg_id, Bytes::from(payload), now_ms);
                }
            }
        }
    }

    /// Starts the script a fixture answered a request with; the request stays in flight
    /// until its terminal response.
    pub(super) fn start_script(&mut self, env: Envelope, steps: Script, now_ms: u64) {
        let msg_id = Bytes::copy_from_slice(&env.msg_id);
        let request_id = match swp_profiles::mcp::parse(env.msg_type, &env.payload) {
            Ok(swp_profiles::mcp::McpMessage::Request { id, .. }) => id.get().to_owned(),
            _ => "null".to_owned(),
        };
        let mut outs = Vec::new();
        match self
            .scripts
            .start(msg_id.clone(), &request_id, steps, now_ms, &mut outs)
        {
            Ok(()) => {
                let _ = self.in_flight.begin(&msg_id);
                self.script_out(outs, now_ms);
            }
            Err(full) => {
                let r = Reject::profile(ErrorCode::RateLimitExceeded, full.to_string());
                self.error_frame(r, Some(env.msg_id), now_ms);
            }
        }
    }

    /// The client's answer to a request a script sent it.
    pub(super) fn script_answer(&mut self, env: Envelope, now_ms: u64) {
        let mut outs = Vec::new();
        self.scripts.on_answer(&env.msg_id, &env.payload, &mut outs);
        self.script_out(outs, now_ms);
    }
}
