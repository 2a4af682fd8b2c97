//! MeterValues CALL parsing: serde_json vs simd-json into the borrowed tree, and the full
//! production path (`parse_frame` + `parse_request`, validation included), with the gateway's
//! MeterValues reader that builds no tree (`split_call+parse_request`) beside the tree path it
//! replaced (`split_call+parse_request_tree`). Beside them (`v201_beside_v16/...`), OCPP 2.0.1's
//! MeterValues and TransactionEvent(Updated) carrying the same samples, checked by
//! `v201::check_request` (the schema-driven streaming validator), against 1.6's
//! `check_meter_values`, so that the costs read side by side.

use std::hint::black_box;
use std::time::Duration;

use cms_ocpp::v16::{
    Action, Request, check_meter_values, parse_request, parse_request_tree, read_meter_values,
};
use cms_ocpp::v201;
use cms_ocpp::{Frame, Json, Violation, parse_frame, split_call};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// One sampled value as a charger writes it (all attributes spelled out).
fn sample(value: &str, measurand: &str, phase: Option<&str>, location: &str, unit: &str) -> String {
    let phase = phase
        .map(|p| format!(r#","phase":"{p}""#))
        .unwrap_or_default();
    format!(
        r#"{{"value":"{value}","context":"Sample.Periodic","format":"Raw","measurand":"{measurand}"{phase},"location":"{location}","unit":"{unit}"}}"#
    )
}

fn frame(message_id: &str, samples: &[String]) -> String {
    format!(
        r#"[2,"{message_id}","MeterValues",{{"connectorId":1,"transactionId":18342,"meterValue":[{{"timestamp":"2026-11-21T10:15:00.000Z","sampledValue":[{}]}}]}}]"#,
        samples.join(",")
    )
}

fn energy() -> String {
    sample(
        "15243.7",
        "Energy.Active.Import.Register",
        None,
        "Outlet",
        "Wh",
    )
}

fn power() -> String {
    sample("10987.2", "Power.Active.Import", None, "Outlet", "W")
}

fn soc() -> String {
    sample("63", "SoC", None, "EV", "Percent")
}

/// A three-phase AC charger's full periodic sample set.
fn three_phase() -> Vec<String> {
    vec![
        energy(),
        power(),
        sample("15.92", "Current.Import", Some("L1"), "Outlet", "A"),
        sample("15.87", "Current.Import", Some("L2"), "Outlet", "A"),
        sample("15.95", "Current.Import", Some("L3"), "Outlet", "A"),
        sample("230.4", "Voltage", Some("L1-N"), "Outlet", "V"),
        sample("231.1", "Voltage", Some("L2-N"), "Outlet", "V"),
        sample("229.8", "Voltage", Some("L3-N"), "Outlet", "V"),
        sample("16.00", "Current.Offered", None, "Outlet", "A"),
        sample("11040", "Power.Offered", None, "Outlet", "W"),
        sample("38.5", "Temperature", None, "Body", "Celsius"),
        soc(),
    ]
}

/// Escapes in the message id and an OCMF signed-meter value (JSON inside a string).
fn escaped() -> String {
    let signed = r#"{"value":"OCMF|{\"FV\":\"1.0\",\"GI\":\"Ger\u00e4t 7\",\"RD\":[{\"RV\":15.2437,\"RU\":\"kWh\"}]}|{\"SA\":\"ECDSA-secp256r1-SHA256\",\"SD\":\"3045022100c4\"}","context":"Sample.Periodic","format":"SignedData","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"kWh"}"#;
    frame(
        r#"caf\u00e9-\"7\"-42"#,
        &[energy(), power(), signed.to_owned()],
    )
}

fn frames() -> Vec<(&'static str, String)> {
    let twelve = three_phase();
    assert_eq!(twelve.len(), 12);
    let three = vec![energy(), power(), soc()];
    let frames = vec![
        (
            "1_sample",
            frame("a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d", &[energy()]),
        ),
        (
            "3_samples",
            frame("a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5e", &three),
        ),
        (
            "12_samples",
            frame("a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5f", &twelve),
        ),
        ("escaped", escaped()),
    ];
    // Every frame must pass the production path, or the numbers mean nothing.
    for (name, text) in &frames {
        let sampled = production(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(sampled >= 1, "{name}");
        eprintln!("{name}: {} bytes, {sampled} sampled values", text.len());
    }
    frames
}

/// parse_frame + parse_request; returns the number of sampled values seen.
fn production(text: &str) -> Result<usize, String> {
    let frame = parse_frame(text).map_err(|e| e.to_string())?;
    let Frame::Call {
        action, payload, ..
    } = frame
    else {
        return Err("not a CALL".into());
    };
    let action = Action::from_name(&action).ok_or("unknown action")?;
    match parse_request(action, payload.get()).map_err(|e| e.to_string())? {
        Request::MeterValues(m) => Ok(m.meter_value.iter().map(|v| v.sampled_value.len()).sum()),
        _ => Err("not MeterValues".into()),
    }
}

/// What the gateway does first: split_call (no payload pass), then `parse` (`parse_request`,
/// or `parse_request_tree`, the tree path that still decides every refusal).
fn production_split(
    text: &str,
    parse: for<'a> fn(Action, &'a str) -> Result<Request<'a>, Violation>,
) -> Result<usize, String> {
    let parts = split_call(text).ok_or("not a plain CALL")?;
    let action = Action::from_name(parts.action).ok_or("unknown action")?;
    match parse(action, parts.payload).map_err(|e| e.to_string())? {
        Request::MeterValues(m) => Ok(m.meter_value.iter().map(|v| v.sampled_value.len()).sum()),
        _ => Err("not MeterValues".into()),
    }
}

/// simd-json rewrites its input, so each run works on a fresh copy of the charger's bytes.
fn refill(scratch: &mut Vec<u8>, text: &str) {
    scratch.clear();
    scratch.extend_from_slice(text.as_bytes());
}

fn meter_values(c: &mut Criterion) {
    for (name, text) in frames() {
        let mut group = c.benchmark_group(format!("meter_values/{name}"));
        group.throughput(Throughput::Bytes(text.len() as u64));
        let mut scratch = Vec::with_capacity(text.len());
        let mut buffers = simd_json::Buffers::new(text.len());

        group.bench_function(BenchmarkId::from_parameter("serde_json_tree"), |b| {
            b.iter(|| {
                let tree: Json<'_> = serde_json::from_str(black_box(&text)).unwrap();
                black_box(&tree);
            })
        });
        group.bench_function(BenchmarkId::from_parameter("simd_json_serde_tree"), |b| {
            b.iter(|| {
                refill(&mut scratch, black_box(&text));
                let tree: Json<'_> = simd_json::serde::from_slice(&mut scratch).unwrap();
                black_box(&tree);
            })
        });
        group.bench_function(
            BenchmarkId::from_parameter("simd_json_serde_tree_reused_buffers"),
            |b| {
                b.iter(|| {
                    refill(&mut scratch, black_box(&text));
                    let tree: Json<'_> =
                        simd_json::serde::from_slice_with_buffers(&mut scratch, &mut buffers)
                            .unwrap();
                    black_box(&tree);
                })
            },
        );
        group.bench_function(
            BenchmarkId::from_parameter("simd_json_borrowed_value"),
            |b| {
                b.iter(|| {
                    refill(&mut scratch, black_box(&text));
                    let value = simd_json::to_borrowed_value(&mut scratch).unwrap();
                    black_box(&value);
                })
            },
        );
        group.bench_function(
            BenchmarkId::from_parameter("parse_frame+parse_request"),
            |b| b.iter(|| black_box(production(black_box(&text)).unwrap())),
        );
        if split_call(&text).is_none() {
            // An escaped message id: the gateway takes parse_frame, measured above.
            group.finish();
            continue;
        }
        group.bench_function(
            BenchmarkId::from_parameter("split_call+parse_request"),
            |b| b.iter(|| black_box(production_split(black_box(&text), parse_request).unwrap())),
        );
        // What the gateway runs: the same checks, the lists not kept.
        group.bench_function(
            BenchmarkId::from_parameter("split_call+check_meter_values"),
            |b| {
                b.iter(|| {
                    let parts = split_call(black_box(&text)).expect("a plain CALL");
                    black_box(check_meter_values(parts.payload).unwrap())
                })
            },
        );
        // The same reader on simd-json's deserializer (its tape, then the visitors): it needs
        // a mutable copy of the payload, as simd-json rewrites its input.
        let payload = split_call(&text).expect("a plain CALL").payload.to_string();
        group.bench_function(
            BenchmarkId::from_parameter("simd_json_streamed_request"),
            |b| {
                b.iter(|| {
                    refill(&mut scratch, black_box(&payload));
                    let mut de = simd_json::Deserializer::from_slice_with_buffers(
                        &mut scratch,
                        &mut buffers,
                    )
                    .unwrap();
                    let request = read_meter_values(&mut de).unwrap();
                    black_box(request.meter_value.len());
                })
            },
        );
        group.bench_function(
            BenchmarkId::from_parameter("split_call+parse_request_tree"),
            |b| {
                b.iter(|| {
                    black_box(production_split(black_box(&text), parse_request_tree).unwrap())
                })
            },
        );
        group.finish();
    }
}

/// One sample as (value, measurand, phase, location, unit): the 1.6 and 2.0.1 frames below
/// carry the same ones.
type Sample = (
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static str,
    &'static str,
);

const ENERGY: Sample = (
    "15243.7",
    "Energy.Active.Import.Register",
    None,
    "Outlet",
    "Wh",
);
const POWER: Sample = ("10987.2", "Power.Active.Import", None, "Outlet", "W");
const SOC: Sample = ("63", "SoC", None, "EV", "Percent");

/// The three-phase set of `three_phase()`; 2.0.1 has no Temperature measurand, so the body
/// temperature is a Frequency reading here (in both versions, to keep the samples equal).
const THREE_PHASE: [Sample; 12] = [
    ENERGY,
    POWER,
    ("15.92", "Current.Import", Some("L1"), "Outlet", "A"),
    ("15.87", "Current.Import", Some("L2"), "Outlet", "A"),
    ("15.95", "Current.Import", Some("L3"), "Outlet", "A"),
    ("230.4", "Voltage", Some("L1-N"), "Outlet", "V"),
    ("231.1", "Voltage", Some("L2-N"), "Outlet", "V"),
    ("229.8", "Voltage", Some("L3-N"), "Outlet", "V"),
    ("16.00", "Current.Offered", None, "Outlet", "A"),
    ("11040", "Power.Offered", None, "Outlet", "W"),
    ("50.01", "Frequency", None, "Outlet", "Hertz"),
    SOC,
];

fn sample_v201((value, measurand, phase, location, unit): Sample) -> String {
    let phase = phase
        .map(|p| format!(r#","phase":"{p}""#))
        .unwrap_or_default();
    format!(
        r#"{{"value":{value},"context":"Sample.Periodic","measurand":"{measurand}"{phase},"location":"{location}","unitOfMeasure":{{"unit":"{unit}"}}}}"#
    )
}

/// The same meter value in 1.6 (MeterValues), and in 2.0.1 as MeterValues and as
/// TransactionEvent(Updated): CALL frames.
fn same_samples(samples: &[Sample]) -> [String; 3] {
    let v16: Vec<String> = samples
        .iter()
        .map(|&(value, measurand, phase, location, unit)| {
            sample(value, measurand, phase, location, unit)
        })
        .collect();
    let v201: Vec<String> = samples.iter().map(|&s| sample_v201(s)).collect();
    let meter_value = format!(
        r#"[{{"timestamp":"2026-11-21T10:15:00.000Z","sampledValue":[{}]}}]"#,
        v201.join(",")
    );
    [
        frame("a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c60", &v16),
        format!(
            r#"[2,"a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c61","MeterValues",{{"evseId":1,"meterValue":{meter_value}}}]"#
        ),
        format!(
            r#"[2,"a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c62","TransactionEvent",{{"eventType":"Updated","timestamp":"2026-11-21T10:15:00.000Z","triggerReason":"MeterValuePeriodic","seqNo":4,"transactionInfo":{{"transactionId":"f8a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8","chargingState":"Charging"}},"evse":{{"id":1,"connectorId":1}},"meterValue":{meter_value}}}]"#
        ),
    ]
}

/// What the gateway runs per frame: split_call, then 1.6's `check_meter_values` or 2.0.1's
/// `check_request`.
fn v201_beside_v16(c: &mut Criterion) {
    let sets: [(&str, Vec<Sample>); 3] = [
        ("1_sample", vec![ENERGY]),
        ("3_samples", vec![ENERGY, POWER, SOC]),
        ("12_samples", THREE_PHASE.to_vec()),
    ];
    for (name, samples) in sets {
        let [v16_frame, meter_values, transaction_event] = same_samples(&samples);
        let mut group = c.benchmark_group(format!("v201_beside_v16/{name}"));
        group.bench_function(
            BenchmarkId::from_parameter("v16_meter_values+check_meter_values"),
            |b| {
                b.iter(|| {
                    let parts = split_call(black_box(&v16_frame)).expect("a plain CALL");
                    black_box(check_meter_values(parts.payload).unwrap())
                })
            },
        );
        for (label, text, action) in [
            (
                "v201_meter_values+check_request",
                &meter_values,
                v201::Action::MeterValues,
            ),
            (
                "v201_transaction_event_updated+check_request",
                &transaction_event,
                v201::Action::TransactionEvent,
            ),
        ] {
            let parts = split_call(text).expect("a plain CALL");
            assert_eq!(parts.action, action.as_str());
            v201::check_request(action, parts.payload).unwrap_or_else(|e| panic!("{text}: {e}"));
            group.bench_function(BenchmarkId::from_parameter(label), |b| {
                b.iter(|| {
                    let parts = split_call(black_box(text)).expect("a plain CALL");
                    black_box(v201::check_request(action, parts.payload).unwrap())
                })
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(30);
    targets = meter_values, v201_beside_v16
}
criterion_main!(benches);
