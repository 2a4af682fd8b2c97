//! OCPP-J RPC error codes and the violation a rejected CALL is answered with.

use std::fmt;

/// The CALLERROR codes of OCPP-J 1.6, spelled as the 1.6 specification spells them.
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
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 10] = [
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
    ];

    /// The wire spelling. 1.6 misspells "Occurence" and says "FormationViolation"
    /// (OCPP 2.0 renamed them); chargers compare these literally.
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
        }
    }

    /// The code with this exact wire spelling, e.g. from a charger's CALLERROR.
    pub fn from_name(name: &str) -> Option<ErrorCode> {
        ErrorCode::ALL
            .into_iter()
            .find(|code| code.as_str() == name)
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
            ]
        );
    }

    #[test]
    fn from_name_round_trips_and_rejects_other_spellings() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_name(code.as_str()), Some(code));
        }
        assert_eq!(ErrorCode::from_name("OccurrenceConstraintViolation"), None);
        assert_eq!(ErrorCode::from_name("FormatViolation"), None);
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
