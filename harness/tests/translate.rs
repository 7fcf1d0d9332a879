//! The translate method can fail: translators that are broken in typical ways (forwarding
//! every message unchanged, translating but reporting no warnings, swallowing typed errors)
//! fail the mcpx vectors that exercise what they break, while the reference passes them all.

use std::path::Path;
use swp_conform::catalog::mcpx::TranslateSend;
use swp_conform::catalog::vector::{Body, TranslateExpect};
use swp_conform::catalog::{self, vector::Method};
use swp_conform::connect::driver::{Answer, CodecDriver, DriverError};
use swp_conform::connect::inproc::InProcess;
use swp_conform::method::codec::CodecMethod;
use swp_conform::report::result::Verdict;
use swp_conform::sut::Sut;
use swp_testee_proto::{DecodeReply, DecodeRequest, TranslateReply, TranslateRequest};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Breakage {
    /// Forwards the input as it is: no translation at all.
    Passthrough,
    /// Translates but reports no warnings.
    Silent,
    /// Turns typed errors into a passthrough (silent corruption).
    NeverFails,
}

struct Broken(Breakage);

impl CodecDriver for Broken {
    fn describe(&self) -> String {
        "broken translator".into()
    }
    fn decode(&mut self, req: &DecodeRequest) -> Result<Answer<DecodeReply>, DriverError> {
        InProcess.decode(req)
    }
    fn translate(&mut self, req: &TranslateRequest) -> Result<Answer<TranslateReply>, DriverError> {
        let passthrough = TranslateReply::Translated {
            messages: vec![req.message.clone()],
            replies: vec![],
            warnings: vec![],
        };
        let real = match InProcess.translate(req)? {
            Answer::Ok(r) => r,
            other => return Ok(other),
        };
        Ok(Answer::Ok(match (self.0, real) {
            (Breakage::Passthrough, _) => passthrough,
            (
                Breakage::Silent,
                TranslateReply::Translated {
                    messages, replies, ..
                },
            ) => TranslateReply::Translated {
                messages,
                replies,
                warnings: vec![],
            },
            (Breakage::NeverFails, TranslateReply::Error { .. }) => passthrough,
            (_, r) => r,
        }))
    }
}

fn verdicts(driver: &mut dyn CodecDriver) -> Vec<(String, Verdict)> {
    let cat =
        catalog::load::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors")).unwrap();
    let sut = Sut::builtin().unwrap();
    let plan: Vec<_> = cat
        .vectors
        .iter()
        .filter(|v| v.vector.header.methods.contains(&Method::Translate))
        .collect();
    assert!(plan.len() >= 60, "the mcpx catalog is missing");
    CodecMethod::new(&sut, Box::new(driver))
        .run(&cat, &plan)
        .unwrap()
        .into_iter()
        .map(|r| (r.vector_id, r.verdict))
        .collect()
}

fn failed(v: &[(String, Verdict)]) -> Vec<&str> {
    v.iter()
        .filter(|(_, x)| *x == Verdict::Fail)
        .map(|(id, _)| id.as_str())
        .collect()
}

#[test]
fn the_reference_passes_every_translation_vector() {
    let v = verdicts(&mut InProcess);
    assert!(v.iter().all(|(_, x)| *x == Verdict::Pass), "{v:?}");
}

/// Asserts the run's failures are exactly the vectors where `caught(step)` holds for some
/// step, and that every other vector ran and passed: the breakage is caught by the vectors of
/// the rule it breaks and by no other, derived from the vectors themselves.
fn caught_exactly(
    v: &[(String, Verdict)],
    caught: impl Fn(&TranslateSend, &TranslateExpect) -> bool,
) {
    let cat =
        catalog::load::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors")).unwrap();
    let want: Vec<&str> = cat
        .vectors
        .iter()
        .filter(|lv| lv.vector.header.methods.contains(&Method::Translate))
        .filter(|lv| {
            let Body::Translate(b) = &lv.vector.body else {
                return false;
            };
            b.steps.iter().any(|s| {
                match (
                    s.send.as_ref().and_then(|x| x.translate.as_deref()),
                    s.expect.as_slice(),
                ) {
                    // In a `one_of` the reference's own outcome comes first, and the broken
                    // translators are the reference with one behaviour changed, so the
                    // first alternative decides what they are caught by.
                    (Some(t), [TranslateExpect::OneOf(alts)]) => {
                        alts.first().is_some_and(|e| caught(t, e))
                    }
                    (Some(t), [e]) => caught(t, e),
                    _ => false,
                }
            })
        })
        .map(|lv| lv.vector.header.id.as_str())
        .collect();
    for (id, x) in v {
        assert!(
            matches!(x, Verdict::Pass | Verdict::Fail),
            "{id} is {x:?}: every vector must run"
        );
    }
    assert_eq!(failed(v), want, "the vectors that catch the breakage");
    assert!(!want.is_empty());
}

#[test]
fn a_translator_that_changes_nothing_fails_every_vector_that_expects_a_change() {
    let v = verdicts(&mut Broken(Breakage::Passthrough));
    caught_exactly(&v, |t, e| match e {
        TranslateExpect::Translated(x) => {
            x.messages != [t.message.clone()] || !x.replies.is_empty() || !x.warnings.is_empty()
        }
        _ => true,
    });
}

#[test]
fn a_translator_without_warnings_fails_every_vector_that_expects_one() {
    let v = verdicts(&mut Broken(Breakage::Silent));
    caught_exactly(
        &v,
        |_, e| matches!(e, TranslateExpect::Translated(x) if !x.warnings.is_empty()),
    );
}

#[test]
fn a_translator_that_never_refuses_fails_every_vector_that_expects_a_refusal() {
    let v = verdicts(&mut Broken(Breakage::NeverFails));
    caught_exactly(&v, |_, e| matches!(e, TranslateExpect::TranslationError(_)));
}

/// The catalog's warning kinds are the translator's, name for name: both matches below are
/// exhaustive, so a kind added on either side fails to compile until it is mapped, and the
/// names are compared through serde.
#[test]
fn every_warning_kind_converts_both_ways() {
    use mcp_translate::WarningKind as Lib;
    use swp_conform::catalog::mcpx::WarningKindSpec as Spec;
    fn to_spec(k: Lib) -> Spec {
        match k {
            Lib::Dropped => Spec::Dropped,
            Lib::Converted => Spec::Converted,
            Lib::FallbackAdded => Spec::FallbackAdded,
            Lib::VersionRewritten => Spec::VersionRewritten,
            Lib::NotificationDropped => Spec::NotificationDropped,
            Lib::AnsweredOnBehalf => Spec::AnsweredOnBehalf,
            Lib::ResponseDropped => Spec::ResponseDropped,
            Lib::BatchSplit => Spec::BatchSplit,
            Lib::UnknownMethodForwarded => Spec::UnknownMethodForwarded,
        }
    }
    fn to_lib(k: Spec) -> Lib {
        match k {
            Spec::Dropped => Lib::Dropped,
            Spec::Converted => Lib::Converted,
            Spec::FallbackAdded => Lib::FallbackAdded,
            Spec::VersionRewritten => Lib::VersionRewritten,
            Spec::NotificationDropped => Lib::NotificationDropped,
            Spec::AnsweredOnBehalf => Lib::AnsweredOnBehalf,
            Spec::ResponseDropped => Lib::ResponseDropped,
            Spec::BatchSplit => Lib::BatchSplit,
            Spec::UnknownMethodForwarded => Lib::UnknownMethodForwarded,
        }
    }
    let all = [
        Lib::Dropped,
        Lib::Converted,
        Lib::FallbackAdded,
        Lib::VersionRewritten,
        Lib::NotificationDropped,
        Lib::AnsweredOnBehalf,
        Lib::ResponseDropped,
        Lib::BatchSplit,
        Lib::UnknownMethodForwarded,
    ];
    for k in all {
        let spec = to_spec(k);
        assert_eq!(to_lib(spec), k);
        let lib_name = serde_json::to_value(k).unwrap();
        assert_eq!(lib_name, serde_json::to_value(spec).unwrap(), "{k:?}");
        assert_eq!(lib_name, serde_json::Value::from(spec.as_str()), "{k:?}");
    }
}
