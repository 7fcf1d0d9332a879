//! What the SUT manifest declares for the profile rules ([`Config`], read from its `params`
//! map), the timing margins the rules allow, and the context a profile's rules see besides
//! the message ([`Ctx`]).

use super::verdict::Side;
use std::collections::BTreeMap;

/// The manifest's `params` map (the same shape as the plan stage's `Params`); spelled out
/// here so that the rules depend on the JSON they read, not on the stage that fills vectors.
type Params = BTreeMap<String, serde_json::Value>;

/// Margin around a window's edge (replay window, id retention, credential expiry) inside
/// which no verdict is given: the harness sees its own send time, the endpoint acts a little
/// later, and the two clocks are not the same clock.
pub const EDGE_SLACK_MS: u64 = 1_000;
/// Default timing slack of a relay's retries (`RELAY_RETRY_TOLERANCE_MS`, SI-P19-3).
pub const DEFAULT_RELAY_TOLERANCE_MS: u64 = 250;

/// How SWP-STATE ids relate to blobs (`STATE_ID_SCHEME`, docs/spec-issues-profiles.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdScheme {
    /// Every id is the 32 raw octets of the SHA-256 of the blob.
    Sha256,
    /// An id starting `sha256:` is that prefix plus 64 lower-case hex digits of the blob's
    /// SHA-256; any other id is a name.
    Tagged,
    /// Ids are names; nothing is checked.
    Opaque,
}

impl IdScheme {
    /// Its name, as `STATE_ID_SCHEME` gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            IdScheme::Sha256 => "sha256",
            IdScheme::Tagged => "tagged",
            IdScheme::Opaque => "opaque",
        }
    }
}

/// Which of two constraints on one key and scope of a set is in effect
/// (`POLICYHINT_CONFLICT_POLICY`, SI-P-POLICYHINT-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictPolicy {
    /// 0: the later one.
    LaterWins,
    /// 1: the earlier one.
    EarlierWins,
}

/// What the SUT manifest declares, read once from its `params` map. Every field is `None`
/// when the manifest does not declare it (or declares it in a form that does not parse), and
/// the rules it governs then judge leniently: they never assume a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `RPC_REPLAY_WINDOW_MS`: the SUT's idempotency replay window (swp-rpc §6).
    pub rpc_replay_window_ms: Option<u64>,
    /// `EVENTS_ID_RETENTION_MS`: how long event_ids are remembered (SWP-EVENTS §5 reading).
    pub events_id_retention_ms: Option<u64>,
    /// `EVENTS_SEVERITIES`: the SUT's documented severity enumeration (swp-events §6).
    pub events_severities: Option<Vec<String>>,
    /// `ARTIFACT_CHUNK_BYTES`: the chunk size the SUT sends (swp-artifact §4).
    pub artifact_chunk_bytes: Option<u64>,
    /// `STATE_ID_SCHEME`: how the SUT's state ids relate to blobs (swp-state §4, §6).
    pub state_id_scheme: Option<IdScheme>,
    /// `OBS_OWN_TRACESTATE_KEYS`: tracestate keys the SUT may rewrite as its own (swp-obs §4).
    pub obs_own_tracestate_keys: Option<Vec<String>>,
    /// `CRED_MAX_CHAIN_LENGTH`: delegation entries a chain may hold (SI-P-CRED-2).
    pub cred_max_chain_length: Option<u64>,
    /// `CRED_MAX_TTL_MS`: how far past the receiver's clock an expiry may lie (SI-P-CRED-3).
    pub cred_max_ttl_ms: Option<u64>,
    /// `POLICYHINT_CONFLICT_POLICY`: 0 the later constraint wins, 1 the earlier.
    pub policyhint_conflict_policy: Option<ConflictPolicy>,
    /// `RELAY_DEDUPE_WINDOW_MS`: the relay's dedupe retention window (swp-relay §4).
    pub relay_dedupe_window_ms: Option<u64>,
    /// `RELAY_DEAD_LETTER_REASONS`: the relay's finite set of dead-letter reasons.
    pub relay_dead_letter_reasons: Option<Vec<String>>,
    /// `RELAY_RETRY_DELAYS_MS`: the wait after attempt k before attempt k+1 (SI-P19-3).
    pub relay_retry_delays_ms: Option<Vec<u64>>,
    /// `RELAY_RETRY_BACKOFF_MS`: a constant wait between attempts (SI-P19-3).
    pub relay_retry_backoff_ms: Option<u64>,
    /// `RELAY_MAX_ATTEMPTS`: delivery attempts, the first one counted (SI-P19-3).
    pub relay_max_attempts: Option<u64>,
    /// `RELAY_DEAD_LETTER_AFTER_MS`: the wait after the last attempt before the dead letter.
    pub relay_dead_letter_after_ms: Option<u64>,
    /// `RELAY_RETRY_TOLERANCE_MS`: timing slack of retries (default 250).
    pub relay_retry_tolerance_ms: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            rpc_replay_window_ms: None,
            events_id_retention_ms: None,
            events_severities: None,
            artifact_chunk_bytes: None,
            state_id_scheme: None,
            obs_own_tracestate_keys: None,
            cred_max_chain_length: None,
            cred_max_ttl_ms: None,
            policyhint_conflict_policy: None,
            relay_dedupe_window_ms: None,
            relay_dead_letter_reasons: None,
            relay_retry_delays_ms: None,
            relay_retry_backoff_ms: None,
            relay_max_attempts: None,
            relay_dead_letter_after_ms: None,
            relay_retry_tolerance_ms: DEFAULT_RELAY_TOLERANCE_MS,
        }
    }
}

/// Longest list a list-valued param may give (a manifest is input too).
const MAX_PARAM_LIST: usize = 4096;

fn param_u64(params: &Params, name: &str) -> Option<u64> {
    match params.get(name)? {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A list param: a JSON array of scalars, or one string of comma-separated items.
fn param_strings(params: &Params, name: &str) -> Option<Vec<String>> {
    let items: Vec<String> = match params.get(name)? {
        serde_json::Value::Array(a) => a
            .iter()
            .take(MAX_PARAM_LIST)
            .map(|v| match v {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Number(n) => Some(n.to_string()),
                serde_json::Value::Bool(b) => Some(b.to_string()),
                _ => None,
            })
            .collect::<Option<Vec<String>>>()?,
        serde_json::Value::String(s) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .take(MAX_PARAM_LIST)
            .map(str::to_owned)
            .collect(),
        _ => return None,
    };
    Some(items)
}

fn param_u64s(params: &Params, name: &str) -> Option<Vec<u64>> {
    param_strings(params, name)?
        .iter()
        .map(|s| s.trim().parse().ok())
        .collect()
}

impl Config {
    /// Reads the params the rules use; anything missing or malformed stays undeclared.
    pub fn from_params(params: &Params) -> Config {
        let state_id_scheme = match params.get("STATE_ID_SCHEME") {
            Some(serde_json::Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
                "sha256" => Some(IdScheme::Sha256),
                "tagged" => Some(IdScheme::Tagged),
                "opaque" => Some(IdScheme::Opaque),
                _ => None,
            },
            _ => None,
        };
        let policyhint_conflict_policy = match param_u64(params, "POLICYHINT_CONFLICT_POLICY") {
            Some(0) => Some(ConflictPolicy::LaterWins),
            Some(1) => Some(ConflictPolicy::EarlierWins),
            _ => None,
        };
        Config {
            rpc_replay_window_ms: param_u64(params, "RPC_REPLAY_WINDOW_MS"),
            events_id_retention_ms: param_u64(params, "EVENTS_ID_RETENTION_MS"),
            events_severities: param_strings(params, "EVENTS_SEVERITIES"),
            // A chunk size of 0 places nothing: read as undeclared.
            artifact_chunk_bytes: param_u64(params, "ARTIFACT_CHUNK_BYTES").filter(|n| *n > 0),
            state_id_scheme,
            obs_own_tracestate_keys: param_strings(params, "OBS_OWN_TRACESTATE_KEYS"),
            cred_max_chain_length: param_u64(params, "CRED_MAX_CHAIN_LENGTH"),
            cred_max_ttl_ms: param_u64(params, "CRED_MAX_TTL_MS"),
            policyhint_conflict_policy,
            relay_dedupe_window_ms: param_u64(params, "RELAY_DEDUPE_WINDOW_MS"),
            relay_dead_letter_reasons: param_strings(params, "RELAY_DEAD_LETTER_REASONS"),
            relay_retry_delays_ms: param_u64s(params, "RELAY_RETRY_DELAYS_MS"),
            relay_retry_backoff_ms: param_u64(params, "RELAY_RETRY_BACKOFF_MS"),
            relay_max_attempts: param_u64(params, "RELAY_MAX_ATTEMPTS").filter(|n| *n > 0),
            relay_dead_letter_after_ms: param_u64(params, "RELAY_DEAD_LETTER_AFTER_MS"),
            relay_retry_tolerance_ms: param_u64(params, "RELAY_RETRY_TOLERANCE_MS")
                .unwrap_or(DEFAULT_RELAY_TOLERANCE_MS),
        }
    }
}

/// What a profile's rules see besides the message.
pub(crate) struct Ctx<'a> {
    /// Milliseconds since the connection opened.
    pub now_ms: u64,
    /// Who sent the message.
    pub side: Side,
    /// The SUT's declarations.
    pub config: &'a Config,
    /// The judge's wall clock now, Unix milliseconds (`None` when unknown).
    pub unix_now_ms: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_reads_every_declared_param_and_leaves_the_rest_undeclared() {
        let mut p = Params::new();
        p.insert("RPC_REPLAY_WINDOW_MS".into(), json!(3000));
        p.insert("EVENTS_ID_RETENTION_MS".into(), json!("86400000"));
        p.insert("EVENTS_SEVERITIES".into(), json!(["info", "warn"]));
        p.insert("ARTIFACT_CHUNK_BYTES".into(), json!(0));
        p.insert("STATE_ID_SCHEME".into(), json!("tagged"));
        p.insert("OBS_OWN_TRACESTATE_KEYS".into(), json!("a, b"));
        p.insert("RELAY_RETRY_DELAYS_MS".into(), json!([100, "200"]));
        p.insert("RELAY_MAX_ATTEMPTS".into(), json!({"no": 1}));
        p.insert("POLICYHINT_CONFLICT_POLICY".into(), json!(1));
        let c = Config::from_params(&p);
        assert_eq!(c.rpc_replay_window_ms, Some(3000));
        assert_eq!(c.events_id_retention_ms, Some(86_400_000));
        assert_eq!(
            c.events_severities,
            Some(vec!["info".into(), "warn".into()])
        );
        assert_eq!(c.artifact_chunk_bytes, None, "0 places nothing");
        assert_eq!(c.state_id_scheme, Some(IdScheme::Tagged));
        assert_eq!(
            c.obs_own_tracestate_keys,
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(c.relay_retry_delays_ms, Some(vec![100, 200]));
        assert_eq!(c.relay_max_attempts, None, "malformed is undeclared");
        assert_eq!(
            c.policyhint_conflict_policy,
            Some(ConflictPolicy::EarlierWins)
        );
        assert_eq!(c.relay_retry_tolerance_ms, DEFAULT_RELAY_TOLERANCE_MS);
        assert_eq!(c.cred_max_chain_length, None);
        assert_eq!(Config::from_params(&Params::new()), Config::default());
    }
}
