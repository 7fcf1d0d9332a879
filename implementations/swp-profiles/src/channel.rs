//! One channel of any of the SWP-* profiles of classes C3 and C4 (RPC 12, EVENTS 13,
//! ARTIFACT 14, STATE 17, OBS 18) and of C5 (AGDISC 10, TOOLDISC 11, CRED 15, POLICYHINT 16,
//! RELAY 19) behind one call: decode a payload in the configured P1
//! form and step that profile's machine. This is what a codec testee needs for
//! `validate:N` (every frame of a request on one channel) and what the fuzz target drives;
//! an endpoint that acts on messages uses the profile modules directly.

use crate::agdisc::{self, AgdiscMessage};
use crate::artifact::{self, ArtifactMessage};
use crate::cred::{self, CredMessage};
use crate::events::{self, EventsMessage};
use crate::obs::{self, ObsMessage};
use crate::payload::{P1Form, PayloadError};
use crate::policyhint::{self, PolicyMessage};
use crate::relay::{self, RelayMessage};
use crate::rpc::{self, RpcMessage};
use crate::state::{self, StateMessage};
use crate::tooldisc::{self, TooldiscMessage};
use swp_core::ErrorCode;

/// The profiles a [`Channel`] serves.
pub const PROFILES: [u64; 10] = [
    agdisc::PROFILE_ID,
    tooldisc::PROFILE_ID,
    rpc::PROFILE_ID,
    events::PROFILE_ID,
    artifact::PROFILE_ID,
    state::PROFILE_ID,
    obs::PROFILE_ID,
    cred::PROFILE_ID,
    policyhint::PROFILE_ID,
    relay::PROFILE_ID,
];

/// The form and every profile's parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// The payload form of the channel.
    pub form: P1Form,
    /// SWP-RPC.
    pub rpc: rpc::Config,
    /// SWP-EVENTS.
    pub events: events::Config,
    /// SWP-OBS.
    pub obs: obs::Config,
    /// SWP-ARTIFACT.
    pub artifact: artifact::Config,
    /// SWP-STATE.
    pub state: state::Config,
    /// SWP-CRED.
    pub cred: cred::Config,
    /// SWP-POLICYHINT.
    pub policyhint: policyhint::Config,
    /// SWP-AGDISC.
    pub agdisc: agdisc::Config,
    /// SWP-TOOLDISC.
    pub tooldisc: tooldisc::Config,
    /// SWP-RELAY.
    pub relay: relay::Config,
}

/// A decoded message of one of the profiles.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// SWP-RPC.
    Rpc(RpcMessage),
    /// SWP-EVENTS.
    Events(EventsMessage),
    /// SWP-OBS.
    Obs(ObsMessage),
    /// SWP-ARTIFACT.
    Artifact(ArtifactMessage),
    /// SWP-STATE.
    State(StateMessage),
    /// SWP-CRED.
    Cred(CredMessage),
    /// SWP-POLICYHINT.
    Policyhint(PolicyMessage),
    /// SWP-AGDISC.
    Agdisc(AgdiscMessage),
    /// SWP-TOOLDISC.
    Tooldisc(TooldiscMessage),
    /// SWP-RELAY.
    Relay(RelayMessage),
}

impl Message {
    /// Its profile id.
    pub fn profile_id(&self) -> u64 {
        match self {
            Message::Rpc(_) => rpc::PROFILE_ID,
            Message::Events(_) => events::PROFILE_ID,
            Message::Obs(_) => obs::PROFILE_ID,
            Message::Artifact(_) => artifact::PROFILE_ID,
            Message::State(_) => state::PROFILE_ID,
            Message::Cred(_) => cred::PROFILE_ID,
            Message::Policyhint(_) => policyhint::PROFILE_ID,
            Message::Agdisc(_) => agdisc::PROFILE_ID,
            Message::Tooldisc(_) => tooldisc::PROFILE_ID,
            Message::Relay(_) => relay::PROFILE_ID,
        }
    }

    /// Its msg_type.
    pub fn msg_type(&self) -> u64 {
        match self {
            Message::Rpc(m) => m.msg_type(),
            Message::Events(m) => m.msg_type(),
            Message::Obs(m) => m.msg_type(),
            Message::Artifact(m) => m.msg_type(),
            Message::State(m) => m.msg_type(),
            Message::Cred(m) => m.msg_type(),
            Message::Policyhint(m) => m.msg_type(),
            Message::Agdisc(m) => m.msg_type(),
            Message::Tooldisc(m) => m.msg_type(),
            Message::Relay(m) => m.msg_type(),
        }
    }

    /// Encodes it in `form`.
    pub fn encode(&self, form: P1Form) -> Vec<u8> {
        match self {
            Message::Rpc(m) => rpc::encode(form, m),
            Message::Events(m) => events::encode(form, m),
            Message::Obs(m) => obs::encode(form, m),
            Message::Artifact(m) => artifact::encode(form, m),
            Message::State(m) => state::encode(form, m),
            Message::Cred(m) => cred::encode(form, m),
            Message::Policyhint(m) => policyhint::encode(form, m),
            Message::Agdisc(m) => agdisc::encode(form, m),
            Message::Tooldisc(m) => tooldisc::encode(form, m),
            Message::Relay(m) => relay::encode(form, m),
        }
    }
}

/// Decodes a payload of `profile_id` in `form`; `None` for a profile this module does not
/// serve.
pub fn decode(
    profile_id: u64,
    form: P1Form,
    msg_type: u64,
    payload: &[u8],
) -> Option<Result<Message, PayloadError>> {
    Some(match profile_id {
        rpc::PROFILE_ID => rpc::decode(form, msg_type, payload).map(Message::Rpc),
        events::PROFILE_ID => events::decode(form, msg_type, payload).map(Message::Events),
        obs::PROFILE_ID => obs::decode(form, msg_type, payload).map(Message::Obs),
        artifact::PROFILE_ID => artifact::decode(form, msg_type, payload).map(Message::Artifact),
        state::PROFILE_ID => state::decode(form, msg_type, payload).map(Message::State),
        cred::PROFILE_ID => cred::decode(form, msg_type, payload).map(Message::Cred),
        policyhint::PROFILE_ID => {
            policyhint::decode(form, msg_type, payload).map(Message::Policyhint)
        }
        agdisc::PROFILE_ID => agdisc::decode(form, msg_type, payload).map(Message::Agdisc),
        tooldisc::PROFILE_ID => tooldisc::decode(form, msg_type, payload).map(Message::Tooldisc),
        relay::PROFILE_ID => relay::decode(form, msg_type, payload).map(Message::Relay),
        _ => return None,
    })
}

/// What a message did, per profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// SWP-RPC.
    Rpc(rpc::Seen),
    /// SWP-EVENTS.
    Events(events::Seen),
    /// SWP-OBS.
    Obs(obs::Seen),
    /// SWP-ARTIFACT.
    Artifact(artifact::Seen),
    /// SWP-STATE.
    State(state::Seen),
    /// SWP-CRED.
    Cred(cred::Seen),
    /// SWP-POLICYHINT.
    Policyhint(policyhint::Seen),
    /// SWP-AGDISC.
    Agdisc(agdisc::Seen),
    /// SWP-TOOLDISC.
    Tooldisc(tooldisc::Seen),
    /// SWP-RELAY.
    Relay(relay::Seen),
}

/// A refusal, with one canonical code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelError {
    /// The payload itself.
    #[error(transparent)]
    Payload(#[from] PayloadError),
    /// The SWP-RPC lifecycle.
    #[error(transparent)]
    Rpc(#[from] rpc::LifecycleError),
    /// The SWP-EVENTS stream.
    #[error(transparent)]
    Events(#[from] events::StreamError),
    /// The SWP-OBS context.
    #[error(transparent)]
    Obs(#[from] obs::ContextError),
    /// The SWP-ARTIFACT transfers.
    #[error(transparent)]
    Artifact(#[from] artifact::TransferError),
    /// The SWP-STATE store.
    #[error(transparent)]
    State(#[from] state::StoreError),
    /// The SWP-CRED chains.
    #[error(transparent)]
    Cred(#[from] cred::CredError),
    /// The SWP-POLICYHINT constraints.
    #[error(transparent)]
    Policyhint(#[from] policyhint::PolicyError),
    /// The SWP-AGDISC cache.
    #[error(transparent)]
    Agdisc(#[from] agdisc::CacheError),
    /// The SWP-TOOLDISC catalog judge.
    #[error(transparent)]
    Tooldisc(#[from] tooldisc::CatalogError),
    /// The SWP-RELAY deliveries.
    #[error(transparent)]
    Relay(#[from] relay::DeliveryError),
}

impl ChannelError {
    /// The canonical code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ChannelError::Payload(e) => e.code(),
            ChannelError::Rpc(e) => e.code(),
            ChannelError::Events(e) => e.code(),
            ChannelError::Obs(e) => e.code(),
            ChannelError::Artifact(e) => e.code(),
            ChannelError::State(e) => e.code(),
            ChannelError::Cred(e) => e.code(),
            ChannelError::Policyhint(e) => e.code(),
            ChannelError::Agdisc(e) => e.code(),
            ChannelError::Tooldisc(e) => e.code(),
            ChannelError::Relay(e) => e.code(),
        }
    }
}

#[derive(Debug, Clone)]
enum Machine {
    Rpc(rpc::Lifecycle),
    Events(events::Stream),
    Obs(obs::Contexts),
    Artifact(artifact::Transfers),
    State(state::Store),
    Cred(cred::Chains),
    Policyhint(policyhint::Policy),
    Agdisc(agdisc::Cache),
    Tooldisc(tooldisc::Catalog),
    Relay(relay::Deliveries),
}

/// One channel of one profile.
#[derive(Debug, Clone)]
pub struct Channel {
    profile_id: u64,
    form: P1Form,
    machine: Machine,
}

impl Channel {
    /// A channel of `profile_id`; `None` for a profile this module does not serve.
    pub fn new(profile_id: u64, config: &Config) -> Option<Channel> {
        let machine = match profile_id {
            rpc::PROFILE_ID => Machine::Rpc(rpc::Lifecycle::new(config.rpc.clone())),
            events::PROFILE_ID => Machine::Events(events::Stream::new(config.events.clone())),
            obs::PROFILE_ID => Machine::Obs(obs::Contexts::new(config.obs.clone())),
            artifact::PROFILE_ID => {
                Machine::Artifact(artifact::Transfers::new(config.artifact.clone()))
            }
            state::PROFILE_ID => Machine::State(state::Store::new(config.state.clone())),
            cred::PROFILE_ID => Machine::Cred(cred::Chains::new(config.cred.clone())),
            policyhint::PROFILE_ID => {
                Machine::Policyhint(policyhint::Policy::new(config.policyhint.clone()))
            }
            agdisc::PROFILE_ID => Machine::Agdisc(agdisc::Cache::new(config.agdisc.clone())),
            tooldisc::PROFILE_ID => {
                Machine::Tooldisc(tooldisc::Catalog::new(config.tooldisc.clone()))
            }
            relay::PROFILE_ID => Machine::Relay(relay::Deliveries::new(config.relay.clone())),
            _ => return None,
        };
        Some(Channel {
            profile_id,
            form: config.form,
            machine,
        })
    }

    /// The profile.
    pub fn profile_id(&self) -> u64 {
        self.profile_id
    }

    /// The payload form.
    pub fn form(&self) -> P1Form {
        self.form
    }

    /// Decodes one payload and steps the machine with it, at `now_ms`, for the peer
    /// `scope`.
    pub fn feed(
        &mut self,
        now_ms: u64,
        scope: &str,
        msg_type: u64,
        payload: &[u8],
    ) -> Result<(Message, Seen), ChannelError> {
        let form = self.form;
        Ok(match &mut self.machine {
            Machine::Rpc(l) => {
                let m = rpc::decode(form, msg_type, payload)?;
                let s = l.step(now_ms, scope, &m)?;
                (Message::Rpc(m), Seen::Rpc(s))
            }
            Machine::Events(l) => {
                let m = events::decode(form, msg_type, payload)?;
                let s = l.step(now_ms, scope, &m)?;
                (Message::Events(m), Seen::Events(s))
            }
            Machine::Obs(l) => {
                let m = obs::decode(form, msg_type, payload)?;
                let s = l.step(scope, &m)?;
                (Message::Obs(m), Seen::Obs(s))
            }
            Machine::Artifact(l) => {
                let m = artifact::decode(form, msg_type, payload)?;
                let s = l.step(scope, &m)?;
                (Message::Artifact(m), Seen::Artifact(s))
            }
            Machine::State(l) => {
                let m = state::decode(form, msg_type, payload)?;
                let s = l.step(&m)?;
                (Message::State(m), Seen::State(s))
            }
            Machine::Cred(l) => {
                let m = cred::decode(form, msg_type, payload)?;
                let s = l.step(now_ms, scope, &m)?;
                (Message::Cred(m), Seen::Cred(s))
            }
            Machine::Policyhint(l) => {
                let m = policyhint::decode(form, msg_type, payload)?;
                let s = l.step(&m)?;
                (Message::Policyhint(m), Seen::Policyhint(s))
            }
            Machine::Agdisc(l) => {
                let m = agdisc::decode(form, msg_type, payload)?;
                let s = l.step(now_ms, scope, &m)?;
                (Message::Agdisc(m), Seen::Agdisc(s))
            }
            Machine::Tooldisc(l) => {
                let m = tooldisc::decode(form, msg_type, payload)?;
                let s = l.step(scope, &m)?;
                (Message::Tooldisc(m), Seen::Tooldisc(s))
            }
            Machine::Relay(l) => {
                let m = relay::decode(form, msg_type, payload)?;
                let s = l.step(now_ms, scope, &m)?;
                (Message::Relay(m), Seen::Relay(s))
            }
        })
    }
}
