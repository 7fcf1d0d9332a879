//! One channel of any of the SWP-* profiles of classes C3 and C4 (RPC 12, EVENTS 13,
//! ARTIFACT 14, STATE 17, OBS 18) and of C5 (AGDISC 10, TOOLDISC 11, CRED 15, POLICYHINT 16,
//! RELAY 19) behind one call: decode a payload in the configured P1
//! form and step that profile's machine. This is what a codec testee needs for
//! `validate:N` (every frame of a request on one channel) and what the fuzz target drives;
//! an endpoint that acts on messages uses the profile modules directly.
//!
//! Everything here that names the profiles one by one is generated from the one list,
//! [`crate::for_each_profile`]; what is written by hand is generic over [`Profile`].

use crate::payload::{P1Form, PayloadError};
use crate::profile::{Ctx, Profile, WireError};
use swp_core::ErrorCode;

/// Decodes one payload of `P` and steps `machine` with it.
fn feed<P: Profile>(
    machine: &mut P,
    ctx: Ctx<'_>,
    form: P1Form,
    msg_type: u64,
    payload: &[u8],
) -> Result<(P::Message, P::Seen), ChannelError>
where
    ChannelError: From<P::Error>,
{
    let m = P::decode(form, msg_type, payload)?;
    let s = machine.step(ctx, &m)?;
    Ok((m, s))
}

macro_rules! channel {
    ($(($module:ident, $Variant:ident, $Machine:ty, $name:literal)),* $(,)?) => {
        /// The profiles a [`Channel`] serves.
        pub const PROFILES: [u64; [$(stringify!($module)),*].len()] =
            [$(<$Machine as Profile>::ID),*];

        /// The form and every profile's parameters.
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct Config {
            /// The payload form of the channel.
            pub form: P1Form,
            $(
                #[doc = concat!($name, ".")]
                pub $module: <$Machine as Profile>::Config,
            )*
        }

        /// A decoded message of one of the profiles.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Message {
            $(
                #[doc = concat!($name, ".")]
                $Variant(<$Machine as Profile>::Message),
            )*
        }

        impl Message {
            /// Its profile id.
            pub fn profile_id(&self) -> u64 {
                match self {
                    $(Message::$Variant(_) => <$Machine as Profile>::ID,)*
                }
            }

            /// Its msg_type.
            pub fn msg_type(&self) -> u64 {
                match self {
                    $(Message::$Variant(m) => <$Machine as Profile>::msg_type(m),)*
                }
            }

            /// Encodes it in `form`.
            pub fn encode(&self, form: P1Form) -> Vec<u8> {
                match self {
                    $(Message::$Variant(m) => <$Machine as Profile>::encode(form, m),)*
                }
            }
        }

        /// Decodes a payload of `profile_id` in `form`; `None` for a profile this module does
        /// not serve.
        pub fn decode(
            profile_id: u64,
            form: P1Form,
            msg_type: u64,
            payload: &[u8],
        ) -> Option<Result<Message, PayloadError>> {
            $(
                if profile_id == <$Machine as Profile>::ID {
                    return Some(
                        <$Machine as Profile>::decode(form, msg_type, payload)
                            .map(Message::$Variant),
                    );
                }
            )*
            None
        }

        /// What a message did, per profile.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Seen {
            $(
                #[doc = concat!($name, ".")]
                $Variant(<$Machine as Profile>::Seen),
            )*
        }

        /// A refusal, with one canonical code.
        #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
        pub enum ChannelError {
            /// The payload itself.
            #[error(transparent)]
            Payload(#[from] PayloadError),
            $(
                #[doc = concat!("The ", $name, " machine.")]
                #[error(transparent)]
                $Variant(#[from] <$Machine as Profile>::Error),
            )*
        }

        impl ChannelError {
            /// The canonical code.
            pub fn code(&self) -> ErrorCode {
                match self {
                    ChannelError::Payload(e) => e.code(),
                    $(ChannelError::$Variant(e) => WireError::code(e),)*
                }
            }
        }

        #[derive(Debug, Clone)]
        enum Machine {
            $($Variant($Machine),)*
        }

        impl Machine {
            fn new(profile_id: u64, config: &Config) -> Option<Machine> {
                $(
                    if profile_id == <$Machine as Profile>::ID {
                        return Some(Machine::$Variant(<$Machine as Profile>::new(
                            config.$module.clone(),
                        )));
                    }
                )*
                None
            }

            fn feed(
                &mut self,
                ctx: Ctx<'_>,
                form: P1Form,
                msg_type: u64,
                payload: &[u8],
            ) -> Result<(Message, Seen), ChannelError> {
                match self {
                    $(Machine::$Variant(l) => feed(l, ctx, form, msg_type, payload)
                        .map(|(m, s)| (Message::$Variant(m), Seen::$Variant(s))),)*
                }
            }
        }
    };
}

crate::for_each_profile!(channel);

/// One channel of one profile.
#[derive(Debug, Clone)]
pub struct Channel {
    profile_id: u64,
    form: P1Form,
    machine: Machine,
}

impl Channel {
    /// A channel of `profile_id`; `None` for a profile this module does not serve.
    pub fn new(profile_id: u64, config: &Config) -> Option<Channel> {
        Some(Channel {
            profile_id,
            form: config.form,
            machine: Machine::new(profile_id, config)?,
        })
    }

    /// The profile.
    pub fn profile_id(&self) -> u64 {
        self.profile_id
    }

    /// The payload form.
    pub fn form(&self) -> P1Form {
        self.form
    }

    /// Decodes one payload and steps the machine with it, at `now_ms`, for the peer
    /// `scope`.
    pub fn feed(
        &mut self,
        now_ms: u64,
        scope: &str,
        msg_type: u64,
        payload: &[u8],
    ) -> Result<(Message, Seen), ChannelError> {
        self.machine
            .feed(Ctx::new(now_ms, scope), self.form, msg_type, payload)
    }
}
