//! Analyses of a report: verdicts per requirement, per class and per profile (with the
//! causes that withhold a claim), the published-set section,
//! the baseline judgement, the changes between two reports, and the merge of shard reports.
//! Each is a pure function of results (or reports) and the catalog, returning its own types;
//! `report::build` assembles the per-run ones into the `Report`.

pub mod baseline;
pub mod causes;
pub mod claims;
pub mod classes;
pub mod diff;
pub mod merge;
pub mod published;
pub mod requirements;
