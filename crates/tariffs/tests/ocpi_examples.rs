//! OCPI 2.2.1 worked examples, written by others (tests/ocpi/README.md): every CDR priced
//! through the engine call, rounding and components `price` uses, its totals checked to the cent.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use cms_tariffs::{ComponentKind, Cost, price_ocpi};
use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::Value;
use serde_json::value::RawValue;

/// The CDR totals checked, and the component each one is.
const TOTALS: [(&str, Option<ComponentKind>); 5] = [
    ("total_cost", None),
    ("total_energy_cost", Some(ComponentKind::Energy)),
    ("total_time_cost", Some(ComponentKind::Time)),
    ("total_parking_cost", Some(ComponentKind::ParkingTime)),
    ("total_fixed_cost", Some(ComponentKind::Flat)),
];

#[test]
fn every_worked_example_is_priced_to_the_cent() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ocpi");
    let mut cases = 0;
    let mut checked = 0;
    for dir in sorted(&root).into_iter().filter(|p| p.is_dir()) {
        for cdr_path in sorted(&dir)
            .into_iter()
            .filter(|p| name(p).starts_with("cdr"))
        {
            let cdr_json = relaxed(&std::fs::read_to_string(&cdr_path).unwrap());
            let tariff_json = match std::fs::read_to_string(dir.join("tariff.json")) {
                Ok(text) => relaxed(&text),
                Err(_) => tariff_inside(&cdr_json),
            };
            let label = format!("{}/{}", name(&dir), name(&cdr_path));
            let cost = price_ocpi(&tariff_json, &cdr_json, chrono_tz::Tz::Europe__Amsterdam)
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            checked += check(&label, &cost, &expected(&dir, &cdr_path, &cdr_json));
            cases += 1;
        }
    }
    // 9 directories, one of which holds two CDRs; 34 amounts stated among them.
    assert_eq!((cases, checked), (10, 34));
}

/// Each total the CDR states, overridden by the project's `output_price__` corrections.
fn expected(dir: &Path, cdr_path: &Path, cdr_json: &str) -> Value {
    let mut totals: Value = serde_json::from_str(cdr_json).unwrap();
    let corrections = dir.join(format!("output_price__{}", name(cdr_path)));
    if let Ok(text) = std::fs::read_to_string(corrections) {
        let corrected: Value = serde_json::from_str(&relaxed(&text)).unwrap();
        for (key, value) in corrected["cdr_price"].as_object().unwrap() {
            totals[key] = value.clone();
        }
    }
    totals
}

/// Compares every total present; returns how many amounts were compared.
fn check(label: &str, cost: &Cost, expected: &Value) -> usize {
    let mut compared = 0;
    for (key, kind) in TOTALS {
        let Some(total) = expected.get(key).filter(|v| !v.is_null()) else {
            continue;
        };
        let want_excl = cents(&total["excl_vat"]);
        match kind {
            None => {
                assert_eq!(cost.excl_vat, want_excl, "{label}: {key}.excl_vat");
                assert_eq!(
                    cost.incl_vat,
                    cents(&total["incl_vat"]),
                    "{label}: {key}.incl_vat"
                );
                compared += 2;
            }
            Some(kind) => {
                let component = cost.components.iter().find(|c| c.kind == kind);
                let got = component.map_or("0.00", |c| c.excl_vat.as_str());
                assert_eq!(got, want_excl, "{label}: {key}.excl_vat");
                compared += 1;
            }
        }
    }
    compared
}

/// A JSON number or decimal string to the cent, half away from zero: "2.223" is "2.22".
fn cents(amount: &Value) -> String {
    let text = amount
        .as_str()
        .map_or_else(|| amount.to_string(), str::to_owned);
    let mut d = Decimal::from_str(&text)
        .unwrap()
        .round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
    d.rescale(2);
    d.to_string()
}

/// The first tariff embedded in a CDR, as its exact text.
fn tariff_inside(cdr_json: &str) -> String {
    #[derive(serde::Deserialize)]
    struct WithTariffs<'a> {
        #[serde(borrow)]
        tariffs: Vec<&'a RawValue>,
    }
    let cdr: WithTariffs = serde_json::from_str(cdr_json).unwrap();
    cdr.tariffs[0].get().to_owned()
}

/// The project's JSON with its `//` comment lines and trailing commas taken out.
fn relaxed(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect();
    let text = lines.join("\n");
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for (i, c) in text.char_indices() {
        if in_string {
            (in_string, escaped) = (escaped || c != '"', !escaped && c == '\\');
        } else if c == '"' {
            in_string = true;
        } else if c == ',' && text[i + 1..].trim_start().starts_with(['}', ']']) {
            continue;
        }
        out.push(c);
    }
    out
}

fn sorted(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    paths
}

fn name(path: &Path) -> &str {
    path.file_name().unwrap().to_str().unwrap()
}

#[test]
fn relaxed_json_drops_comments_and_trailing_commas_only() {
    let text = "{\n  // note, with a comma\n  \"a\": [1, 2,],\n  \"b\": \"x,}\",\n}";
    assert_eq!(relaxed(text), "{\n  \"a\": [1, 2],\n  \"b\": \"x,}\"\n}");
}
