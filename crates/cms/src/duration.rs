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
    match unit {
        "" | "s" => Ok(Duration::from_secs(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "m" => Ok(Duration::from_secs(n * 60)),
        "h" => Ok(Duration::from_secs(n * 3600)),
        _ => Err(format!("{text:?} has an unknown unit (use ms, s, m or h)")),
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
    }
}
