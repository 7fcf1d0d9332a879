//! The session method's judgement against an in-memory endpoint on a virtual clock, in the
//! manner of quinn-proto's `Pair`: a scripted peer answers each frame the harness sends,
//! after a delay on the virtual clock, so every observation path (error frame, close, probe,
//! silence, garbage) is exercised without sockets and without waiting.

use super::conv::Conv;
use super::{steps, Inputs, StepFailure};
use crate::connect::wire::Recv;
use crate::frames::{e1, Envelope, ErrorCode, Extensions, FrameDecoder, Limits};
use crate::method::conv::clock::{Clock, VirtualClock};
use crate::method::conv::script::ScriptedWire;
use crate::plan::expr::Params;
use crate::plan::materialize::{Action, ConcreteStep, Expectation};
use crate::report::result::Verdict;
use crate::support::cancel::Cancel;
use crate::sut::SessionSpec;
use bytes::Bytes;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the scripted peer does with one frame: events after a delay in ms.
type Script = Box<dyn FnMut(&Envelope) -> Vec<(u64, Recv)> + Send>;

/// An endpoint in memory: the conversation core's scripted peer ([`ScriptedWire`]) with a
/// frame decoder in front, so the script sees the envelopes the harness sends and its
/// answers arrive on the virtual clock.
fn mem_wire(clock: &VirtualClock, mut script: Script) -> ScriptedWire {
    let mut frames = FrameDecoder::new(unbounded());
    let by_frame = move |b: &[u8]| {
        frames.feed(b);
        let mut out = Vec::new();
        while let Ok(Some(body)) = frames.next_body() {
            if let Ok(env) = e1::decode(&body, &unbounded()) {
                out.extend(script(&env));
            }
        }
        out
    };
    ScriptedWire::new(clock, Box::new(by_frame), Vec::new())
}

fn unbounded() -> Limits {
    Limits {
        max_frame_bytes: u32::MAX,
        min_msg_id_bytes: 1,
        max_msg_id_bytes: usize::MAX,
        max_ext_bytes: usize::MAX,
        max_payload_bytes: usize::MAX,
    }
}

/// A frame, prefixed, from the endpoint.
fn frame(profile_id: u64, msg_type: u64, msg_id: &Bytes, payload: &str) -> Recv {
    let env = Envelope {
        version: 1,
        profile_id,
        msg_type,
        flags: 0,
        ts_unix_ms: 0,
        msg_id: msg_id.clone(),
        extensions: Extensions::from_entries(Vec::<(u64, Vec<u8>)>::new()),
        payload: Bytes::copy_from_slice(payload.as_bytes()),
    };
    Recv::Data(
        e1::frame_bytes(&env)
            .map(|b| b.to_vec())
            .unwrap_or_default(),
    )
}

fn error_frame(msg_id: &Bytes, code: &str) -> Recv {
    frame(
        1,
        2,
        msg_id,
        &format!(
            r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"no","data":{{"swp_error":"{code}"}}}}}}"#
        ),
    )
}

fn is_probe(e: &Envelope) -> bool {
    e.msg_id.starts_with(b"swp-probe")
}

fn payload_is(e: &Envelope, s: &str) -> bool {
    e.payload[..] == *s.as_bytes()
}

/// An endpoint that answers the probe after `ms` and treats every frame whose payload is
/// `bad` with `on_bad`.
fn endpoint(
    ms: u64,
    mut on_bad: impl FnMut(&Envelope) -> Vec<(u64, Recv)> + Send + 'static,
) -> Script {
    Box::new(move |e| {
        if is_probe(e) {
            vec![(
                ms,
                frame(
                    1,
                    2,
                    &e.msg_id,
                    r#"{"jsonrpc":"2.0","id":"probe","result":{}}"#,
                ),
            )]
        } else if payload_is(e, "bad") {
            on_bad(e)
        } else {
            Vec::new()
        }
    })
}

const ERROR_FRAMES: &str = "transport: tcp\nreject_signal: {mode: error-frame, error_frame: {profile_id: 1, msg_type: 2, code_pointer: /error/data/swp_error}}\nprobe: {frame: {profile_id: 1, msg_type: 1, payload: {json: {jsonrpc: '2.0', id: probe, method: ping}}}, reply_profile_id: 1, reply_msg_type: 2}\n";

/// The error-frame manifest, or with another `reject_signal` when `reject` is not empty.
fn spec(reject: &str) -> SessionSpec {
    let text = if reject.is_empty() {
        ERROR_FRAMES.to_owned()
    } else {
        ERROR_FRAMES.replace(
        "{mode: error-frame, error_frame: {profile_id: 1, msg_type: 2, code_pointer: /error/data/swp_error}}",
            reject,
        )
    };
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{e}"))
}

fn send(payload: &str, n: u64, expect: Vec<Expectation>) -> ConcreteStep {
    let env = Envelope {
        version: 1,
        profile_id: 1,
        msg_type: 1,
        flags: 0,
        ts_unix_ms: 0,
        msg_id: Bytes::from(format!("msg-id-{n:04}")),
        extensions: Extensions::from_entries(Vec::<(u64, Vec<u8>)>::new()),
        payload: Bytes::copy_from_slice(payload.as_bytes()),
    };
    ConcreteStep {
        step: n as usize,
        rep: 0,
        note: None,
        upstream: false,
        second: false,
        now_ms: 0,
        action: Action::Send(e1::frame_bytes(&env).unwrap_or_default()),
        expect,
    }
}

fn accept() -> Expectation {
    Expectation::Accept {
        fields: Default::default(),
        unknown_flags: None,
        profile_may_refuse: false,
        reject_allowed: false,
        answered: false,
    }
}

fn reject(code: ErrorCode) -> Expectation {
    Expectation::Reject {
        allowed: vec![code],
        terminates: None,
        code_requirements: vec!["CORE-040".into()],
    }
}

/// What a passing vector showed (expected and observed folded per step, the last code), as
/// the tests read it.
#[derive(Debug)]
struct Summary {
    expected: String,
    observed: String,
    code: Option<String>,
}

/// The run as one result: the failure that decides the vector (the first failing step,
/// then inconclusive, then a reject whose code could not be seen), or what it showed.
fn conclude(run: steps::Run) -> Result<Summary, Box<StepFailure>> {
    let all: Vec<&steps::StepRecord> = run.records.iter().collect();
    if let Some((_, f)) = super::outcome::deciding(&all) {
        return Err(Box::new(f.clone()));
    }
    if let Some(f) = run.after.first() {
        return Err(f.clone());
    }
    Ok(Summary {
        expected: crate::method::evaluate::fold_runs(
            run.records.iter().map(|r| r.expected.clone()),
        ),
        observed: crate::method::evaluate::fold_runs(
            run.records.iter().map(|r| r.observed.clone()),
        ),
        code: run.records.iter().rev().find_map(|r| r.code.clone()),
    })
}

/// Runs `steps` against `script` with `spec`; the outcome and the virtual time it took.
fn run(
    spec: &SessionSpec,
    script: Script,
    steps: &[ConcreteStep],
) -> (Result<Summary, Box<StepFailure>>, Duration) {
    let clock = VirtualClock::new();
    let t0 = clock.now();
    let wire = mem_wire(&clock, script);
    let mut conv = Conv::new(
        Box::new(wire),
        spec,
        &clock,
        Cancel::new(),
        8 * 1024 * 1024,
        true,
    );
    let r = run_conv(&mut conv, steps);
    (r, clock.now() - t0)
}

/// As [`run`], for a vector of a profile (not the core layer): a profile's refusal of a frame
/// expected to be accepted fails it.
fn run_profile(
    spec: &SessionSpec,
    script: Script,
    steps: &[ConcreteStep],
) -> Result<Summary, Box<StepFailure>> {
    let clock = VirtualClock::new();
    let wire = mem_wire(&clock, script);
    let mut conv = Conv::new(
        Box::new(wire),
        spec,
        &clock,
        Cancel::new(),
        8 * 1024 * 1024,
        false,
    );
    run_conv(&mut conv, steps)
}

/// Runs `steps` on a prepared conversation.
fn run_conv(conv: &mut Conv<'_>, steps: &[ConcreteStep]) -> Result<Summary, Box<StepFailure>> {
    conclude(run_run(conv, steps))
}

/// Runs `steps` on a prepared conversation, every step's record.
fn run_run(conv: &mut Conv<'_>, steps: &[ConcreteStep]) -> steps::Run {
    let mut params = Params::new();
    params.insert("NOW_MS", 0);
    let mut requests = Default::default();
    let mut inputs = Inputs {
        params: &params,
        requests: &mut requests,
        identity: None,
        identity_probe: None,
        p1_form: Default::default(),
        unknown_profile_closes: false,
        profiles: super::profiles::Judge::new(&Default::default(), Default::default(), None),
    };
    steps::run_steps(conv, steps, &mut inputs, 0)
}

fn failure(r: Result<Summary, Box<StepFailure>>) -> StepFailure {
    match r {
        Ok(s) => panic!("expected a failure, the vector passed: {s:?}"),
        Err(f) => *f,
    }
}

#[test]
fn an_accept_is_confirmed_by_the_probe() {
    let (r, _) = run(
        &spec(""),
        endpoint(5, |_| Vec::new()),
        &[send("ok", 1, vec![accept()]), send("ok", 2, vec![accept()])],
    );
    let s = r.unwrap_or_else(|f| panic!("{f:?}"));
    assert_eq!(s.expected, "accept ×2");
    assert_eq!(s.observed, "accepted ×2");
}

#[test]
fn a_reject_with_the_expected_code_passes_and_records_it() {
    let (r, _) = run(
        &spec(""),
        endpoint(5, |e| {
            vec![(2, error_frame(&e.msg_id, "ERR_INVALID_FRAME"))]
        }),
        &[send("bad", 1, vec![reject(ErrorCode::InvalidFrame)])],
    );
    let s = r.unwrap_or_else(|f| panic!("{f:?}"));
    assert_eq!(s.code.as_deref(), Some("ERR_INVALID_FRAME"));
}

#[test]
fn another_code_fails_only_at_the_code_requirement() {
    let f = failure(
        run(
            &spec(""),
            endpoint(5, |e| {
                vec![(2, error_frame(&e.msg_id, "ERR_INVALID_ENVELOPE"))]
            }),
            &[send("bad", 1, vec![reject(ErrorCode::InvalidFrame)])],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Fail);
    assert_eq!(f.code.as_deref(), Some("ERR_INVALID_ENVELOPE"));
    assert_eq!(f.code_only, Some(vec!["CORE-040".to_owned()]), "{f:?}");
}

#[test]
fn silence_where_a_reject_belongs_is_an_accept_when_the_probe_is_answered() {
    let f = failure(
        run(
            &spec(""),
            endpoint(5, |_| Vec::new()),
            &[send("bad", 1, vec![reject(ErrorCode::InvalidFrame)])],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Fail);
    assert!(
        f.why.starts_with("accepted: no reject within 3000 ms"),
        "{}",
        f.why
    );
}

#[test]
fn silence_with_an_unanswered_probe_is_a_timeout() {
    let (r, took) = run(
        &spec(""),
        Box::new(|_| Vec::new()),
        &[send("bad", 1, vec![reject(ErrorCode::InvalidFrame)])],
    );
    let f = failure(r);
    assert_eq!(f.verdict, Verdict::Timeout, "{f:?}");
    // One step for the reject, one for the probe: 6 s of virtual time, none of it waited.
    assert_eq!(took, Duration::from_millis(6000));
}

#[test]
fn a_close_is_the_reject_of_a_close_only_endpoint_and_hides_its_code() {
    let (r, _) = run(
        &spec("{mode: close}"),
        endpoint(5, |_| vec![(1, Recv::Eof)]),
        &[send("bad", 1, vec![reject(ErrorCode::InvalidFrame)])],
    );
    let f = failure(r);
    assert_eq!(f.verdict, Verdict::RejectCodeNotObservable, "{f:?}");
}

#[test]
fn a_close_where_the_manifest_promises_error_frames_fails() {
    let f = failure(
        run(
            &spec(""),
            endpoint(5, |_| vec![(1, Recv::Eof)]),
            &[send("bad", 1, vec![reject(ErrorCode::InvalidFrame)])],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Fail);
    assert!(
        f.why
            .contains("without the error frame the manifest promises"),
        "{}",
        f.why
    );
}

#[test]
fn an_error_frame_for_an_accepted_frame_names_its_step() {
    let f = failure(
        run(
            &spec(""),
            endpoint(5, |e| {
                vec![(2, error_frame(&e.msg_id, "ERR_INVALID_ENVELOPE"))]
            }),
            &[
                send("ok", 1, vec![accept()]),
                send("bad", 2, vec![accept()]),
            ],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Fail);
    assert_eq!(
        f.why,
        "step 3: refused with error frame ERR_INVALID_ENVELOPE (on its msg_id, 2 ms after it was sent), expected accept"
    );
}

/// Runs `steps` and returns every step's record, for tests about steps after the first
/// failure.
fn records(spec: &SessionSpec, script: Script, steps: &[ConcreteStep]) -> Vec<steps::StepRecord> {
    let clock = VirtualClock::new();
    let wire = mem_wire(&clock, script);
    let mut conv = Conv::new(
        Box::new(wire),
        spec,
        &clock,
        Cancel::new(),
        8 * 1024 * 1024,
        false,
    );
    run_run(&mut conv, steps).records
}

/// An endpoint that refuses every frame, the probe included, on its msg_id after `ms`.
fn refuses_everything(ms: u64) -> Script {
    Box::new(move |e| vec![(ms, error_frame(&e.msg_id, "ERR_SECURITY_POLICY"))])
}

#[test]
fn a_slow_refusal_of_an_accepted_frame_is_not_the_next_steps_reject() {
    // The shape of cred_0004: accepts, then rejects. The endpoint refuses every frame
    // 250 ms late, after the 150 ms quiet window that confirms the accepts: the refusals
    // on the accepted frames' msg_ids fail those steps, whenever they arrive.
    let steps = [
        send("ok", 0, vec![accept()]),
        send("ok", 1, vec![accept()]),
        send("ok", 2, vec![accept()]),
        send("bad", 3, vec![reject(ErrorCode::SecurityPolicy)]),
        send("bad", 4, vec![reject(ErrorCode::SecurityPolicy)]),
    ];
    let rs = records(&spec(""), refuses_everything(250), &steps);
    let verdicts: Vec<_> = rs.iter().map(steps::StepRecord::verdict).collect();
    assert_eq!(
        verdicts,
        [
            Some(Verdict::Fail),
            Some(Verdict::Fail),
            Some(Verdict::Fail),
            Some(Verdict::Pass),
            Some(Verdict::Pass)
        ],
        "{rs:#?}"
    );
    assert!(rs[0].failures[0].why.contains("on its msg_id"), "{rs:#?}");
    // The same endpoint answering at once is caught by the quiet window, as before.
    let f = failure(run(&spec(""), refuses_everything(5), &steps).0);
    assert!(f.why.starts_with("step 1: "), "{}", f.why);
}

#[test]
fn a_refusal_without_a_msg_id_of_ours_goes_to_the_one_open_frame_or_to_none() {
    // The endpoint's error frames carry a msg_id of its own.
    let own = || Bytes::from_static(b"endpoint-own-id");
    let refuse_bad = endpoint(5, move |_| {
        vec![(5, error_frame(&own(), "ERR_SECURITY_POLICY"))]
    });
    let rs = records(
        &spec(""),
        refuse_bad,
        &[
            send("ok", 0, vec![accept()]),
            send("bad", 1, vec![reject(ErrorCode::SecurityPolicy)]),
        ],
    );
    assert_eq!(rs[1].verdict(), Some(Verdict::Pass), "{rs:#?}");
    // Two accepts open and an uncorrelated refusal: one of them was refused, whichever.
    let refuse_all = Box::new(move |e: &Envelope| {
        if is_probe(e) {
            vec![(
                5,
                frame(
                    1,
                    2,
                    &e.msg_id,
                    r#"{"jsonrpc":"2.0","id":"probe","result":{}}"#,
                ),
            )]
        } else {
            vec![(
                1,
                error_frame(
                    &Bytes::from_static(b"endpoint-own-id"),
                    "ERR_SECURITY_POLICY",
                ),
            )]
        }
    });
    let rs = records(
        &spec(""),
        refuse_all,
        &[send("ok", 0, vec![accept()]), send("ok", 1, vec![accept()])],
    );
    assert_eq!(rs[0].verdict(), Some(Verdict::Fail), "{rs:#?}");
    assert!(
        rs[0].failures[0]
            .why
            .contains("carrying no msg_id the harness sent"),
        "{rs:#?}"
    );
}

#[test]
fn a_vector_goes_on_after_a_failed_reject_while_the_stream_is_open() {
    // Step 1 is refused with another code (a failure of the code alone); the stream stays
    // open, so step 2 runs and is judged on its own.
    let rs = records(
        &spec(""),
        endpoint(5, |e| {
            vec![(1, error_frame(&e.msg_id, "ERR_INVALID_ENVELOPE"))]
        }),
        &[
            send("bad", 0, vec![reject(ErrorCode::SecurityPolicy)]),
            send("ok", 1, vec![accept()]),
        ],
    );
    assert_eq!(rs[0].verdict(), Some(Verdict::Fail));
    assert!(rs[0].failures[0].code_only.is_some());
    assert_eq!(rs[1].verdict(), Some(Verdict::Pass), "{rs:#?}");
}

#[test]
fn steps_after_a_close_are_listed_as_not_run() {
    let closing = endpoint(5, |_| vec![(1, Recv::Eof)]);
    let rs = records(
        &spec("{mode: close}"),
        closing,
        &[
            send("ok", 0, vec![accept()]),
            send("bad", 1, vec![reject(ErrorCode::SecurityPolicy)]),
            send("ok", 2, vec![accept()]),
            send("ok", 3, vec![accept()]),
        ],
    );
    assert_eq!(
        rs[1].verdict(),
        Some(Verdict::RejectCodeNotObservable),
        "{rs:#?}"
    );
    for r in &rs[2..] {
        assert_eq!(r.verdict(), None, "{r:?}");
        assert!(r
            .not_run
            .as_deref()
            .unwrap()
            .contains("closed during step 2"));
    }
}

#[test]
fn output_that_is_not_framing_fails_the_accept() {
    let f = failure(
        run(
            &spec(""),
            endpoint(5, |_| {
                vec![(1, Recv::Data(b"HTTP/1.1 400 Bad Request\r\n".to_vec()))]
            }),
            &[send("bad", 1, vec![accept()])],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Fail);
    assert!(f.why.contains("not valid framing"), "{}", f.why);
}

#[test]
fn silence_is_watched_on_the_clock_not_waited_for() {
    let (r, took) = run(
        &spec(""),
        endpoint(5, |_| Vec::new()),
        &[send(
            "quiet",
            1,
            vec![Expectation::Silence {
                ms: 20_000,
                refusal_allowed: false,
            }],
        )],
    );
    r.unwrap_or_else(|f| panic!("{f:?}"));
    assert_eq!(took, Duration::from_millis(20_000));
}

#[test]
fn a_silence_longer_than_the_vector_limit_is_the_vectors_mistake_not_a_pass() {
    let f = failure(
        run(
            &spec(""),
            endpoint(5, |_| Vec::new()),
            &[send(
                "quiet",
                1,
                vec![Expectation::Silence {
                    ms: 60_000,
                    refusal_allowed: false,
                }],
            )],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::HarnessError, "{f:?}");
}

#[test]
fn a_frame_during_an_expected_silence_fails_it() {
    let f = failure(
        run(
            &spec(""),
            endpoint(5, |e| vec![(10, frame(1, 2, &e.msg_id, "{}"))]),
            &[send(
                "bad",
                1,
                vec![Expectation::Silence {
                    ms: 1_000,
                    refusal_allowed: false,
                }],
            )],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Fail);
    assert!(
        f.why
            .contains("expected silence for 1000 ms, observed frame"),
        "{}",
        f.why
    );
}

#[test]
fn error_json_checks_the_error_frame_of_the_reject() {
    // error_frame() carries JSON-RPC code -32600.
    let steps = |code: i64| {
        vec![send(
            "bad",
            1,
            vec![
                reject(ErrorCode::InvalidFrame),
                Expectation::ErrorJson(serde_json::json!({"error": {"code": code}})),
            ],
        )]
    };
    let script = || {
        endpoint(5, |e| {
            vec![(2, error_frame(&e.msg_id, "ERR_INVALID_FRAME"))]
        })
    };
    let (r, _) = run(&spec(""), script(), &steps(-32600));
    r.unwrap_or_else(|f| panic!("{f:?}"));
    let f = failure(run(&spec(""), script(), &steps(-32700)).0);
    assert_eq!(f.verdict, Verdict::Fail);
    assert!(f.why.contains("does not contain"), "{}", f.why);
}

/// An RPC request frame step (profile 12) for rpc_id `r`.
fn rpc_request(n: u64, expect: Vec<Expectation>) -> ConcreteStep {
    use crate::p1::pb::types::rpc::RpcReq;
    let payload = prost::Message::encode_to_vec(&RpcReq {
        rpc_id: Bytes::from_static(b"r"),
        method: "m".into(),
        ..RpcReq::default()
    });
    let env = Envelope {
        version: 1,
        profile_id: 12,
        msg_type: 1,
        flags: 0,
        ts_unix_ms: 0,
        msg_id: Bytes::from(format!("msg-id-{n:04}")),
        extensions: Extensions::from_entries(Vec::<(u64, Vec<u8>)>::new()),
        payload: Bytes::from(payload),
    };
    ConcreteStep {
        step: n as usize,
        rep: 0,
        note: None,
        upstream: false,
        second: false,
        now_ms: 0,
        action: Action::Send(e1::frame_bytes(&env).unwrap_or_default()),
        expect,
    }
}

/// An RPC callee answering every request with stream items of these seq_nos, then a
/// response, then `extra` items.
fn rpc_endpoint(seqs: &'static [u64], extra: &'static [u64]) -> Script {
    use crate::p1::pb::types::rpc::{RpcResp, RpcStreamItem};
    let raw = |msg_type: u64, id: &Bytes, m: Vec<u8>| {
        let env = Envelope {
            version: 1,
            profile_id: 12,
            msg_type,
            flags: 0,
            ts_unix_ms: 0,
            msg_id: id.clone(),
            extensions: Extensions::from_entries(Vec::<(u64, Vec<u8>)>::new()),
            payload: Bytes::from(m),
        };
        Recv::Data(
            e1::frame_bytes(&env)
                .map(|b| b.to_vec())
                .unwrap_or_default(),
        )
    };
    let item = move |id: &Bytes, seq: u64| {
        raw(
            4,
            id,
            prost::Message::encode_to_vec(&RpcStreamItem {
                rpc_id: Bytes::from_static(b"r"),
                seq_no: seq,
                item: Bytes::from_static(b"i"),
                is_terminal: false,
            }),
        )
    };
    Box::new(move |e| {
        if is_probe(e) {
            return vec![(
                1,
                frame(
                    1,
                    2,
                    &e.msg_id,
                    r#"{"jsonrpc":"2.0","id":"probe","result":{}}"#,
                ),
            )];
        }
        let mut out: Vec<(u64, Recv)> = seqs.iter().map(|s| (1, item(&e.msg_id, *s))).collect();
        out.push((
            2,
            raw(
                2,
                &e.msg_id,
                prost::Message::encode_to_vec(&RpcResp {
                    rpc_id: Bytes::from_static(b"r"),
                    result: Bytes::new(),
                }),
            ),
        ));
        out.extend(extra.iter().map(|s| (3, item(&e.msg_id, *s))));
        out
    })
}

fn rpc_flow(items: u64) -> Expectation {
    let spec = |v: serde_json::Value| v.as_object().cloned().unwrap_or_default();
    Expectation::Flow(vec![
        crate::plan::materialize::FlowItem {
            spec: spec(serde_json::json!({"rpc.RpcStreamItem": {"rpc_id": "r"}})),
            profile_id: 12,
            msg_type: 4,
            count: items,
        },
        crate::plan::materialize::FlowItem {
            spec: spec(serde_json::json!({"rpc.RpcResp": {"rpc_id": "r"}})),
            profile_id: 12,
            msg_type: 2,
            count: 1,
        },
    ])
}

#[test]
fn a_flow_passes_when_the_endpoint_sends_what_its_profile_allows() {
    let (r, _) = run(
        &spec(""),
        rpc_endpoint(&[1, 5], &[]),
        &[rpc_request(1, vec![rpc_flow(2)])],
    );
    let s = r.unwrap_or_else(|f| panic!("{f:?}"));
    assert_eq!(s.observed, "3 message(s), then nothing more");
}

#[test]
fn a_flow_judges_what_the_endpoint_emits_by_its_profile() {
    // seq_no not increasing: the pattern matches, the profile does not.
    let f = failure(
        run(
            &spec(""),
            rpc_endpoint(&[2, 2], &[]),
            &[rpc_request(1, vec![rpc_flow(2)])],
        )
        .0,
    );
    assert!(
        f.why.contains("breaks its profile") && f.why.contains("seq_no"),
        "{}",
        f.why
    );
    // The failure is the broken rule's to grade, at the requirement it cites.
    assert!(
        f.broke.len() == 1 && f.broke[0].starts_with("RPC-"),
        "{:?}",
        f.broke
    );
    // A stream item after the terminal response, in the quiet window.
    let f = failure(
        run(
            &spec(""),
            rpc_endpoint(&[1], &[2]),
            &[rpc_request(1, vec![rpc_flow(1)])],
        )
        .0,
    );
    assert!(f.why.contains("after its terminal outcome"), "{}", f.why);
    // Fewer messages than the flow lists: a timeout naming the one missing.
    let f = failure(
        run(
            &spec(""),
            rpc_endpoint(&[], &[]),
            &[rpc_request(1, vec![rpc_flow(1)])],
        )
        .0,
    );
    assert!(f.why.contains("expected rpc.RpcStreamItem"), "{}", f.why);
}

fn accept_or_reject() -> Expectation {
    Expectation::Accept {
        fields: Default::default(),
        unknown_flags: None,
        profile_may_refuse: false,
        reject_allowed: true,
        answered: false,
    }
}

#[test]
fn reject_allowed_passes_an_error_frame_a_close_and_a_confirmed_accept() {
    let bad = |script: Script| {
        run(
            &spec(""),
            script,
            &[
                send("ok", 1, vec![accept()]),
                send("bad", 2, vec![accept_or_reject()]),
            ],
        )
        .0
        .unwrap_or_else(|f| panic!("{f:?}"))
    };
    let s = bad(endpoint(5, |e| {
        vec![(2, error_frame(&e.msg_id, "ERR_INVALID_PROFILE_PAYLOAD"))]
    }));
    assert_eq!(
        s.observed,
        "accepted | reject ERR_INVALID_PROFILE_PAYLOAD (allowed)"
    );
    let s = bad(endpoint(5, |_| vec![(1, Recv::Eof)]));
    assert!(s.observed.contains("a reject (allowed)"), "{}", s.observed);
    let s = bad(endpoint(5, |_| Vec::new()));
    assert_eq!(s.observed, "accepted ×2");
}

#[test]
fn reject_allowed_still_fails_an_accept_the_probe_does_not_confirm() {
    // Neither a reject nor an answered probe: the endpoint hung on the frame.
    let f = failure(
        run(
            &spec(""),
            Box::new(|_| Vec::new()),
            &[send("bad", 1, vec![accept_or_reject()])],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Timeout, "{f:?}");
}

#[test]
fn reject_allowed_confirms_earlier_accepts_before_a_close_can_hide_them() {
    // The first frame is refused; the later close must not make that look allowed.
    let f = failure(
        run(
            &spec(""),
            Box::new(|e| {
                if payload_is(e, "first") {
                    vec![(1, error_frame(&e.msg_id, "ERR_INVALID_ENVELOPE"))]
                } else {
                    vec![(1, Recv::Eof)]
                }
            }),
            &[
                send("first", 1, vec![accept()]),
                send("bad", 2, vec![accept_or_reject()]),
            ],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Fail, "{f:?}");
    assert!(f.why.contains("ERR_INVALID_ENVELOPE"), "{}", f.why);
}

/// An endpoint that answers every `bad` frame with an error frame and then ends the stream.
fn error_then_close() -> Script {
    endpoint(5, |e| {
        vec![
            (1, error_frame(&e.msg_id, "ERR_INVALID_FRAME")),
            (2, Recv::Eof),
        ]
    })
}

#[test]
fn a_close_after_a_reject_is_inconclusive_when_the_manifest_does_not_say() {
    let steps = [
        send("bad", 1, vec![reject(ErrorCode::InvalidFrame)]),
        send("ok", 2, vec![accept()]),
    ];
    let f = failure(run(&spec(""), error_then_close(), &steps).0);
    assert_eq!(f.verdict, Verdict::Inconclusive, "{f:?}");
    assert!(
        f.why.contains("ended the stream after the reject of step"),
        "{}",
        f.why
    );
}

#[test]
fn a_close_after_a_reject_fails_an_endpoint_that_declares_it_continues() {
    let steps = [
        send("bad", 1, vec![reject(ErrorCode::InvalidFrame)]),
        send("ok", 2, vec![accept()]),
    ];
    let declared = spec(
        "{mode: error-frame, error_frame: {profile_id: 1, msg_type: 2, code_pointer: /error/data/swp_error}, after: continue}",
    );
    let f = failure(run(&declared, error_then_close(), &steps).0);
    assert_eq!(f.verdict, Verdict::Fail, "{f:?}");
}

fn denied() -> Expectation {
    Expectation::Denied(Box::new(Expectation::Reject {
        allowed: vec![ErrorCode::SecurityPolicy],
        terminates: None,
        code_requirements: vec!["MCP-028".into()],
    }))
}

/// An endpoint that answers the frame whose payload is `bad` with `answer(msg_id)`.
fn answering(answer: impl Fn(&Bytes) -> Recv + Send + 'static) -> Script {
    endpoint(5, move |e| vec![(2, answer(&e.msg_id))])
}

#[test]
fn denied_passes_every_way_a_stack_may_refuse() {
    let pass = |spec: &SessionSpec, script: Script| {
        run(spec, script, &[send("bad", 1, vec![denied()])])
            .0
            .unwrap_or_else(|f| panic!("{f:?}"))
    };
    // The error frame of the manifest, with the policy code.
    let s = pass(
        &spec(""),
        answering(|m| error_frame(m, "ERR_SECURITY_POLICY")),
    );
    assert_eq!(s.code.as_deref(), Some("ERR_SECURITY_POLICY"));
    // A plain JSON-RPC error on the request's msg_id: refused in MCP's own terms.
    let s = pass(
        &spec(""),
        answering(|m| {
            frame(
                1,
                2,
                m,
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"forbidden"}}"#,
            )
        }),
    );
    assert_eq!(s.observed, "JSON-RPC error -32001");
    // A close, from an endpoint that signals rejects by closing: refused, but the code
    // cannot be seen (graded as any reject by close is).
    let f = failure(
        run(
            &spec("{mode: close}"),
            answering(|_| Recv::Eof),
            &[send("bad", 1, vec![denied()])],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::RejectCodeNotObservable, "{f:?}");
    // An A2A Result with ok=false before any Event.
    let result = crate::p1::pb::types::a2a::Result {
        task_id: Bytes::from_static(b"t"),
        ok: false,
        output: Bytes::new(),
        error_message: "not authorized".into(),
    };
    let payload = prost::Message::encode_to_vec(&result);
    let s = pass(&spec(""), answering(move |_| a2a_frame(4, &payload)));
    assert!(s.observed.contains("ok=false"), "{}", s.observed);
}

fn a2a_frame(msg_type: u64, payload: &[u8]) -> Recv {
    let env = Envelope {
        version: 1,
        profile_id: 2,
        msg_type,
        flags: 0,
        ts_unix_ms: 0,
        msg_id: Bytes::from_static(b"agent-msg-0001"),
        extensions: Extensions::from_entries(Vec::<(u64, Vec<u8>)>::new()),
        payload: Bytes::copy_from_slice(payload),
    };
    Recv::Data(
        e1::frame_bytes(&env)
            .map(|b| b.to_vec())
            .unwrap_or_default(),
    )
}

#[test]
fn denied_fails_a_request_that_was_carried_out() {
    let f = failure(
        run(
            &spec(""),
            answering(|m| frame(1, 2, m, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)),
            &[send("bad", 1, vec![denied()])],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Fail);
    assert!(f.why.contains("carried out"), "{}", f.why);
    let event = crate::p1::pb::types::a2a::Event {
        task_id: Bytes::from_static(b"t"),
        message: "working".into(),
        event_payload: Bytes::from_static(b"10%"),
    };
    let payload = prost::Message::encode_to_vec(&event);
    let f = failure(
        run(
            &spec(""),
            answering(move |_| a2a_frame(3, &payload)),
            &[send("bad", 1, vec![denied()])],
        )
        .0,
    );
    assert!(f.why.contains("task is running"), "{}", f.why);
}

#[test]
fn denied_with_another_code_fails_only_the_code_requirement() {
    let f = failure(
        run(
            &spec(""),
            answering(|m| error_frame(m, "ERR_RATE_LIMIT_EXCEEDED")),
            &[send("bad", 1, vec![denied()])],
        )
        .0,
    );
    assert_eq!(f.code_only, Some(vec!["MCP-028".to_owned()]), "{f:?}");
}

/// An A2A agent whose task_ids live in `store`: a new id runs (one Event per unit of its
/// numeric input, then Result ok with the input as output), a reused id with other content
/// is refused as a conflicting duplicate. Two wires sharing one store are a stack with one id
/// space for every peer; a store each is one scoped per peer.
fn a2a_agent(store: Arc<Mutex<Vec<(Bytes, Bytes)>>>) -> Script {
    use crate::p1::pb::types::a2a::{Event, Result as A2aResult, Task};
    Box::new(move |e| {
        if e.profile_id != 2 || e.msg_type != 2 {
            return Vec::new();
        }
        let Ok(t) = <Task as prost::Message>::decode(&e.payload[..]) else {
            return Vec::new();
        };
        let mut s = store.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, input)) = s.iter().find(|(id, _)| *id == t.task_id) {
            return if *input == t.input {
                Vec::new()
            } else {
                vec![(1, error_frame(&e.msg_id, "ERR_INVALID_PROFILE_PAYLOAD"))]
            };
        }
        s.push((t.task_id.clone(), t.input.clone()));
        let n: u64 = std::str::from_utf8(&t.input)
            .ok()
            .and_then(|x| x.parse().ok())
            .unwrap_or(0);
        let mut out: Vec<(u64, Recv)> = (0..n)
            .map(|_| {
                let ev = Event {
                    task_id: t.task_id.clone(),
                    message: "step".into(),
                    event_payload: Bytes::new(),
                };
                (1, a2a_frame(3, &prost::Message::encode_to_vec(&ev)))
            })
            .collect();
        let r = A2aResult {
            task_id: t.task_id.clone(),
            ok: true,
            output: t.input.clone(),
            error_message: String::new(),
        };
        out.push((2, a2a_frame(4, &prost::Message::encode_to_vec(&r))));
        out
    })
}

fn a2a_task(n: u64, input: &str, second: bool, expect: Expectation) -> ConcreteStep {
    let task = crate::p1::pb::types::a2a::Task {
        task_id: Bytes::from_static(b"shared-id"),
        kind: "events".into(),
        input: Bytes::copy_from_slice(input.as_bytes()),
    };
    let env = Envelope {
        version: 1,
        profile_id: 2,
        msg_type: 2,
        flags: 0,
        ts_unix_ms: 0,
        msg_id: Bytes::from(format!("msg-id-{n:04}")),
        extensions: Extensions::from_entries(Vec::<(u64, Vec<u8>)>::new()),
        payload: Bytes::from(prost::Message::encode_to_vec(&task)),
    };
    ConcreteStep {
        step: n as usize,
        rep: 0,
        note: None,
        upstream: false,
        second,
        now_ms: 0,
        action: Action::Send(e1::frame_bytes(&env).unwrap_or_default()),
        expect: vec![expect],
    }
}

fn runs(events: u64, output: &str) -> Expectation {
    Expectation::A2aTasks(vec![crate::catalog::vector::TaskOutcome {
        task_id: "shared-id".into(),
        events: Some(events),
        ok: true,
        output: Some(output.into()),
        error_contains: None,
        p1_canonical: false,
    }])
}

/// a2a_0115's steps against two agents: one store each, or one store for both peers.
fn tenants(shared: bool) -> Result<Summary, Box<StepFailure>> {
    let first = Arc::new(Mutex::new(Vec::new()));
    let second = if shared {
        first.clone()
    } else {
        Arc::new(Mutex::new(Vec::new()))
    };
    let clock = VirtualClock::new();
    let spec = spec("");
    let mut conv = Conv::new(
        Box::new(mem_wire(&clock, a2a_agent(first))),
        &spec,
        &clock,
        Cancel::new(),
        8 * 1024 * 1024,
        false,
    );
    conv.other = Some(super::conv::Peer::new(
        Box::new(mem_wire(&clock, a2a_agent(second))),
        8 * 1024 * 1024,
    ));
    let steps = [
        a2a_task(0, "1", false, runs(1, "1")),
        a2a_task(1, "2", true, runs(2, "2")),
        a2a_task(2, "2", false, reject(ErrorCode::InvalidProfilePayload)),
    ];
    run_conv(&mut conv, &steps)
}

#[test]
fn task_ids_scoped_per_peer_pass_and_one_id_space_for_all_peers_fails() {
    let s = tenants(false).unwrap_or_else(|f| panic!("{f:?}"));
    assert_eq!(s.code.as_deref(), Some("ERR_INVALID_PROFILE_PAYLOAD"));
    let f = failure(tenants(true));
    assert_eq!(f.verdict, Verdict::Fail, "{f:?}");
    assert!(f.why.starts_with("step 2"), "{}", f.why);
}

fn cred_err(code: &str) -> Recv {
    let e = crate::p1::pb::types::cred::CredErr {
        code: code.into(),
        message: "refused".into(),
    };
    let env = Envelope {
        version: 1,
        profile_id: 15,
        msg_type: 4,
        flags: 0,
        ts_unix_ms: 0,
        msg_id: Bytes::from_static(b"cred-err-0001"),
        extensions: Extensions::from_entries(Vec::<(u64, Vec<u8>)>::new()),
        payload: Bytes::from(prost::Message::encode_to_vec(&e)),
    };
    Recv::Data(
        e1::frame_bytes(&env)
            .map(|b| b.to_vec())
            .unwrap_or_default(),
    )
}

#[test]
fn a_profile_error_message_is_a_reject_only_where_the_manifest_says_so() {
    let declared = spec(
        "{mode: error-frame, error_frame: {profile_id: 1, msg_type: 2, code_pointer: /error/data/swp_error}, profile_errors: true}",
    );
    let step = || vec![send("bad", 1, vec![reject(ErrorCode::SecurityPolicy)])];
    // A canonical code in the message is graded as any reject's.
    let s = run(
        &declared,
        answering(|_| cred_err("ERR_SECURITY_POLICY")),
        &step(),
    )
    .0
    .unwrap_or_else(|f| panic!("{f:?}"));
    assert_eq!(s.code.as_deref(), Some("ERR_SECURITY_POLICY"));
    // A profile-specific code shows a refusal, not which canonical code.
    let f = failure(run(&declared, answering(|_| cred_err("expired")), &step()).0);
    assert_eq!(f.verdict, Verdict::RejectCodeNotObservable, "{f:?}");
    // Undeclared, the message is just a frame: the probe shows the frame was accepted.
    let f = failure(
        run(
            &spec(""),
            answering(|_| cred_err("ERR_SECURITY_POLICY")),
            &step(),
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Fail, "{f:?}");
    // Declared, the same message where an accept of a profile vector belongs fails it.
    let f = failure(run_profile(
        &declared,
        answering(|_| cred_err("expired")),
        &[
            send("bad", 1, vec![accept()]),
            send("ok", 2, vec![accept()]),
        ],
    ));
    assert!(f.why.contains("refused with CRED_ERR"), "{f:?}");
    // In a core vector it shows the core took the frame and dispatched it to its profile.
    run(
        &declared,
        answering(|_| cred_err("expired")),
        &[
            send("bad", 1, vec![accept()]),
            send("ok", 2, vec![accept()]),
        ],
    )
    .0
    .unwrap_or_else(|f| panic!("{f:?}"));
    // Where the frame's profile may refuse it (a published placeholder, SI-040), the
    // profile's own message shows that the core took and dispatched it.
    let may_refuse = Expectation::Accept {
        fields: Default::default(),
        unknown_flags: None,
        profile_may_refuse: true,
        reject_allowed: false,
        answered: false,
    };
    run_profile(
        &declared,
        answering(|_| cred_err("expired")),
        &[send("placeholder", 1, vec![may_refuse])],
    )
    .unwrap_or_else(|f| panic!("{f:?}"));
}

#[test]
fn a_code_pointer_that_points_nowhere_is_named_in_the_failure() {
    // The manifest says the code is at /error/data/code; the endpoint puts it at
    // /error/data/swp_error. The reject is not seen as one, and the failure says why.
    let wrong = spec(
        "{mode: error-frame, error_frame: {profile_id: 1, msg_type: 2, code_pointer: /error/data/code}}",
    );
    let f = failure(
        run(
            &wrong,
            endpoint(5, |e| {
                vec![(1, error_frame(&e.msg_id, "ERR_INVALID_ENVELOPE"))]
            }),
            &[send("bad", 0, vec![reject(ErrorCode::InvalidEnvelope)])],
        )
        .0,
    );
    assert_eq!(
        f.why,
        "accepted: no reject within 3000 ms and the probe was answered (a frame arrived, profile_id=1 msg_type=2 msg_id \"msg-id-0000\", but the manifest's code_pointer /error/data/code found nothing in it: check reject_signal.error_frame.code_pointer)"
    );
}

#[test]
fn a_close_after_a_frame_no_rule_took_names_the_frame_and_the_pointer() {
    // The endpoint refuses with its error frame and closes; the manifest's pointer finds
    // nothing in it, so the close is all the reject judge sees, and says what came before.
    let wrong = spec(
        "{mode: error-frame, error_frame: {profile_id: 1, msg_type: 2, code_pointer: /error/code}}",
    );
    let f = failure(
        run(
            &wrong,
            endpoint(5, |e| {
                vec![
                    (1, error_frame(&e.msg_id, "ERR_INVALID_ENVELOPE")),
                    (2, Recv::Eof),
                ]
            }),
            &[send("bad", 7, vec![reject(ErrorCode::InvalidEnvelope)])],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Fail);
    assert_eq!(
        f.why,
        "the connection closed without the error frame the manifest promises (a frame arrived, profile_id=1 msg_type=2 msg_id \"msg-id-0007\", but the manifest's code_pointer /error/code found -32600, not a code string)"
    );
}

#[test]
fn a_frame_of_another_type_where_a_reject_belongs_is_named() {
    // The endpoint's error frames are not of the type the manifest declares: the timeout
    // says a frame came, and of which type.
    let f = failure(
        run(
            &spec(""),
            Box::new(|e: &Envelope| {
                if payload_is(e, "bad") {
                    vec![(1, frame(1, 9, &Bytes::from_static(b"\x00\xff"), "{}"))]
                } else {
                    Vec::new()
                }
            }),
            &[send("bad", 1, vec![reject(ErrorCode::InvalidFrame)])],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Timeout);
    assert_eq!(
        f.why,
        "no reject, no close and no answer within 3000 ms (a frame arrived, profile_id=1 msg_type=9 msg_id hex:00ff, but it is not the manifest's error frame (profile_id=1 msg_type=2))"
    );
}

#[test]
fn a_cancelled_run_stops_waiting_at_once() {
    // A peer that answers a second later: the cancel comes first, so nothing is read and
    // no virtual time passes.
    let clock = VirtualClock::new();
    let spec = spec("");
    let wire = mem_wire(
        &clock,
        Box::new(|e: &Envelope| vec![(1_000, error_frame(&e.msg_id, "ERR_X"))]),
    );
    let cancel = Cancel::new();
    let mut conv = Conv::new(
        Box::new(wire),
        &spec,
        &clock,
        cancel.clone(),
        1 << 20,
        false,
    );
    let t0 = clock.now();
    cancel.cancel();
    assert!(conv.next(conv.after(5_000)).is_none());
    assert_eq!(clock.now(), t0);
}

/// An endpoint that answers the probe on a msg_id of its own.
fn answers_elsewhere() -> Script {
    Box::new(|e: &Envelope| {
        if is_probe(e) {
            vec![(
                5,
                frame(
                    1,
                    2,
                    &Bytes::from_static(b"reply-0001"),
                    r#"{"jsonrpc":"2.0","id":"probe","result":{}}"#,
                ),
            )]
        } else {
            Vec::new()
        }
    })
}

#[test]
fn a_probe_answered_on_another_msg_id_is_reported_as_such() {
    let f = failure(
        run(
            &spec(""),
            answers_elsewhere(),
            &[send("ok", 1, vec![accept()])],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Timeout);
    assert_eq!(
        f.why,
        "a reply came on msg_id \"reply-0001\", not the probe's \"swp-probe0000001\", and nothing answered the probe within 3000 ms"
    );
    assert_eq!(f.observed, "a reply on another msg_id");
    // Where a reject was awaited, the probe that tells "accepted" from "hung" says it too.
    let f = failure(
        run(
            &spec(""),
            answers_elsewhere(),
            &[send("bad", 1, vec![reject(ErrorCode::InvalidFrame)])],
        )
        .0,
    );
    assert_eq!(f.verdict, Verdict::Timeout);
    assert_eq!(
        f.why,
        "no reject, no close and no answer within 3000 ms (a reply came on msg_id \"reply-0001\", not the probe's \"swp-probe0000001\")"
    );
}
