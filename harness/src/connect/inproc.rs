//! The built-in SUT: the reference's testee handlers called directly, no process, no JSON.

use super::driver::{Answer, CodecDriver, DriverError};
use swp_testee_proto::{DecodeReply, DecodeRequest, TranslateReply, TranslateRequest};

/// The reference implementation, in process.
#[derive(Debug, Default, Clone, Copy)]
pub struct InProcess;

impl CodecDriver for InProcess {
    fn describe(&self) -> String {
        format!("swp-ref {} (in-process)", env!("CARGO_PKG_VERSION"))
    }

    fn decode(&mut self, req: &DecodeRequest) -> Result<Answer<DecodeReply>, DriverError> {
        swp_ref::testee::reference::decode(req)
            .map(Answer::Ok)
            .map_err(|e| DriverError::Protocol(e.to_string()))
    }

    fn translate(&mut self, req: &TranslateRequest) -> Result<Answer<TranslateReply>, DriverError> {
        swp_ref::testee::translate::translate(req)
            .map(Answer::Ok)
            .map_err(DriverError::Protocol)
    }
}
