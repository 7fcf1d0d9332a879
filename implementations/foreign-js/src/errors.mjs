// Canonical ERR_* codes (error-codes.md §2) and the typed error every decoder throws.

export const ERR = Object.freeze({
  INVALID_FRAME: 'ERR_INVALID_FRAME',
  FRAME_TOO_LARGE: 'ERR_FRAME_TOO_LARGE',
  INVALID_UVARINT: 'ERR_INVALID_UVARINT',
  UNSUPPORTED_VERSION: 'ERR_UNSUPPORTED_VERSION',
  INVALID_ENVELOPE: 'ERR_INVALID_ENVELOPE',
  MSG_ID_INVALID: 'ERR_MSG_ID_INVALID',
  PAYLOAD_TOO_LARGE: 'ERR_PAYLOAD_TOO_LARGE',
  EXT_TOO_LARGE: 'ERR_EXT_TOO_LARGE',
  UNKNOWN_PROFILE: 'ERR_UNKNOWN_PROFILE',
  SECURITY_POLICY: 'ERR_SECURITY_POLICY',
  RATE_LIMIT_EXCEEDED: 'ERR_RATE_LIMIT_EXCEEDED',
  UNSUPPORTED_MSG_TYPE: 'ERR_UNSUPPORTED_MSG_TYPE',
  INVALID_PROFILE_PAYLOAD: 'ERR_INVALID_PROFILE_PAYLOAD',
  DUPLICATE_MSG_ID: 'ERR_DUPLICATE_MSG_ID',
  NOT_FOUND: 'ERR_NOT_FOUND',
});

/** A rejection carrying its canonical code; `msgId` is set once the envelope's msg_id was read. */
export class SwpError extends Error {
  constructor(code, message, extra = {}) {
    super(message);
    this.name = 'SwpError';
    this.code = code;
    Object.assign(this, extra);
  }
}

/** A profile-level refusal: answered with the profile's *_ERR message carrying `code`. */
export class ProfileReject extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'ProfileReject';
    this.code = code;
  }
}
