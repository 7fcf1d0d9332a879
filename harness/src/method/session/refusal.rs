//! The P1 profiles' own error messages (which profile and message type carries one, its
//! name) and reading a refusal from one, for the reject judges and the conversation.

use super::obs::Obs;

/// The `*_ERR` message of the SWP-* profiles whose error carries `code` as field 1, by
/// (profile_id, msg_type). SWP-RPC's `RPC_ERR` is a call's outcome, not a refusal.
const PROFILE_ERRORS: &[(u64, u64, &str)] = &[
    (10, 4, "AGDISC_ERR"),
    (11, 5, "TOOLDISC_ERR"),
    (13, 5, "EVT_ERR"),
    (14, 5, "ART_ERR"),
    (15, 4, "CRED_ERR"),
    (16, 4, "POLICY_ERR"),
    (17, 4, "STATE_ERR"),
    (18, 4, "OBS_ERR"),
    (19, 5, "RELAY_ERR"),
];

/// Field 1 of a profile's error message; the rest is skipped.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct ProfileErr {
    #[prost(string, tag = "1")]
    pub code: String,
}

/// The name of a profile's error message (`CRED_ERR`), or `?` for a frame that is none.
pub(super) fn profile_err_name(env: &crate::frames::Envelope) -> &'static str {
    PROFILE_ERRORS
        .iter()
        .find(|(p, t, _)| (*p, *t) == (env.profile_id, env.msg_type))
        .map_or("?", |(_, _, n)| n)
}

/// The msg_type of a profile's error message, for the SWP-* profiles that have one.
pub fn profile_err_type(profile_id: u64) -> Option<u64> {
    PROFILE_ERRORS
        .iter()
        .find(|(p, _, _)| *p == profile_id)
        .map(|(_, t, _)| *t)
}

/// A profile's own error message read as a reject (manifest `reject_signal.profile_errors`).
pub(super) fn profile_error(env: &crate::frames::Envelope, form: crate::p1::P1Form) -> Option<Obs> {
    let (_, _, name) = PROFILE_ERRORS
        .iter()
        .find(|(p, t, _)| (*p, *t) == (env.profile_id, env.msg_type))?;
    let bare = form
        .unwrap(env.profile_id, env.msg_type, &env.payload)
        .ok()?;
    let e = <ProfileErr as prost::Message>::decode(&bare[..]).ok()?;
    if e.code.parse::<crate::frames::ErrorCode>().is_ok() {
        return Some(Obs::Error {
            code: e.code,
            msg_id: env.msg_id.clone(),
            frame: Box::new(env.clone()),
        });
    }
    // A profile-specific code (or none) says the frame was refused, not which canonical
    // code applies.
    Some(Obs::Refused(format!("{name} {:?}", e.code)))
}
