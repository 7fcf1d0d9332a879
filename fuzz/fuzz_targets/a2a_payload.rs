//! A2A over P1: any payload under any msg_type decodes or is refused, and any sequence of
//! messages steps the lifecycle without panicking (the first octet picks the msg_type of
//! each length-prefixed chunk).
#![no_main]

use libfuzzer_sys::fuzz_target;
use swp_profiles::a2a::{self, A2aMessage, Lifecycle};

fuzz_target!(|data: &[u8]| {
    let mut l = Lifecycle::new(8);
    let mut rest = data;
    while let [t, len, tail @ ..] = rest {
        let n = (*len as usize).min(tail.len());
        let (payload, next) = tail.split_at(n);
        rest = next;
        let _ = match a2a::decode(u64::from(*t % 6), payload) {
            Ok(A2aMessage::Task(x)) => l.task("", &x).map(|_| ()),
            Ok(A2aMessage::Event(x)) => l.event("", &x).map(|_| ()),
            Ok(A2aMessage::Result(x)) => l.result("", &x).map(|_| ()),
            Ok(A2aMessage::Handshake(_)) | Err(_) => Ok(()),
        };
    }
});
