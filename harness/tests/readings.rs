//! Open readings a manifest declares (issue 27): each value has vectors of its own, and
//! every such vector must judge. Declaring the other reading on the reference (which takes
//! the first) makes the other reading's vectors run there and fail, so none of them passes
//! whatever the SUT does, though no reference implements the second reading.

mod common;
use common::root;

use swp_conform::report::result::Verdict;

/// reference-tls.yaml with `from` (a whole params line) replaced by `to`; the verdict of
/// each vector of `ids`, in catalog order.
fn verdicts(name: &str, from: &str, to: &str, ids: &[&str]) -> Vec<(String, Verdict)> {
    let text = std::fs::read_to_string(root().join("implementations/manifests/reference-tls.yaml"))
        .unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(from))
        .unwrap_or_else(|| panic!("reference-tls.yaml declares no {from}"));
    let text = text.replace(line, to);
    common::run_with_manifest(&format!("readings-{name}"), &text, ids)
        .into_iter()
        .map(|r| {
            (
                r.vector_id[..r.vector_id.find('_').unwrap() + 5].to_owned(),
                r.verdict,
            )
        })
        .collect()
}

fn owned(v: &[(&str, Verdict)]) -> Vec<(String, Verdict)> {
    v.iter().map(|(i, x)| ((*i).to_owned(), *x)).collect()
}

#[test]
fn an_echo_that_keeps_batches_fails_the_one_by_one_reading() {
    assert_eq!(
        verdicts(
            "echo-batch",
            "EVENTS_ECHO_BATCH:",
            "  EVENTS_ECHO_BATCH: 0",
            &["events_0004", "events_0112"]
        ),
        owned(&[
            ("events_0004", Verdict::NotApplicable),
            ("events_0112", Verdict::Fail)
        ])
    );
}

#[test]
fn a_replay_that_waits_fails_the_retry_reading() {
    assert_eq!(
        verdicts(
            "replay-running",
            "RPC_REPLAY_WHILE_RUNNING:",
            "  RPC_REPLAY_WHILE_RUNNING: 1",
            &["rpc_0111", "rpc_0120"]
        ),
        owned(&[
            ("rpc_0111", Verdict::NotApplicable),
            ("rpc_0120", Verdict::Fail)
        ])
    );
}

#[test]
fn an_ack_sent_first_fails_the_ack_last_reading() {
    let rs = verdicts(
        "ack-order",
        "POLICYHINT_ACK_ORDER:",
        "  POLICYHINT_ACK_ORDER: 1",
        &["policyhint_0001"],
    );
    assert_eq!(rs, owned(&[("policyhint_0001", Verdict::Fail)]));
}

#[test]
fn a_stack_that_resolves_conflicts_fails_the_refuse_reading() {
    let rs = verdicts(
        "conflicts-refused",
        "POLICYHINT_CONFLICT_POLICY:",
        "  POLICYHINT_CONFLICT_POLICY: 2",
        &["policyhint_0003", "policyhint_0108"],
    );
    assert_eq!(
        rs,
        owned(&[
            ("policyhint_0003", Verdict::NotApplicable),
            ("policyhint_0108", Verdict::Fail)
        ])
    );
}
