//! Analyses of a report: verdicts per requirement and per class, the baseline judgement,
//! the changes between two reports, and the merge of shard reports. Each is a pure function
//! of reports and the catalog.

pub mod baseline;
pub mod classes;
pub mod diff;
pub mod merge;
pub mod requirements;
