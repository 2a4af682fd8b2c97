//! Prometheus text exposition, read just enough to find samples by name and label.

pub struct Metrics {
    pub text: String,
    samples: Vec<Sample>,
}

struct Sample {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

impl Metrics {
    pub fn parse(text: &str) -> Metrics {
        let samples = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|line| parse_sample(line).unwrap_or_else(|| panic!("bad metrics line: {line:?}")))
            .collect();
        Metrics {
            text: text.to_string(),
            samples,
        }
    }

    /// The sum of the samples named `name` whose labels include all of `labels`; `None` when
    /// no such sample exists.
    pub fn sum(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let matching: Vec<f64> = self
            .samples
            .iter()
            .filter(|s| s.name == name)
            .filter(|s| {
                labels
                    .iter()
                    .all(|(k, v)| s.labels.iter().any(|(lk, lv)| lk == k && lv == v))
            })
            .map(|s| s.value)
            .collect();
        (!matching.is_empty()).then(|| matching.iter().sum())
    }

    /// Every label value of every sample.
    pub fn label_values(&self) -> impl Iterator<Item = &str> {
        self.samples
            .iter()
            .flat_map(|s| s.labels.iter().map(|(_, v)| v.as_str()))
    }
}

fn parse_sample(line: &str) -> Option<Sample> {
    let (series, value) = line.trim().rsplit_once(' ')?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().ok()?,
    };
    let (name, labels) = match series.split_once('{') {
        None => (series.to_string(), Vec::new()),
        Some((name, rest)) => (name.to_string(), parse_labels(rest.strip_suffix('}')?)?),
    };
    Some(Sample {
        name,
        labels,
        value,
    })
}

/// `a="x",b="y\"z"` into pairs.
fn parse_labels(mut rest: &str) -> Option<Vec<(String, String)>> {
    let mut labels = Vec::new();
    while !rest.is_empty() {
        let (key, after) = rest.split_once("=\"")?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next()? {
                (_, '\\') => value.push(chars.next()?.1),
                (i, '"') => break i,
                (_, c) => value.push(c),
            }
        };
        labels.push((key.trim_start_matches(',').trim().to_string(), value));
        rest = &after[end + 1..];
    }
    Some(labels)
}

#[test]
fn reads_names_labels_and_values() {
    let m = Metrics::parse(
        "# TYPE x counter\nx{code=\"A\",node=\"n\"} 2\nx{code=\"B\"} 3\ny 1.5\nh_bucket{le=\"+Inf\"} 4\n",
    );
    assert_eq!(m.sum("x", &[]), Some(5.0));
    assert_eq!(m.sum("x", &[("code", "A")]), Some(2.0));
    assert_eq!(m.sum("x", &[("code", "C")]), None);
    assert_eq!(m.sum("y", &[]), Some(1.5));
    assert_eq!(m.sum("h_bucket", &[("le", "+Inf")]), Some(4.0));
}
