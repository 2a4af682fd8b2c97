//! Durations on the command line: `300` (seconds), `300s`, `5m`, `1h`, `500ms`.

use std::time::Duration;

pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (try 300, 300s, 5m, 500ms)"))?;
    let too_long = || format!("{text:?} is too long a duration");
    match unit {
        "" | "s" => Ok(Duration::from_secs(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "m" => n
            .checked_mul(60)
            .map(Duration::from_secs)
            .ok_or_else(too_long),
        "h" => n
            .checked_mul(3600)
            .map(Duration::from_secs)
            .ok_or_else(too_long),
        _ => Err(format!("{text:?} has an unknown unit (use ms, s, m or h)")),
    }
}

/// A duration that must not be zero: a period, or a time-out that zero would make absurd.
pub fn positive_duration(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        Duration::ZERO => Err(format!("{text:?}: must be more than zero")),
        duration => Ok(duration),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_a_unit_or_default_to_seconds() {
        assert_eq!(parse_duration("300"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("18446744073709551615h").is_err());
    }

    #[test]
    fn a_period_is_never_zero() {
        assert_eq!(positive_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(positive_duration("1ms"), Ok(Duration::from_millis(1)));
        assert!(positive_duration("0").is_err());
        assert!(positive_duration("0ms").is_err());
        assert!(positive_duration("ten").is_err());
    }
}
