//! OCPP-J RPC error codes and the violation a rejected CALL is answered with.

use std::fmt;

use crate::version::OcppVersion;

/// The CALLERROR codes of OCPP-J 1.6 and 2.0.1. The variants are named as 1.6 spells them;
/// [`ErrorCode::spelled`] gives each version's spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    NotImplemented,
    NotSupported,
    InternalError,
    ProtocolError,
    SecurityError,
    FormationViolation,
    PropertyConstraintViolation,
    OccurenceConstraintViolation,
    TypeConstraintViolation,
    GenericError,
    /// 2.0.1 only: a message type number the receiver does not know (GenericError in 1.6).
    MessageTypeNotSupported,
    /// 2.0.1 only: a message that breaks the RPC framework (GenericError in 1.6).
    RpcFrameworkError,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 12] = [
        ErrorCode::NotImplemented,
        ErrorCode::NotSupported,
        ErrorCode::InternalError,
        ErrorCode::ProtocolError,
        ErrorCode::SecurityError,
        ErrorCode::FormationViolation,
        ErrorCode::PropertyConstraintViolation,
        ErrorCode::OccurenceConstraintViolation,
        ErrorCode::TypeConstraintViolation,
        ErrorCode::GenericError,
        ErrorCode::MessageTypeNotSupported,
        ErrorCode::RpcFrameworkError,
    ];

    /// The 1.6 wire spelling (a 2.0.1-only code: its 2.0.1 name, e.g. as a metric's label).
    /// 1.6 misspells "Occurence" and says "FormationViolation" (OCPP 2.0 renamed them);
    /// chargers compare these literally.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotImplemented => "NotImplemented",
            ErrorCode::NotSupported => "NotSupported",
            ErrorCode::InternalError => "InternalError",
            ErrorCode::ProtocolError => "ProtocolError",
            ErrorCode::SecurityError => "SecurityError",
            ErrorCode::FormationViolation => "FormationViolation",
            ErrorCode::PropertyConstraintViolation => "PropertyConstraintViolation",
            ErrorCode::OccurenceConstraintViolation => "OccurenceConstraintViolation",
            ErrorCode::TypeConstraintViolation => "TypeConstraintViolation",
            ErrorCode::GenericError => "GenericError",
            ErrorCode::MessageTypeNotSupported => "MessageTypeNotSupported",
            ErrorCode::RpcFrameworkError => "RpcFrameworkError",
        }
    }

    /// The wire spelling in `version`: 2.0.1 says FormatViolation (1.6: FormationViolation) and
    /// OccurrenceConstraintViolation (1.6: OccurenceConstraintViolation); a 2.0.1-only code is
    /// GenericError in 1.6. `as_str()` stays the 1.6 spelling.
    pub fn spelled(self, version: OcppVersion) -> &'static str {
        match (version, self) {
            (OcppVersion::V201, ErrorCode::FormationViolation) => "FormatViolation",
            (OcppVersion::V201, ErrorCode::OccurenceConstraintViolation) => {
                "OccurrenceConstraintViolation"
            }
            (
                OcppVersion::V16,
                ErrorCode::MessageTypeNotSupported | ErrorCode::RpcFrameworkError,
            ) => "GenericError",
            _ => self.as_str(),
        }
    }

    /// A charger's CALLERROR code in either version's spelling (exactly, case-sensitive).
    pub fn from_name(name: &str) -> Option<ErrorCode> {
        ErrorCode::ALL
            .into_iter()
            .find(|code| code.as_str() == name || code.spelled(OcppVersion::V201) == name)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A CALL that must be answered with a CALLERROR.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub code: ErrorCode,
    /// Names the offending field path, e.g. `meterValue[0].sampledValue[2].measurand: ...`.
    pub description: String,
}

impl Violation {
    pub fn new(code: ErrorCode, description: impl Into<String>) -> Violation {
        Violation {
            code,
            description: description.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.description)
    }
}

impl std::error::Error for Violation {}

/// At most 40 characters of an offending value, so an error description stays small
/// even when a charger sends a huge bad value.
pub(crate) fn excerpt(text: &str) -> &str {
    match text.char_indices().nth(40) {
        Some((cut, _)) => &text[..cut],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_are_the_1_6_ones() {
        let names: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            names,
            [
                "NotImplemented",
                "NotSupported",
                "InternalError",
                "ProtocolError",
                "SecurityError",
                "FormationViolation",
                "PropertyConstraintViolation",
                "OccurenceConstraintViolation",
                "TypeConstraintViolation",
                "GenericError",
                "MessageTypeNotSupported",
                "RpcFrameworkError",
            ]
        );
        for code in ErrorCode::ALL {
            let in_16 = code.spelled(OcppVersion::V16);
            let only_201 = matches!(
                code,
                ErrorCode::MessageTypeNotSupported | ErrorCode::RpcFrameworkError
            );
            assert_eq!(in_16 == code.as_str(), !only_201, "{code:?}");
        }
    }

    #[test]
    fn two_codes_are_spelled_otherwise_in_2_0_1_and_two_exist_only_there() {
        let spelled: Vec<(&str, &str)> = ErrorCode::ALL
            .iter()
            .map(|c| (c.spelled(OcppVersion::V16), c.spelled(OcppVersion::V201)))
            .filter(|(in_16, in_201)| in_16 != in_201)
            .collect();
        assert_eq!(
            spelled,
            [
                ("FormationViolation", "FormatViolation"),
                (
                    "OccurenceConstraintViolation",
                    "OccurrenceConstraintViolation"
                ),
                ("GenericError", "MessageTypeNotSupported"),
                ("GenericError", "RpcFrameworkError"),
            ]
        );
    }

    #[test]
    fn from_name_reads_either_spelling_and_rejects_others() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_name(code.as_str()), Some(code));
            assert_eq!(
                ErrorCode::from_name(code.spelled(OcppVersion::V201)),
                Some(code)
            );
        }
        assert_eq!(
            ErrorCode::from_name("OccurrenceConstraintViolation"),
            Some(ErrorCode::OccurenceConstraintViolation)
        );
        assert_eq!(
            ErrorCode::from_name("FormatViolation"),
            Some(ErrorCode::FormationViolation)
        );
        for other in ["formatviolation", "Formation", "GenericError ", ""] {
            assert_eq!(ErrorCode::from_name(other), None, "{other:?}");
        }
    }

    #[test]
    fn excerpt_keeps_at_most_40_characters() {
        assert_eq!(excerpt("short"), "short");
        assert_eq!(excerpt(&"é".repeat(100)), "é".repeat(40));
    }

    #[test]
    fn violation_displays_code_and_description() {
        let v = Violation::new(ErrorCode::GenericError, "idTag: boom");
        assert_eq!(v.to_string(), "GenericError: idTag: boom");
    }
}
