//! Connectors for the codec method: one interface, implemented in-process (the reference
//! linked in) and by a testee process. The engine never knows which one it drives.

pub mod inproc;
pub mod testee;

use swp_ref::testee::proto::{DecodeReply, DecodeRequest, TranslateReply, TranslateRequest};

/// A successful exchange or an explicit "unsupported".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer<T> {
    /// The SUT answered.
    Ok(T),
    /// The SUT does not support the request; its reason.
    Unsupported(String),
}

/// The exchange failed without a protocol answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DriverError {
    /// No answer within the deadline.
    #[error("no answer within {0} ms")]
    Timeout(u64),
    /// The SUT process ended.
    #[error("the SUT process ended: {0}")]
    Crashed(String),
    /// The SUT broke the testee protocol or reported an internal error.
    #[error("testee protocol error: {0}")]
    Protocol(String),
    /// The SUT could not be started.
    #[error("cannot start the SUT: {0}")]
    Start(String),
}

impl DriverError {
    /// The verdict of a vector whose exchange failed this way.
    pub fn verdict(&self) -> crate::model::Verdict {
        use crate::model::Verdict;
        match self {
            DriverError::Timeout(_) => Verdict::Timeout,
            DriverError::Crashed(_) => Verdict::Crash,
            DriverError::Protocol(_) | DriverError::Start(_) => Verdict::HarnessError,
        }
    }
}

/// What a codec-method SUT can do.
pub trait CodecDriver {
    /// Name and version the SUT reported.
    fn describe(&self) -> String;
    /// Runs one fresh receiver over a stream.
    fn decode(&mut self, req: &DecodeRequest) -> Result<Answer<DecodeReply>, DriverError>;
    /// Translates one MCP message between protocol versions (method `translate`).
    fn translate(
        &mut self,
        _req: &TranslateRequest,
    ) -> Result<Answer<TranslateReply>, DriverError> {
        Ok(Answer::Unsupported(
            "this connector does not translate MCP messages".into(),
        ))
    }
}
