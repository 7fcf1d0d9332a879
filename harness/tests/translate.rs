//! The translate method can fail: translators that are broken in typical ways (forwarding
//! every message unchanged, translating but reporting no warnings, swallowing typed errors)
//! fail the mcpx vectors that exercise what they break, while the reference passes them all.

use std::path::Path;
use swp_conform::catalog::{self, vector::Method};
use swp_conform::connect::driver::{Answer, CodecDriver, DriverError};
use swp_conform::connect::inproc::InProcess;
use swp_conform::method::codec::CodecMethod;
use swp_conform::model::Verdict;
use swp_conform::sut::Sut;
use swp_testee_proto::{DecodeReply, DecodeRequest, TranslateReply, TranslateRequest};

#[derive(Clone, Copy, PartialEq)]
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
        .filter(|v| v.vector.methods.contains(&Method::Translate))
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

#[test]
fn a_translator_that_changes_nothing_fails() {
    let v = verdicts(&mut Broken(Breakage::Passthrough));
    let f = failed(&v);
    for id in [
        "mcpx_0007_tools_list_to_2024",
        "mcpx_0017_call_result_audio_to_2024",
        "mcpx_0048_elicitation_to_03_declined",
    ] {
        assert!(
            f.contains(&id),
            "{id} passed a passthrough translator: {f:?}"
        );
    }
    // Vectors whose correct answer is "unchanged" still pass: the failures are the rules.
    assert!(!f.contains(&"mcpx_0064_resources_updated_forwarded_to_2024"));
}

#[test]
fn a_translator_without_warnings_fails() {
    let f = verdicts(&mut Broken(Breakage::Silent));
    let f = failed(&f);
    assert!(f.contains(&"mcpx_0007_tools_list_to_2024"), "{f:?}");
    assert!(
        f.contains(&"mcpx_0015_call_result_structured_to_2024"),
        "{f:?}"
    );
}

#[test]
fn a_translator_that_never_refuses_fails() {
    let f = verdicts(&mut Broken(Breakage::NeverFails));
    let f = failed(&f);
    assert!(
        f.contains(&"mcpx_0012_tools_list_missing_input_schema_invalid"),
        "{f:?}"
    );
    assert!(f.contains(&"mcpx_0062_batch_from_06_invalid"), "{f:?}");
}
