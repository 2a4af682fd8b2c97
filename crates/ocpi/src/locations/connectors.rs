//! A connector's technical fields in OCPI's vocabulary (2.2.1 "ConnectorType",
//! "ConnectorFormat", "PowerType") from what cms keeps (`connectors.standard`, `format`,
//! `power_type`, `max_voltage`, `max_amperage`, all optional and free text), with a default
//! for each when the value is missing or unknown (docs/ocpi.md "Locations and tariffs").

/// OCPI 2.2.1's ConnectorType values, spelt as the spec spells them.
const STANDARDS: [&str; 40] = [
    "CHADEMO",
    "CHAOJI",
    "DOMESTIC_A",
    "DOMESTIC_B",
    "DOMESTIC_C",
    "DOMESTIC_D",
    "DOMESTIC_E",
    "DOMESTIC_F",
    "DOMESTIC_G",
    "DOMESTIC_H",
    "DOMESTIC_I",
    "DOMESTIC_J",
    "DOMESTIC_K",
    "DOMESTIC_L",
    "DOMESTIC_M",
    "DOMESTIC_N",
    "DOMESTIC_O",
    "GBT_AC",
    "GBT_DC",
    "IEC_60309_2_single_16",
    "IEC_60309_2_three_16",
    "IEC_60309_2_three_32",
    "IEC_60309_2_three_64",
    "IEC_62196_T1",
    "IEC_62196_T1_COMBO",
    "IEC_62196_T2",
    "IEC_62196_T2_COMBO",
    "IEC_62196_T3A",
    "IEC_62196_T3C",
    "NEMA_5_20",
    "NEMA_6_30",
    "NEMA_6_50",
    "NEMA_10_30",
    "NEMA_10_50",
    "NEMA_14_30",
    "NEMA_14_50",
    "PANTOGRAPH_BOTTOM_UP",
    "PANTOGRAPH_TOP_DOWN",
    "TESLA_R",
    "TESLA_S",
];

/// Common names of connectors (and OCPP 2.0.1's ConnectorEnumType) → OCPI's.
const STANDARD_ALIASES: [(&str, &str); 16] = [
    ("TYPE2", "IEC_62196_T2"),
    ("TYPE_2", "IEC_62196_T2"),
    ("T2", "IEC_62196_T2"),
    ("MENNEKES", "IEC_62196_T2"),
    ("CTYPE2", "IEC_62196_T2"),
    ("STYPE2", "IEC_62196_T2"),
    ("TYPE1", "IEC_62196_T1"),
    ("TYPE_1", "IEC_62196_T1"),
    ("J1772", "IEC_62196_T1"),
    ("CTYPE1", "IEC_62196_T1"),
    ("CCS", "IEC_62196_T2_COMBO"),
    ("CCS2", "IEC_62196_T2_COMBO"),
    ("CCCS2", "IEC_62196_T2_COMBO"),
    ("CCS1", "IEC_62196_T1_COMBO"),
    ("CCCS1", "IEC_62196_T1_COMBO"),
    ("CG105", "CHADEMO"),
];

/// OCPI's PowerType values.
pub const POWER_TYPES: [&str; 5] = [
    "AC_1_PHASE",
    "AC_2_PHASE",
    "AC_2_PHASE_SPLIT",
    "AC_3_PHASE",
    "DC",
];

/// A name as compared: capitals, every run of other characters one `_`, none at the ends.
fn normalised(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// The connector's power type: the stored one when OCPI knows it (or a common name of it),
/// else `AC_3_PHASE`.
pub fn power_type(stored: Option<&str>) -> &'static str {
    let Some(name) = stored.map(normalised) else {
        return "AC_3_PHASE";
    };
    if let Some(known) = POWER_TYPES.iter().find(|p| **p == name) {
        return known;
    }
    match name.as_str() {
        "AC1" | "AC_1" | "SINGLE_PHASE" | "1_PHASE" | "MONOPHASE" => "AC_1_PHASE",
        "DIRECT_CURRENT" => "DC",
        _ => "AC_3_PHASE",
    }
}

/// The connector's standard: the stored one when OCPI knows it (or a common name of it), else
/// `IEC_62196_T2_COMBO` (CCS) for DC and `IEC_62196_T2` (Type 2) for AC.
pub fn standard(stored: Option<&str>, power_type: &str) -> &'static str {
    if let Some(name) = stored.map(normalised) {
        let known = STANDARDS.iter().find(|s| s.to_ascii_uppercase() == name);
        if let Some(known) = known {
            return known;
        }
        if let Some((_, ocpi)) = STANDARD_ALIASES.iter().find(|(alias, _)| *alias == name) {
            return ocpi;
        }
    }
    if power_type == "DC" {
        "IEC_62196_T2_COMBO"
    } else {
        "IEC_62196_T2"
    }
}

/// The connector's format: `SOCKET` or `CABLE` as stored (`tethered` reads as a cable), else
/// `CABLE` for DC (fast chargers have their cables attached) and `SOCKET` for AC.
pub fn format(stored: Option<&str>, power_type: &str) -> &'static str {
    match stored.map(normalised).as_deref() {
        Some("SOCKET") => "SOCKET",
        Some("CABLE" | "TETHERED" | "ATTACHED") => "CABLE",
        _ if power_type == "DC" => "CABLE",
        _ => "SOCKET",
    }
}

/// The largest voltage (line to neutral for AC): as stored when positive, else 230 V for AC
/// and 400 V for DC.
pub fn max_voltage(stored: Option<i64>, power_type: &str) -> i64 {
    match stored.filter(|v| *v > 0) {
        Some(v) => v,
        None if power_type == "DC" => 400,
        None => 230,
    }
}

/// The largest current: the connector's as stored when positive, else the charger's
/// maximum current, else 16 A for AC and 125 A for DC.
pub fn max_amperage(stored: Option<i64>, charger_max: Option<f64>, power_type: &str) -> i64 {
    let charger = charger_max
        .filter(|a| a.is_finite() && *a >= 1.0)
        .map(|a| a.round() as i64);
    match stored.filter(|a| *a > 0).or(charger) {
        Some(a) => a,
        None if power_type == "DC" => 125,
        None => 16,
    }
}

/// The most power, in W: voltage × current × the phases carrying it.
pub fn max_electric_power(voltage: i64, amperage: i64, power_type: &str) -> i64 {
    let phases = match power_type {
        "AC_3_PHASE" => 3,
        "AC_2_PHASE" | "AC_2_PHASE_SPLIT" => 2,
        _ => 1,
    };
    voltage.saturating_mul(amperage).saturating_mul(phases)
}
