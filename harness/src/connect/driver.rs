//! The codec-method connector interface: one trait, implemented in process (the reference
//! linked in) and by a testee process. A method never knows which one it drives.

use swp_testee_proto::{DecodeReply, DecodeRequest, TranslateReply, TranslateRequest};

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
    /// The SUT cannot be driven at all (it refuses `hello` or speaks another protocol
    /// version): the run stops with this message.
    #[error("{0}")]
    Incompatible(String),
}

impl DriverError {
    /// The verdict of a vector whose exchange failed this way.
    pub fn verdict(&self) -> crate::report::result::Verdict {
        use crate::report::result::Verdict;
        match self {
            DriverError::Timeout(_) => Verdict::Timeout,
            DriverError::Crashed(_) => Verdict::Crash,
            DriverError::Protocol(_) | DriverError::Start(_) | DriverError::Incompatible(_) => {
                Verdict::HarnessError
            }
        }
    }
}

/// A borrowed connector is a connector, so one long-lived testee can serve several runs.
impl<T: CodecDriver + ?Sized> CodecDriver for &mut T {
    fn describe(&self) -> String {
        (**self).describe()
    }
    fn open(&mut self) -> Result<(), DriverError> {
        (**self).open()
    }
    fn decode(&mut self, req: &DecodeRequest) -> Result<Answer<DecodeReply>, DriverError> {
        (**self).decode(req)
    }
    fn translate(&mut self, req: &TranslateRequest) -> Result<Answer<TranslateReply>, DriverError> {
        (**self).translate(req)
    }
}

/// What a codec-method SUT can do.
pub trait CodecDriver: Send {
    /// Name and version the SUT reported.
    fn describe(&self) -> String;
    /// Starts the connector before the first vector, so a SUT that cannot be driven at all
    /// stops the run before any verdict.
    fn open(&mut self) -> Result<(), DriverError> {
        Ok(())
    }
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
