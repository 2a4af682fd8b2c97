//! OCPI's status codes (2.2.1 part I, "Status codes"): carried in every response's envelope
//! beside the HTTP status.

/// 1000: generic success.
pub const SUCCESS: u32 = 1000;
/// 2000: generic client error.
pub const CLIENT_ERROR: u32 = 2000;
/// 2001: invalid or missing parameters (a malformed body, a bad query value).
pub const INVALID_PARAMETERS: u32 = 2001;
/// 2002: not enough information (e.g. an authorisation request without its location).
pub const NOT_ENOUGH_INFORMATION: u32 = 2002;
/// 2003: unknown location.
pub const UNKNOWN_LOCATION: u32 = 2003;
/// 2004: unknown token.
pub const UNKNOWN_TOKEN: u32 = 2004;
/// 3000: generic server error.
pub const SERVER_ERROR: u32 = 3000;
/// 3001: unable to use the client's API (during the credentials handshake).
pub const UNABLE_TO_USE_CLIENT_API: u32 = 3001;
/// 3002: unsupported version.
pub const UNSUPPORTED_VERSION: u32 = 3002;
/// 3003: no matching endpoints or expected endpoints missing between parties.
pub const NO_MATCHING_ENDPOINTS: u32 = 3003;
