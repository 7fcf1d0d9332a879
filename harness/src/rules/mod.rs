//! The P1 profile rules: what one side of an SWP connection may send in A2A (profile 2) and
//! the SWP-* profiles 10-19, judged from the specification text alone (the profile docs of the
//! spec kit, the project's `.proto` annexes and the readings recorded in
//! `docs/spec-issues-profiles.md` / `docs/spec-issues.md`). Each rule is a named check citing
//! a requirement ID of `vectors/requirements/*.yaml`; `docs/profile-rules.md` lists them.
//!
//! [`check_message`] judges one message alone (it decodes as its msg_type's message and
//! carries its class's required fields). A [`Connection`] judges a message against
//! everything seen before on the connection, from both sides: open calls, lifecycles,
//! subscriptions' event ids, transfers, chains, deliveries. A refused message changes
//! nothing, because the harness sends invalid messages on purpose and a receiver must refuse
//! them without effect.
//!
//! Every per-connection table is bounded ([`MAX_ENTRIES`] entries, ids up to [`MAX_ID_BYTES`]):
//! past a bound the rules that would need the forgotten entry judge leniently (they accept),
//! so a long or hostile connection cannot make the judge grow or give a false verdict.

use crate::plan::placeholders::Params;
use sha2::{Digest as _, Sha256};
use std::collections::{BTreeMap, VecDeque};
use std::time::{SystemTime, UNIX_EPOCH};

mod a2a;
mod agdisc;
mod artifact;
mod cred;
mod events;
mod obs;
mod policyhint;
mod relay;
mod rpc;
mod state;
mod tooldisc;

/// Most entries any one per-connection table holds (open calls, event ids, chains...).
pub const MAX_ENTRIES: usize = 4096;
/// Longest id (task_id, rpc_id, event_id, delivery_id...) the judge remembers; messages with
/// longer ids are judged by their own fields only.
pub const MAX_ID_BYTES: usize = 1024;
/// Margin around a window's edge (replay window, id retention, credential expiry) inside
/// which no verdict is given: the harness sees its own send time, the endpoint acts a little
/// later, and the two clocks are not the same clock.
pub const EDGE_SLACK_MS: u64 = 1_000;
/// Default timing slack of a relay's retries (`RELAY_RETRY_TOLERANCE_MS`, SI-P19-3).
pub const DEFAULT_RELAY_TOLERANCE_MS: u64 = 250;

/// Who sent a message on the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    /// The conformance harness.
    Harness,
    /// The implementation under test.
    Endpoint,
}

impl Side {
    /// The peer of this side.
    pub fn other(self) -> Side {
        match self {
            Side::Harness => Side::Endpoint,
            Side::Endpoint => Side::Harness,
        }
    }

    /// Index into per-side arrays.
    fn index(self) -> usize {
        match self {
            Side::Harness => 0,
            Side::Endpoint => 1,
        }
    }
}

/// How much a requirement binds (the level of its registry entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// MUST (or "required").
    Must,
    /// MUST NOT.
    MustNot,
    /// SHOULD.
    Should,
    /// MAY.
    May,
}

impl Level {
    /// The keyword as the registry spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::MustNot => "MUST NOT",
            Level::Should => "SHOULD",
            Level::May => "MAY",
        }
    }
}

/// One named check and the clause it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Short stable name, `<profile>.<what>`.
    pub name: &'static str,
    /// The profile's short name (A2A, RPC, ...).
    pub profile: &'static str,
    /// The requirement ID it cites (`vectors/requirements/*.yaml`).
    pub requirement: &'static str,
    /// The level of that requirement.
    pub level: Level,
    /// Section of the profile doc (or an SI entry) the rule rests on.
    pub section: &'static str,
    /// What it checks, in one line.
    pub checks: &'static str,
}

impl Rule {
    /// The violation of this rule with the given detail.
    pub(crate) fn violation(&self, detail: impl Into<String>) -> Violation {
        Violation {
            rule: self.name,
            requirement: self.requirement,
            detail: detail.into(),
        }
    }
}

/// A rule a message broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{detail} ({rule}, {requirement})")]
pub struct Violation {
    /// The rule's short stable name, e.g. `rpc.one-terminal-outcome`.
    pub rule: &'static str,
    /// The requirement ID it cites, e.g. `RPC-005`.
    pub requirement: &'static str,
    /// What was wrong with this message.
    pub detail: String,
}

/// The P1 decode rule shared by every profile.
pub(crate) const P1_DECODE: Rule = Rule {
    name: "p1.decode",
    profile: "P1",
    requirement: "P1-001",
    level: Level::Must,
    section: "P1 §2",
    checks: "the payload decodes (proto3) as the message its msg_type carries",
};

/// Every rule of every profile, in profile order.
pub fn rules() -> Vec<&'static Rule> {
    let mut all: Vec<&'static Rule> = vec![&P1_DECODE];
    for set in [
        a2a::RULES,
        agdisc::RULES,
        tooldisc::RULES,
        rpc::RULES,
        events::RULES,
        artifact::RULES,
        cred::RULES,
        policyhint::RULES,
        state::RULES,
        obs::RULES,
        relay::RULES,
    ] {
        all.extend_from_slice(set);
    }
    all
}

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

/// One connection's state for every P1 profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    config: Config,
    unix_ms_at_open: Option<u64>,
    a2a: a2a::State,
    agdisc: agdisc::State,
    tooldisc: tooldisc::State,
    rpc: rpc::State,
    events: events::State,
    artifact: artifact::State,
    cred: cred::State,
    policyhint: policyhint::State,
    state: state::State,
    obs: obs::State,
    relay: relay::State,
}

impl Connection {
    /// A connection that has seen nothing yet; its wall clock (used only for SWP-CRED
    /// expiries, which are Unix times) starts at the system clock now.
    pub fn new(config: &Config) -> Self {
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .ok()
            .and_then(|d| u64::try_from(d.as_millis()).ok());
        Connection {
            config: config.clone(),
            unix_ms_at_open: unix,
            a2a: a2a::State::default(),
            agdisc: agdisc::State::default(),
            tooldisc: tooldisc::State::default(),
            rpc: rpc::State::default(),
            events: events::State::default(),
            artifact: artifact::State::default(),
            cred: cred::State::default(),
            policyhint: policyhint::State::default(),
            state: state::State::default(),
            obs: obs::State::default(),
            relay: relay::State::default(),
        }
    }

    /// Sets the Unix time (ms) at which the connection opened, for deterministic replays of
    /// a transcript; `None` turns the wall-clock rules (credential expiry) off.
    pub fn with_unix_ms_at_open(mut self, unix_ms: Option<u64>) -> Self {
        self.unix_ms_at_open = unix_ms;
        self
    }

    /// A message `side` sent at `now_ms` (milliseconds since the connection opened): the bare
    /// P1 message octets. `Ok`: valid given everything seen so far, and the state moves on.
    /// `Err`: it breaks a rule, and the state does not change. A profile that is not P1 is
    /// `Ok` and ignored.
    pub fn observe(
        &mut self,
        now_ms: u64,
        side: Side,
        profile_id: u64,
        msg_type: u64,
        bare: &[u8],
    ) -> Result<(), Violation> {
        let ctx = Ctx {
            now_ms,
            side,
            config: &self.config,
            unix_now_ms: self.unix_ms_at_open.map(|t| t.saturating_add(now_ms)),
        };
        match profile_id {
            a2a::PROFILE_ID => self.a2a.observe(&ctx, a2a::check(msg_type, bare)?),
            agdisc::PROFILE_ID => self.agdisc.observe(&ctx, agdisc::check(msg_type, bare)?),
            tooldisc::PROFILE_ID => self
                .tooldisc
                .observe(&ctx, tooldisc::check(msg_type, bare)?),
            rpc::PROFILE_ID => self.rpc.observe(&ctx, rpc::check(msg_type, bare)?),
            events::PROFILE_ID => self.events.observe(&ctx, events::check(msg_type, bare)?),
            artifact::PROFILE_ID => self
                .artifact
                .observe(&ctx, artifact::check(msg_type, bare)?),
            cred::PROFILE_ID => self.cred.observe(&ctx, cred::check(msg_type, bare)?),
            policyhint::PROFILE_ID => self
                .policyhint
                .observe(&ctx, policyhint::check(msg_type, bare)?),
            state::PROFILE_ID => self.state.observe(&ctx, state::check(msg_type, bare)?),
            obs::PROFILE_ID => self.obs.observe(&ctx, obs::check(msg_type, bare)?),
            relay::PROFILE_ID => self.relay.observe(&ctx, relay::check(msg_type, bare)?),
            _ => Ok(()),
        }
    }
}

/// Stateless checks of one message: it decodes as the message its msg_type carries and
/// carries the fields its class requires. A profile that is not P1 is `Ok`.
pub fn check_message(profile_id: u64, msg_type: u64, bare: &[u8]) -> Result<(), Violation> {
    match profile_id {
        a2a::PROFILE_ID => a2a::check(msg_type, bare).map(drop),
        agdisc::PROFILE_ID => agdisc::check(msg_type, bare).map(drop),
        tooldisc::PROFILE_ID => tooldisc::check(msg_type, bare).map(drop),
        rpc::PROFILE_ID => rpc::check(msg_type, bare).map(drop),
        events::PROFILE_ID => events::check(msg_type, bare).map(drop),
        artifact::PROFILE_ID => artifact::check(msg_type, bare).map(drop),
        cred::PROFILE_ID => cred::check(msg_type, bare).map(drop),
        policyhint::PROFILE_ID => policyhint::check(msg_type, bare).map(drop),
        state::PROFILE_ID => state::check(msg_type, bare).map(drop),
        obs::PROFILE_ID => obs::check(msg_type, bare).map(drop),
        relay::PROFILE_ID => relay::check(msg_type, bare).map(drop),
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------
// Shared helpers of the profile files.
// ---------------------------------------------------------------------------------------

/// Decodes the bare message (unknown fields are skipped, P1 §4).
pub(crate) fn decode<M: prost::Message + Default>(bare: &[u8], what: &str) -> Result<M, Violation> {
    M::decode(bare)
        .map_err(|e| P1_DECODE.violation(format!("the payload is not a valid {what}: {e}")))
}

/// A SHA-256 over length-prefixed parts: content compared without keeping the content.
pub(crate) type Digest = [u8; 32];

/// The digest of `parts`, each length-prefixed so that no two part lists collide by framing.
pub(crate) fn digest(parts: &[&[u8]]) -> Digest {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().into()
}

/// Whether an id is short enough to remember.
pub(crate) fn trackable(id: &[u8]) -> bool {
    id.len() <= MAX_ID_BYTES
}

/// An id for a violation's detail: quoted text when printable, hex otherwise, cut at 48 octets.
pub(crate) fn show(b: &[u8]) -> String {
    const MAX: usize = 48;
    let cut = b.get(..MAX).unwrap_or(b);
    let mut s = match std::str::from_utf8(cut) {
        Ok(t) if !t.chars().any(char::is_control) => format!("{t:?}"),
        _ => format!("hex:{}", hex::encode(cut)),
    };
    if b.len() > MAX {
        s.push('…');
    }
    s
}

/// Whether `s` is non-empty and all lower-case hex digits.
pub(crate) fn lower_hex(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// A map with at most [`MAX_ENTRIES`] entries. An insert past the bound is dropped and
/// remembered as an overflow, after which the rules that look entries up judge leniently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table<K: Ord, V> {
    map: BTreeMap<K, V>,
    cap: usize,
    overflowed: bool,
}

impl<K: Ord, V> Default for Table<K, V> {
    fn default() -> Self {
        Table::with_cap(MAX_ENTRIES)
    }
}

impl<K: Ord, V> Table<K, V> {
    /// An empty table holding at most `cap` entries.
    pub(crate) fn with_cap(cap: usize) -> Self {
        Table {
            map: BTreeMap::new(),
            cap,
            overflowed: false,
        }
    }

    pub(crate) fn get(&self, k: &K) -> Option<&V> {
        self.map.get(k)
    }

    pub(crate) fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        self.map.get_mut(k)
    }

    pub(crate) fn contains(&self, k: &K) -> bool {
        self.map.contains_key(k)
    }

    /// Inserts or replaces; a new key past the bound is dropped (and the overflow noted).
    pub(crate) fn insert(&mut self, k: K, v: V) {
        if self.map.len() >= self.cap && !self.map.contains_key(&k) {
            self.overflowed = true;
            return;
        }
        self.map.insert(k, v);
    }

    pub(crate) fn remove(&mut self, k: &K) -> Option<V> {
        self.map.remove(k)
    }

    /// Whether an entry was ever dropped for want of room.
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    pub(crate) fn is_full(&self) -> bool {
        self.map.len() >= self.cap
    }

    pub(crate) fn retain(&mut self, f: impl FnMut(&K, &mut V) -> bool) {
        self.map.retain(f);
    }

    /// The entries from `from` on, in key order.
    pub(crate) fn range_from(&self, from: K) -> impl Iterator<Item = (&K, &V)> {
        self.map.range(from..)
    }
}

/// A FIFO with at most [`MAX_ENTRIES`] items (pending requests); a push past the bound is
/// dropped and remembered, after which rules that match answers to requests judge leniently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Queue<T> {
    items: VecDeque<T>,
    overflowed: bool,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            items: VecDeque::new(),
            overflowed: false,
        }
    }
}

impl<T> Queue<T> {
    pub(crate) fn push(&mut self, t: T) {
        if self.items.len() >= MAX_ENTRIES {
            self.overflowed = true;
        } else {
            self.items.push_back(t);
        }
    }

    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Notes that an item could not be kept (an id too long to remember): answers that
    /// cannot be matched are then judged leniently, as after an overflow.
    pub(crate) fn mark_lost(&mut self) {
        self.overflowed = true;
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The position of the first item matching `f`.
    pub(crate) fn position(&self, f: impl FnMut(&T) -> bool) -> Option<usize> {
        self.items.iter().position(f)
    }

    pub(crate) fn remove(&mut self, at: usize) -> Option<T> {
        self.items.remove(at)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }

    pub(crate) fn front(&self) -> Option<&T> {
        self.items.front()
    }

    pub(crate) fn pop_front(&mut self) -> Option<T> {
        self.items.pop_front()
    }

    pub(crate) fn clear(&mut self) {
        self.items.clear();
    }
}

/// One value per side.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct PerSide<T>([T; 2]);

impl<T> PerSide<T> {
    pub(crate) fn get(&self, side: Side) -> &T {
        let [h, e] = &self.0;
        match side.index() {
            0 => h,
            _ => e,
        }
    }

    pub(crate) fn get_mut(&mut self, side: Side) -> &mut T {
        let [h, e] = &mut self.0;
        match side.index() {
            0 => h,
            _ => e,
        }
    }
}

#[cfg(test)]
pub(crate) mod testkit {
    //! Test helpers shared by the profile files: a connection driver that checks every
    //! refusal leaves the state unchanged, and the sequence property of the proptests.
    use super::*;

    /// Encodes a prost message.
    pub fn enc<M: prost::Message>(m: &M) -> Vec<u8> {
        m.encode_to_vec()
    }

    /// A connection under test with a fixed wall clock, so expiry rules are deterministic.
    pub struct Run {
        pub conn: Connection,
        pub now: u64,
        pub profile: u64,
    }

    /// Unix ms the test connections open at.
    pub const OPEN_UNIX_MS: u64 = 1_800_000_000_000;

    impl Run {
        pub fn new(profile: u64) -> Run {
            Run::with(profile, Config::default())
        }

        pub fn with(profile: u64, config: Config) -> Run {
            Run {
                conn: Connection::new(&config).with_unix_ms_at_open(Some(OPEN_UNIX_MS)),
                now: 0,
                profile,
            }
        }

        /// Moves the clock to `t` ms since the connection opened.
        pub fn at(&mut self, t: u64) -> &mut Self {
            self.now = t;
            self
        }

        /// Observes and returns the verdict; a refusal must leave the state unchanged.
        pub fn send<M: prost::Message>(
            &mut self,
            side: Side,
            msg_type: u64,
            m: &M,
        ) -> Result<(), Violation> {
            let before = self.conn.clone();
            let r = self
                .conn
                .observe(self.now, side, self.profile, msg_type, &enc(m));
            if r.is_err() {
                assert_eq!(before, self.conn, "a refused message changed the state");
            }
            r
        }

        /// The message must be accepted (no state snapshot: bulk loops stay linear).
        #[track_caller]
        pub fn ok<M: prost::Message>(&mut self, side: Side, msg_type: u64, m: &M) {
            let r = self
                .conn
                .observe(self.now, side, self.profile, msg_type, &enc(m));
            if let Err(v) = r {
                panic!("expected accept, got {v}");
            }
        }

        /// The message must be refused by `rule`.
        #[track_caller]
        pub fn err<M: prost::Message>(&mut self, side: Side, msg_type: u64, m: &M, rule: &str) {
            match self.send(side, msg_type, m) {
                Ok(()) => panic!("expected {rule}, got accept"),
                Err(v) => assert_eq!(v.rule, rule, "wrong rule: {v}"),
            }
        }
    }

    /// One step of a generated sequence.
    pub type Step = (u64, Side, u64, Vec<u8>);

    /// The sequence property every profile's proptest asserts: no panic; a refusal leaves
    /// the state unchanged; and dropping the refused steps changes no other verdict.
    pub fn sequence_property(profile: u64, config: &Config, steps: &[Step]) {
        let mut conn = Connection::new(config).with_unix_ms_at_open(Some(OPEN_UNIX_MS));
        let mut verdicts = Vec::with_capacity(steps.len());
        for (now, side, msg_type, bare) in steps {
            let before = conn.clone();
            let r = conn.observe(*now, *side, profile, *msg_type, bare);
            if r.is_err() {
                assert_eq!(before, conn, "a refused message changed the state");
            }
            verdicts.push(r.is_ok());
        }
        let mut again = Connection::new(config).with_unix_ms_at_open(Some(OPEN_UNIX_MS));
        for ((now, side, msg_type, bare), accepted) in steps.iter().zip(&verdicts) {
            if *accepted {
                let r = again.observe(*now, *side, profile, *msg_type, bare);
                assert!(
                    r.is_ok(),
                    "without the refused steps, a step was judged otherwise: {r:?}"
                );
            }
        }
        assert_eq!(conn, again, "the refused steps left a trace");
    }

    /// A declared-everything config for the proptests.
    pub fn full_config() -> Config {
        Config {
            rpc_replay_window_ms: Some(5_000),
            events_id_retention_ms: Some(10_000),
            events_severities: Some(vec!["info".into(), "warn".into(), "error".into()]),
            artifact_chunk_bytes: Some(4),
            state_id_scheme: Some(IdScheme::Sha256),
            obs_own_tracestate_keys: Some(vec!["own".into()]),
            cred_max_chain_length: Some(2),
            cred_max_ttl_ms: Some(60_000),
            policyhint_conflict_policy: Some(ConflictPolicy::LaterWins),
            relay_dedupe_window_ms: Some(10_000),
            relay_dead_letter_reasons: Some(vec!["retry_exhausted".into()]),
            relay_retry_delays_ms: Some(vec![100, 200]),
            relay_retry_backoff_ms: None,
            relay_max_attempts: None,
            relay_dead_letter_after_ms: Some(100),
            relay_retry_tolerance_ms: 50,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
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

    #[test]
    fn a_violation_displays_its_detail_rule_and_requirement() {
        let v = P1_DECODE.violation("bad octets");
        assert_eq!(v.to_string(), "bad octets (p1.decode, P1-001)");
    }

    #[test]
    fn profiles_that_are_not_p1_are_ignored() {
        let mut c = Connection::new(&Config::default());
        for p in [0, 1, 3, 9, 20, 99, u64::MAX] {
            assert_eq!(c.observe(0, Side::Endpoint, p, 7, b"\xff\xff"), Ok(()));
            assert_eq!(check_message(p, 0, b"\xff"), Ok(()));
        }
        assert_eq!(
            c,
            Connection::new(&Config::default()).with_unix_ms_at_open(c.unix_ms_at_open)
        );
    }

    #[test]
    fn every_p1_profile_has_a_rule_set_and_every_msg_type_0_is_refused() {
        for (p, _, _) in crate::p1::pb::PACKAGES {
            let v = check_message(p, 0, b"").expect_err("msg_type 0 is unassigned");
            assert!(v.rule.ends_with(".msg-type-assigned"), "{v}");
            // The next msg_type after the last assigned one is unassigned too.
            let last = (1..=9)
                .take_while(|t| crate::p1::pb::message_for(p, *t).is_some())
                .count();
            let v = check_message(p, last as u64 + 1, b"").expect_err("past the last");
            assert!(v.rule.ends_with(".msg-type-assigned"), "{v}");
        }
    }

    #[test]
    fn rule_names_are_unique_and_cite_registered_requirements() {
        let registry: String = [
            include_str!("../../../vectors/requirements/a2a-profile.yaml"),
            include_str!("../../../vectors/requirements/swp-agdisc.yaml"),
            include_str!("../../../vectors/requirements/swp-tooldisc.yaml"),
            include_str!("../../../vectors/requirements/swp-rpc.yaml"),
            include_str!("../../../vectors/requirements/swp-events.yaml"),
            include_str!("../../../vectors/requirements/swp-artifact.yaml"),
            include_str!("../../../vectors/requirements/swp-cred.yaml"),
            include_str!("../../../vectors/requirements/swp-policyhint.yaml"),
            include_str!("../../../vectors/requirements/swp-state.yaml"),
            include_str!("../../../vectors/requirements/swp-obs.yaml"),
            include_str!("../../../vectors/requirements/swp-relay.yaml"),
            include_str!("../../../vectors/requirements/profile-payload-encoding-p1.yaml"),
        ]
        .concat();
        let docs = include_str!("../../../docs/profile-rules.md");
        let mut seen = std::collections::BTreeSet::new();
        for r in rules() {
            assert!(seen.insert(r.name), "duplicate rule name {}", r.name);
            let entry = format!("- id: {}\n", r.requirement);
            let at = registry
                .find(&entry)
                .unwrap_or_else(|| panic!("{} cites unregistered {}", r.name, r.requirement));
            // The level of the rule is the level of the registry entry it cites.
            let level_line = registry[at + entry.len()..].lines().next().unwrap_or("");
            let level = level_line
                .trim()
                .strip_prefix("level:")
                .map(|l| l.split('#').next().unwrap_or("").trim())
                .unwrap_or("");
            assert_eq!(
                level,
                r.level.as_str(),
                "{} cites {}",
                r.name,
                r.requirement
            );
            assert!(
                docs.contains(&format!("`{}`", r.name)),
                "docs/profile-rules.md does not list {}",
                r.name
            );
        }
    }

    proptest! {
        #[test]
        fn random_octets_never_panic_and_check_message_agrees_with_a_fresh_connection(
            profile in prop::sample::select(vec![1u64, 2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]),
            msg_type in 0u64..8,
            bare in prop::collection::vec(any::<u8>(), 0..64),
        ) {
            let stateless = check_message(profile, msg_type, &bare);
            let mut c = Connection::new(&Config::default());
            let before = c.clone();
            let stateful = c.observe(0, Side::Endpoint, profile, msg_type, &bare);
            if stateless.is_err() {
                prop_assert_eq!(&stateful, &stateless);
            }
            if stateful.is_err() {
                prop_assert_eq!(before, c);
            }
        }

        #[test]
        fn random_octet_sequences_at_any_time_keep_the_state_on_refusal(
            steps in prop::collection::vec(
                (
                    any::<u64>(),
                    prop::sample::select(vec![Side::Harness, Side::Endpoint]),
                    prop::sample::select(vec![2u64, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]),
                    0u64..6,
                    prop::collection::vec(any::<u8>(), 0..48),
                ),
                0..40,
            ),
        ) {
            let mut c = Connection::new(&testkit::full_config());
            for (now, side, profile, msg_type, bare) in steps {
                let before = c.clone();
                if c.observe(now, side, profile, msg_type, &bare).is_err() {
                    prop_assert_eq!(&before, &c);
                }
            }
        }
    }
}
