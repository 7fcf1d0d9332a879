//! `swp-conform merge`: the shard reports of one run (`--shard K/N`, K = 1..N) into one
//! report, as if the run had not been split. Shards must agree on the SUT, the vector set
//! and the options, and together cover each shard exactly once.

use super::baseline::BaselineOutcome;
use crate::catalog::Catalog;
use crate::report::model::{Report, RunInfo, ShardRun};

/// Shard reports that cannot be merged.
#[derive(Debug, Clone, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no shard reports given")]
    Empty,
    /// A report is not a shard.
    #[error("{0}: not a shard report (run with --shard K/N)")]
    NotShard(String),
    /// Shards disagree.
    #[error("shards disagree on {0}")]
    Disagree(&'static str),
    /// Shard set is not 1..N exactly once.
    #[error("shards do not cover 1..{count} exactly once: got {got}")]
    Coverage {
        /// N.
        count: u32,
        /// The K values given.
        got: String,
    },
    /// The same vector in two shards.
    #[error("vector {0} appears in more than one shard")]
    Duplicate(String),
    /// The catalog used for the trace is not the one the shards ran.
    #[error("the shards ran vector set {shards}, the catalog given is {catalog}")]
    Catalog {
        /// The shards' digest.
        shards: String,
        /// The catalog's digest.
        catalog: String,
    },
}

/// Merges shard reports; `cat` and its digest recompute the requirement and class trace.
pub fn merge(
    shards: Vec<(String, Report)>,
    cat: &Catalog,
    catalog_digest: &str,
    command: Vec<String>,
) -> Result<Report, MergeError> {
    let first = shards.first().ok_or(MergeError::Empty)?.1.clone();
    let count = first
        .shard
        .ok_or_else(|| MergeError::NotShard(shards[0].0.clone()))?
        .count;
    let mut seen = Vec::new();
    for (name, r) in &shards {
        let k = r.shard.ok_or_else(|| MergeError::NotShard(name.clone()))?;
        if k.count != count {
            return Err(MergeError::Disagree("the shard count"));
        }
        seen.push(k.index);
        if r.digests != first.digests {
            return Err(MergeError::Disagree(
                "the vector set or SUT manifest digest",
            ));
        }
        if (&r.sut.name, &r.sut.version, &r.sut.reported)
            != (&first.sut.name, &first.sut.version, &first.sut.reported)
        {
            return Err(MergeError::Disagree("the SUT"));
        }
        if r.strict != first.strict || r.run.pattern != first.run.pattern {
            return Err(MergeError::Disagree("the options (--strict, selection)"));
        }
        if r.baseline.is_some() != first.baseline.is_some() {
            return Err(MergeError::Disagree("whether a baseline was used"));
        }
    }
    seen.sort_unstable();
    if seen != (1..=count).collect::<Vec<_>>() {
        return Err(MergeError::Coverage {
            count,
            got: seen
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(","),
        });
    }
    if let Some(d) = &first.digests {
        if d.vector_set_sha256 != catalog_digest {
            return Err(MergeError::Catalog {
                shards: d.vector_set_sha256.clone(),
                catalog: catalog_digest.to_owned(),
            });
        }
    }
    let mut shards = shards;
    shards.sort_by_key(|(_, r)| r.shard.map(|k| k.index));
    let mut all = Vec::new();
    let mut run = RunInfo {
        pattern: first.run.pattern.clone(),
        no_fallback: true,
        timestamp_utc: shards
            .iter()
            .map(|(_, r)| r.run.timestamp_utc.clone())
            .min()
            .unwrap_or_default(),
        runner_git_sha: first.run.runner_git_sha.clone(),
        duration_ms: shards
            .iter()
            .map(|(_, r)| r.run.duration_ms)
            .max()
            .unwrap_or(0),
        command,
        interrupted: shards.iter().any(|(_, r)| r.run.interrupted),
        ..Default::default()
    };
    let mut baseline: Option<BaselineOutcome> = None;
    for (_, r) in &shards {
        run.shards.push(ShardRun {
            shard: r.shard.map(|k| k.to_string()).unwrap_or_default(),
            timestamp_utc: r.run.timestamp_utc.clone(),
            runner_git_sha: r.run.runner_git_sha.clone(),
            duration_ms: r.run.duration_ms,
        });
        let mut rs = r.all_results();
        for v in &mut rs {
            if let Some(t) = r.run.transcripts.get(&v.vector_id) {
                v.transcript = t.clone();
            }
        }
        all.extend(rs);
        if let Some(b) = &r.baseline {
            let m = baseline.get_or_insert_with(Default::default);
            m.expected_failures += b.expected_failures;
            m.deviations.extend(b.deviations.iter().cloned());
            m.retried.extend(b.retried.iter().cloned());
            m.not_run.extend(b.not_run.iter().cloned());
        }
    }
    let mut ids: Vec<&str> = all.iter().map(|r| r.vector_id.as_str()).collect();
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(MergeError::Duplicate(w[0].to_owned()));
    }
    let mut merged = Report::new(run, first.sut.clone(), all, first.strict);
    merged.attach(cat, first.digests.clone().unwrap_or_default());
    if let Some(mut b) = baseline {
        b.deviations.sort_by(|x, y| x.vector_id.cmp(&y.vector_id));
        b.retried.sort_by(|x, y| x.vector_id.cmp(&y.vector_id));
        // A vector listed in the baseline lands in one shard and is "not run" in the others.
        b.not_run.sort();
        b.not_run.dedup();
        b.not_run
            .retain(|id| !merged.results.iter().any(|r| &r.vector_id == id));
        merged.run_failed = !b.deviations.is_empty();
        merged.baseline = Some(b);
    }
    Ok(merged)
}
