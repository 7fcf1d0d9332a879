//! Profile dispatch by `profile_id` (core-spec §6) and the profile-ID registry ranges
//! (profile-registry §2-3). Profile crates implement [`Profile`]; the core only routes.

use crate::envelope::Envelope;
use crate::error::ErrorCode;
use crate::reject::CoreError;
use std::collections::BTreeMap;

/// What the registry says about a `profile_id` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileIdClass {
    /// 0: reserved.
    Reserved,
    /// 1, 2, 10-19: assigned to a named profile.
    Assigned(&'static str),
    /// 3-9: reserved for foundational profiles; never assignable by provisional/private use.
    ReservedFoundational,
    /// Other IDs in 1-1023: standards-track, not yet allocated.
    StandardsTrack,
    /// 1024-4095.
    Provisional,
    /// 4096 and above.
    PrivateUse,
}

/// Classifies a `profile_id` per the registry.
pub fn classify(profile_id: u64) -> ProfileIdClass {
    match profile_id {
        0 => ProfileIdClass::Reserved,
        1 => ProfileIdClass::Assigned("SWP.MCPMAP"),
        2 => ProfileIdClass::Assigned("SWP.A2A"),
        3..=9 => ProfileIdClass::ReservedFoundational,
        10 => ProfileIdClass::Assigned("SWP-AGDISC"),
        11 => ProfileIdClass::Assigned("SWP-TOOLDISC"),
        12 => ProfileIdClass::Assigned("SWP-RPC"),
        13 => ProfileIdClass::Assigned("SWP-EVENTS"),
        14 => ProfileIdClass::Assigned("SWP-ARTIFACT"),
        15 => ProfileIdClass::Assigned("SWP-CRED"),
        16 => ProfileIdClass::Assigned("SWP-POLICYHINT"),
        17 => ProfileIdClass::Assigned("SWP-STATE"),
        18 => ProfileIdClass::Assigned("SWP-OBS"),
        19 => ProfileIdClass::Assigned("SWP-RELAY"),
        20..=1023 => ProfileIdClass::StandardsTrack,
        1024..=4095 => ProfileIdClass::Provisional,
        _ => ProfileIdClass::PrivateUse,
    }
}

/// What a profile returns for one envelope it handled.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Handled {
    /// Envelopes to send back, in order.
    pub replies: Vec<Envelope>,
}

/// A profile-level reject: a canonical code and a human-readable reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {detail}")]
pub struct ProfileReject {
    /// The canonical code.
    pub code: ErrorCode,
    /// Why.
    pub detail: String,
}

/// Connection facts a profile may use for authorization (S1 identity surface).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PeerContext {
    /// The authenticated peer identity, when a security binding established one.
    pub identity: Option<String>,
    /// Receiver clock in ms since the Unix epoch.
    pub now_ms: u64,
}

/// A profile implementation: semantics for one `profile_id`.
pub trait Profile: Send {
    /// The `profile_id` it serves.
    fn profile_id(&self) -> u64;
    /// Its registered name.
    fn name(&self) -> &str;
    /// Handles one envelope that passed core validation.
    fn handle(&mut self, env: &Envelope, peer: &PeerContext) -> Result<Handled, ProfileReject>;
}

/// Routes envelopes to profiles by `profile_id`.
#[derive(Default)]
pub struct Registry {
    profiles: BTreeMap<u64, Box<dyn Profile>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.profiles.keys()).finish()
    }
}

/// Registering a profile failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// Another profile already serves this ID.
    #[error("profile_id {0} is already registered")]
    Duplicate(u64),
    /// IDs 0 and 3-9 can never carry a profile in this version line.
    #[error("profile_id {0} is reserved and cannot be registered")]
    Reserved(u64),
}

impl Registry {
    /// An empty registry: every profile is unknown.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Adds a profile.
    pub fn register(&mut self, p: Box<dyn Profile>) -> Result<(), RegisterError> {
        let id = p.profile_id();
        if matches!(
            classify(id),
            ProfileIdClass::Reserved | ProfileIdClass::ReservedFoundational
        ) {
            return Err(RegisterError::Reserved(id));
        }
        if self.profiles.contains_key(&id) {
            return Err(RegisterError::Duplicate(id));
        }
        self.profiles.insert(id, p);
        Ok(())
    }

    /// Whether a profile serves `profile_id`.
    pub fn knows(&self, profile_id: u64) -> bool {
        self.profiles.contains_key(&profile_id)
    }

    /// The registered IDs, ascending.
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.profiles.keys().copied()
    }

    /// The profile for `profile_id`, or `ERR_UNKNOWN_PROFILE`.
    pub fn route(&mut self, profile_id: u64) -> Result<&mut dyn Profile, CoreError> {
        match self.profiles.get_mut(&profile_id) {
            Some(p) => Ok(p.as_mut()),
            None => Err(CoreError::UnknownProfile { profile_id }),
        }
    }

    /// Routes and handles one envelope.
    pub fn dispatch(&mut self, env: &Envelope, peer: &PeerContext) -> Result<Handled, Dispatch> {
        let p = self.route(env.profile_id).map_err(Dispatch::Core)?;
        p.handle(env, peer).map_err(Dispatch::Profile)
    }
}

/// Dispatch failed in the core (unknown profile) or in the profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Dispatch {
    /// The core could not route it.
    #[error(transparent)]
    Core(CoreError),
    /// The profile rejected it.
    #[error(transparent)]
    Profile(ProfileReject),
}

impl Dispatch {
    /// The canonical code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Dispatch::Core(e) => e.code(),
            Dispatch::Profile(r) => r.code,
        }
    }
}

/// A profile that accepts any message type and payload: a stand-in for a profile whose
/// semantics this build does not implement, so core conformance can be checked on its
/// own. It answers nothing.
#[derive(Debug, Clone)]
pub struct Opaque {
    id: u64,
    name: String,
}

impl Opaque {
    /// An opaque profile for `id`.
    pub fn new(id: u64) -> Self {
        let name = match classify(id) {
            ProfileIdClass::Assigned(n) => n.to_owned(),
            _ => format!("opaque-{id}"),
        };
        Opaque { id, name }
    }
}

impl Profile for Opaque {
    fn profile_id(&self) -> u64 {
        self.id
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn handle(&mut self, _: &Envelope, _: &PeerContext) -> Result<Handled, ProfileReject> {
        Ok(Handled::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_classes() {
        assert_eq!(classify(0), ProfileIdClass::Reserved);
        assert_eq!(classify(1), ProfileIdClass::Assigned("SWP.MCPMAP"));
        assert_eq!(classify(5), ProfileIdClass::ReservedFoundational);
        assert_eq!(classify(19), ProfileIdClass::Assigned("SWP-RELAY"));
        assert_eq!(classify(20), ProfileIdClass::StandardsTrack);
        assert_eq!(classify(4095), ProfileIdClass::Provisional);
        assert_eq!(classify(u64::MAX), ProfileIdClass::PrivateUse);
    }

    #[test]
    fn unknown_profile_is_err_unknown_profile() {
        let mut r = Registry::new();
        r.register(Box::new(Opaque::new(1))).unwrap();
        assert!(r.register(Box::new(Opaque::new(1))).is_err());
        assert!(r.register(Box::new(Opaque::new(4))).is_err());
        let env = Envelope {
            profile_id: 999,
            ..Envelope::default()
        };
        let e = r.dispatch(&env, &PeerContext::default()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnknownProfile);
        let env = Envelope {
            profile_id: 1,
            ..Envelope::default()
        };
        assert!(r.dispatch(&env, &PeerContext::default()).is_ok());
    }
}
