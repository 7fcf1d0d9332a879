//! The SWP-TOOLDISC judge of one channel: the descriptors seen, the answers given to gets and
//! listings, and the requests still waiting.
//!
//! - **Stable descriptors** (§4 "stable `tool_id`"): one `(tool_id, version)` names one
//!   descriptor; another under it is refused (`DescriptorChanged`).
//! - **Deterministic gets** (§5): a `TOOLDISC_GET_RESP` answering a pending GET names the tool
//!   asked for, at the version asked for when one was (`WrongTool`); the same selector is
//!   answered with the same descriptor every time (`GetChanged`).
//! - **Paging** (§5): a page holds at most the `page_size` asked for, when one was
//!   (`PageTooLarge`); the same request (token, filter, size) gets the same page
//!   (`PageChanged`); a walk that follows the `next_page_token`s a listing issued never sees
//!   a tool twice (`RepeatedAcrossPages`). Tokens are opaque: nothing is read from them, and
//!   a token no listing issued on this channel starts a walk of its own.
//!
//! An answer with no request waiting is taken (`solicited: false`) and judged only as a
//! descriptor. A `TOOLDISC_ERR` answers the scope's oldest waiting request. A refused
//! message changes nothing.
//!
//! Caps: `max_entries` remembered descriptors, answers and pages each (the oldest is
//! forgotten), `max_pending` waiting requests (the oldest is forgotten), `max_walk_tools`
//! tools remembered per walk (past it, repeats are no longer seen).

use super::message::TooldiscMessage;
use crate::bounded::Bounded;
use crate::p1::pb::tooldisc::ToolDescriptor;
use crate::profile::{profile_codec, Ctx, Profile, WireError};
use std::collections::{HashMap, HashSet, VecDeque};
use swp_core::ErrorCode;

/// Caps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Descriptors, get answers, pages and walks remembered, each.
    pub max_entries: usize,
    /// Requests waiting for an answer.
    pub max_pending: usize,
    /// Tools remembered per walk.
    pub max_walk_tools: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_entries: 4096,
            max_pending: 256,
            max_walk_tools: 4096,
        }
    }
}

/// What a message did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A request, now waiting.
    Request,
    /// A page.
    Page {
        /// It answered a waiting listing.
        solicited: bool,
        /// It continued a walk this channel saw start.
        continued: bool,
    },
    /// A get answer.
    Tool {
        /// It answered a waiting GET.
        solicited: bool,
    },
    /// An error answer.
    Error {
        /// It answered a waiting request.
        solicited: bool,
    },
}

/// A refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    /// Another descriptor under a `(tool_id, version)` already seen.
    #[error("tool {tool_id:?} version {version:?}: another descriptor than before; a tool_id names one tool (swp-tooldisc §4)")]
    DescriptorChanged {
        /// The tool.
        tool_id: String,
        /// The version.
        version: String,
    },
    /// A GET answered with another tool or version than asked for.
    #[error("a GET for tool {asked:?} answered with tool {answered:?} (swp-tooldisc §5)")]
    WrongTool {
        /// What the GET asked for (`id@version` or `id`).
        asked: String,
        /// What came.
        answered: String,
    },
    /// The same GET answered otherwise than before.
    #[error("a GET for {0:?} answered with another descriptor than before; gets are deterministic (swp-tooldisc §5)")]
    GetChanged(String),
    /// A page larger than the size asked for.
    #[error("a page of {got} tools for a page_size of {asked} (swp-tooldisc §5)")]
    PageTooLarge {
        /// Asked.
        asked: u32,
        /// Got.
        got: usize,
    },
    /// The same listing request answered with another page.
    #[error("the same listing request answered with another page than before; pages are stable (swp-tooldisc §5)")]
    PageChanged,
    /// A tool a walk already saw, on a later page.
    #[error("tool {tool_id:?} version {version:?} again on a later page of the same listing (swp-tooldisc §5)")]
    RepeatedAcrossPages {
        /// The tool.
        tool_id: String,
        /// The version.
        version: String,
    },
}

impl CatalogError {
    /// The canonical code: every breach is an invalid profile payload.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::InvalidProfilePayload
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ListKey {
    scope: String,
    page_token: String,
    filter: String,
    page_size: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Pending {
    List(ListKey),
    Get {
        scope: String,
        tool_id: String,
        version: String,
    },
}

impl Pending {
    fn scope(&self) -> &str {
        match self {
            Pending::List(k) => &k.scope,
            Pending::Get { scope, .. } => scope,
        }
    }
}

type ToolKey = (String, String);

fn key_of(d: &ToolDescriptor) -> ToolKey {
    (d.tool_id.clone(), d.version.clone())
}

/// What a remembered descriptor costs: its encoded size (what its strings and schema octets
/// hold, near enough) and the struct.
fn descriptor_weight(d: &ToolDescriptor) -> usize {
    std::mem::size_of::<ToolDescriptor>() + prost::Message::encoded_len(d)
}

/// The listings and gets of one channel.
#[derive(Debug, Clone)]
pub struct Catalog {
    config: Config,
    descriptors: Bounded<(String, ToolKey), ToolDescriptor>,
    gets: Bounded<(String, String, String), ToolDescriptor>,
    pages: Bounded<ListKey, (Vec<ToolDescriptor>, String)>,
    /// Per issued token (with its scope and filter): the tools its walk has seen. Following a
    /// token takes its entry (no copy per page); asking for that page again starts afresh.
    walks: Bounded<(String, String, String), HashSet<ToolKey>>,
    pending: VecDeque<Pending>,
}

impl Catalog {
    /// An empty judge.
    pub fn new(config: Config) -> Self {
        let n = config.max_entries;
        Catalog {
            descriptors: Bounded::weighed(n, |(scope, (id, version)), d| {
                scope.len() + id.len() + version.len() + descriptor_weight(d)
            }),
            gets: Bounded::weighed(n, |(scope, id, version), d| {
                scope.len() + id.len() + version.len() + descriptor_weight(d)
            }),
            pages: Bounded::weighed(n, |k, (tools, next)| {
                k.scope.len()
                    + k.page_token.len()
                    + k.filter.len()
                    + next.len()
                    + tools.iter().map(descriptor_weight).sum::<usize>()
            }),
            walks: Bounded::weighed(n, |(scope, filter, token), seen| {
                scope.len()
                    + filter.len()
                    + token.len()
                    + seen
                        .iter()
                        .map(|(id, v)| std::mem::size_of::<ToolKey>() + id.len() + v.len())
                        .sum::<usize>()
            }),
            pending: VecDeque::new(),
            config,
        }
    }

    /// Octets of the descriptors, answers, pages and walks remembered (the waiting requests
    /// are capped in count and made of capped identifiers), for the owner's memory account.
    /// O(1).
    pub fn held_bytes(&self) -> usize {
        [
            &self.descriptors.bytes(),
            &self.gets.bytes(),
            &self.pages.bytes(),
            &self.walks.bytes(),
        ]
        .into_iter()
        .fold(0usize, |a, b| a.saturating_add(*b))
    }

    fn wait(&mut self, p: Pending) {
        if self.pending.len() >= self.config.max_pending {
            self.pending.pop_front();
        }
        self.pending.push_back(p);
    }

    /// The descriptors' stability, checked before anything is recorded.
    fn stable(&self, scope: &str, tools: &[ToolDescriptor]) -> Result<(), CatalogError> {
        for d in tools {
            if let Some(old) = self.descriptors.get(&(scope.to_owned(), key_of(d))) {
                if old != d {
                    return Err(CatalogError::DescriptorChanged {
                        tool_id: d.tool_id.clone(),
                        version: d.version.clone(),
                    });
                }
            }
        }
        // Two different descriptors under one key in the same message.
        let mut here: HashMap<(&str, &str), &ToolDescriptor> = HashMap::new();
        for d in tools {
            if let Some(e) = here.insert((&d.tool_id, &d.version), d) {
                if e != d {
                    return Err(CatalogError::DescriptorChanged {
                        tool_id: d.tool_id.clone(),
                        version: d.version.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    fn remember(&mut self, scope: &str, tools: &[ToolDescriptor]) {
        for d in tools {
            self.descriptors
                .insert((scope.to_owned(), key_of(d)), d.clone());
        }
    }
}

impl WireError for CatalogError {
    fn code(&self) -> ErrorCode {
        CatalogError::code(self)
    }
}

impl Profile for Catalog {
    profile_codec!(TooldiscMessage);
    type Config = Config;
    type Seen = Seen;
    type Error = CatalogError;

    fn new(config: Config) -> Self {
        Catalog::new(config)
    }

    /// Steps the judge with one message of `scope`.
    fn step(&mut self, ctx: Ctx<'_>, m: &TooldiscMessage) -> Result<Seen, CatalogError> {
        let scope = ctx.scope;
        match m {
            TooldiscMessage::ListReq(r) => {
                self.wait(Pending::List(ListKey {
                    scope: scope.to_owned(),
                    page_token: r.page_token.clone(),
                    filter: r.filter.clone(),
                    page_size: r.page_size,
                }));
                Ok(Seen::Request)
            }
            TooldiscMessage::GetReq(g) => {
                self.wait(Pending::Get {
                    scope: scope.to_owned(),
                    tool_id: g.tool_id.clone(),
                    version: g.version.clone(),
                });
                Ok(Seen::Request)
            }
            TooldiscMessage::ListResp(page) => {
                self.stable(scope, &page.tools)?;
                let i = self
                    .pending
                    .iter()
                    .position(|p| matches!(p, Pending::List(k) if k.scope == scope));
                let Some(i) = i else {
                    self.remember(scope, &page.tools);
                    return Ok(Seen::Page {
                        solicited: false,
                        continued: false,
                    });
                };
                let Pending::List(k) = self.pending[i].clone() else {
                    return Ok(Seen::Request);
                };
                if k.page_size > 0 && page.tools.len() > k.page_size as usize {
                    return Err(CatalogError::PageTooLarge {
                        asked: k.page_size,
                        got: page.tools.len(),
                    });
                }
                if let Some((tools, next)) = self.pages.get(&k) {
                    if *tools != page.tools || *next != page.next_page_token {
                        return Err(CatalogError::PageChanged);
                    }
                }
                let walk_key = (scope.to_owned(), k.filter.clone(), k.page_token.clone());
                let empty = HashSet::new();
                let before = if k.page_token.is_empty() {
                    &empty
                } else {
                    self.walks.get(&walk_key).unwrap_or(&empty)
                };
                let continued = !k.page_token.is_empty() && self.walks.get(&walk_key).is_some();
                let mut here: HashSet<(&str, &str)> = HashSet::new();
                for d in &page.tools {
                    let repeated = !here.insert((&d.tool_id, &d.version))
                        || (!before.is_empty()
                            && before.contains(&(d.tool_id.clone(), d.version.clone())));
                    if repeated {
                        return Err(CatalogError::RepeatedAcrossPages {
                            tool_id: d.tool_id.clone(),
                            version: d.version.clone(),
                        });
                    }
                }
                let mut seen = if k.page_token.is_empty() {
                    HashSet::new()
                } else {
                    self.walks.take(&walk_key).unwrap_or_default()
                };
                self.pending.remove(i);
                self.remember(scope, &page.tools);
                self.pages.insert(
                    k.clone(),
                    (page.tools.clone(), page.next_page_token.clone()),
                );
                if !page.next_page_token.is_empty() {
                    for d in &page.tools {
                        if seen.len() < self.config.max_walk_tools {
                            seen.insert(key_of(d));
                        }
                    }
                    self.walks.insert(
                        (scope.to_owned(), k.filter, page.next_page_token.clone()),
                        seen,
                    );
                }
                Ok(Seen::Page {
                    solicited: true,
                    continued,
                })
            }
            TooldiscMessage::GetResp(r) => {
                let Some(d) = &r.tool else {
                    return Ok(Seen::Tool { solicited: false });
                };
                self.stable(scope, std::slice::from_ref(d))?;
                let gets: Vec<usize> = self
                    .pending
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| matches!(p, Pending::Get { scope: s, .. } if s == scope))
                    .map(|(i, _)| i)
                    .collect();
                let Some(&first) = gets.first() else {
                    self.remember(scope, std::slice::from_ref(d));
                    return Ok(Seen::Tool { solicited: false });
                };
                let matching = gets.iter().copied().find(|&i| {
                    matches!(&self.pending[i], Pending::Get { tool_id, version, .. }
                        if *tool_id == d.tool_id && (version.is_empty() || *version == d.version))
                });
                let Some(i) = matching else {
                    let asked = match &self.pending[first] {
                        Pending::Get {
                            tool_id, version, ..
                        } if !version.is_empty() => format!("{tool_id}@{version}"),
                        Pending::Get { tool_id, .. } => tool_id.clone(),
                        Pending::List(_) => String::new(),
                    };
                    return Err(CatalogError::WrongTool {
                        asked,
                        answered: format!("{}@{}", d.tool_id, d.version),
                    });
                };
                let Pending::Get {
                    tool_id, version, ..
                } = self.pending[i].clone()
                else {
                    return Ok(Seen::Request);
                };
                let gk = (scope.to_owned(), tool_id.clone(), version.clone());
                if let Some(old) = self.gets.get(&gk) {
                    if old != d {
                        return Err(CatalogError::GetChanged(if version.is_empty() {
                            tool_id
                        } else {
                            format!("{tool_id}@{version}")
                        }));
                    }
                }
                self.pending.remove(i);
                self.remember(scope, std::slice::from_ref(d));
                self.gets.insert(gk, d.clone());
                Ok(Seen::Tool { solicited: true })
            }
            TooldiscMessage::Err(_) => {
                let i = self.pending.iter().position(|p| p.scope() == scope);
                if let Some(i) = i {
                    self.pending.remove(i);
                }
                Ok(Seen::Error {
                    solicited: i.is_some(),
                })
            }
        }
    }
}
