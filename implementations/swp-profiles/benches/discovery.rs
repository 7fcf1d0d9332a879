//! Per-message cost of P1 decoding plus the judge's step for the discovery profiles of class
//! C5, SWP-AGDISC (10) and SWP-TOOLDISC (11), through `channel::Channel::feed`, at default
//! caps in a steady state (ids rotate through a pool larger than the tables, so the tables
//! are full and forget their oldest entries). Figures: docs/performance.md.
//!
//! ```sh
//! cargo bench -p swp-profiles --bench discovery -- --warm-up-time 1 --measurement-time 3
//! ```

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use prost::Message;
use swp_profiles::channel::{Channel, Config};
use swp_profiles::p1::pb::{agdisc as ag, tooldisc as td};

const CARD: &[u8] = br#"{"agent_id":"swp.test.agent","revision":"swp-agdisc/0.1","endpoints":["swp://swp-ref/agent"],"capabilities":["swp-rpc","swp-events","swp-agdisc"]}"#;

/// AGDISC: GET, DOC (a 150-octet card), conditional GET, NOT_MODIFIED: 4 messages, for one
/// of 4,096 agents (four times the card table).
fn agdisc(c: &mut Criterion) {
    let mut g = c.benchmark_group("agdisc");
    let mut refused: u64 = 0;
    g.throughput(Throughput::Elements(4));
    let msgs: Vec<[Vec<u8>; 4]> = (0..4096)
        .map(|i| {
            let agent_id = format!("agent-{i:05}");
            let etag = format!("\"e{i:05}\"");
            [
                ag::AgdiscGet {
                    agent_id: agent_id.clone(),
                    if_none_match: String::new(),
                }
                .encode_to_vec(),
                ag::AgdiscDoc {
                    agent_id: agent_id.clone(),
                    schema_revision: "swp-agdisc/0.1".into(),
                    card_payload: Bytes::from_static(CARD),
                    etag: etag.clone(),
                    max_age_ms: 1000,
                }
                .encode_to_vec(),
                ag::AgdiscGet {
                    agent_id: agent_id.clone(),
                    if_none_match: etag.clone(),
                }
                .encode_to_vec(),
                ag::AgdiscNotModified { agent_id, etag }.encode_to_vec(),
            ]
        })
        .collect();
    let mut ch = Channel::new(10, &Config::default()).expect("served");
    let mut i = 0usize;
    g.bench_function("get_doc_revalidate", |b| {
        b.iter(|| {
            let m = &msgs[i % msgs.len()];
            i += 1;
            for (t, p) in [1u64, 2, 1, 3].iter().zip(m) {
                refused += u64::from(ch.feed(i as u64, "", *t, p).is_err());
            }
        })
    });
    g.finish();
    assert_eq!(refused, 0, "a benchmarked message was refused");
}

fn tool(i: usize) -> td::ToolDescriptor {
    td::ToolDescriptor {
        tool_id: format!("tool-{i:05}"),
        name: format!("tool {i}"),
        version: "1.0.0".into(),
        schema_ref: format!("https://schemas.example/tool-{i:05}.json"),
        descriptor_payload: Bytes::from_static(br#"{"hints":{"cost":"advisory"}}"#),
    }
}

/// TOOLDISC: a LIST_REQ of size 10 and its page of 10 descriptors (every schema reference
/// checked), then a GET and its answer: 4 messages, over 8,192 pages (twice the page table).
fn tooldisc(c: &mut Criterion) {
    let mut g = c.benchmark_group("tooldisc");
    let mut refused: u64 = 0;
    g.throughput(Throughput::Elements(4));
    let msgs: Vec<[Vec<u8>; 4]> = (0..8192usize)
        .map(|p| {
            [
                td::TooldiscListReq {
                    page_size: 10,
                    page_token: format!("cursor-{p}"),
                    filter: String::new(),
                }
                .encode_to_vec(),
                td::TooldiscListResp {
                    tools: (0..10).map(|k| tool(p * 10 + k)).collect(),
                    next_page_token: format!("cursor-{}", p + 1),
                }
                .encode_to_vec(),
                td::TooldiscGetReq {
                    tool_id: tool(p * 10).tool_id,
                    version: String::new(),
                }
                .encode_to_vec(),
                td::TooldiscGetResp {
                    tool: Some(tool(p * 10)),
                }
                .encode_to_vec(),
            ]
        })
        .collect();
    let mut ch = Channel::new(11, &Config::default()).expect("served");
    let mut i = 0usize;
    g.bench_function("page10_and_get", |b| {
        b.iter(|| {
            let m = &msgs[i % msgs.len()];
            i += 1;
            for (t, p) in [1u64, 2, 3, 4].iter().zip(m) {
                refused += u64::from(ch.feed(0, "", *t, p).is_err());
            }
        })
    });
    g.finish();
    assert_eq!(refused, 0, "a benchmarked message was refused");
}

criterion_group!(benches, agdisc, tooldisc);
criterion_main!(benches);
