//! The built-in reference as a codec connector, or, in a build without it (feature
//! `builtin-sut` off), the error saying so. Apart from `driver`, which the connectors
//! implement, so that the interface does not import one of its implementations.

use super::driver::{CodecDriver, DriverError};
#[cfg(feature = "builtin-sut")]
use super::inproc::InProcess;
#[cfg(not(feature = "builtin-sut"))]
use crate::sut::manifest::NO_BUILTIN;

/// The built-in reference as a connector, in builds that have it (feature `builtin-sut`).
pub fn builtin() -> Result<Box<dyn CodecDriver>, DriverError> {
    #[cfg(feature = "builtin-sut")]
    return Ok(Box::new(InProcess));
    #[cfg(not(feature = "builtin-sut"))]
    Err(DriverError::Start(NO_BUILTIN.into()))
}
