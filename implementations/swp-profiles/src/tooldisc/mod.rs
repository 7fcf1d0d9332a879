//! Profile 11, SWP-TOOLDISC (`swp-tooldisc.md`) over P1: message classes by msg_type, what a
//! descriptor must carry and what a schema reference may look like ([`message`]), and the
//! per-channel judge of listings and gets: pages within the asked size, stable pages and
//! descriptors, no tool twice on one walk, gets answered with the tool and version asked
//! for, the same way every time ([`catalog`]). Cursors are opaque: only tokens a listing
//! issued are followed, and nothing is read from them.

pub mod catalog;
pub mod message;

pub use catalog::{Catalog, CatalogError, Config, Seen};
pub use message::{decode, encode, schema_ref_valid, TooldiscMessage};

/// The profile id of SWP-TOOLDISC.
pub const PROFILE_ID: u64 = 11;
/// msg_type of `TOOLDISC_LIST_REQ`.
pub const MSG_LIST_REQ: u64 = 1;
/// msg_type of `TOOLDISC_LIST_RESP`.
pub const MSG_LIST_RESP: u64 = 2;
/// msg_type of `TOOLDISC_GET_REQ`.
pub const MSG_GET_REQ: u64 = 3;
/// msg_type of `TOOLDISC_GET_RESP`.
pub const MSG_GET_RESP: u64 = 4;
/// msg_type of `TOOLDISC_ERR`.
pub const MSG_ERR: u64 = 5;

/// The `TooldiscErr.code` values this library uses.
pub mod codes {
    /// No tool with that id (and version) (TOOLDISC-013).
    pub const NOT_FOUND: &str = "not_found";
    /// A page token this responder did not issue for this listing.
    pub const INVALID_PAGE_TOKEN: &str = "invalid_page_token";
}
