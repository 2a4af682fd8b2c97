//! The error responses an operation documents because of its path and its input, declared once
//! here: a 404 from what its path parameters name, a 422 when it reads a body or query
//! parameters, a 400 when its body is JSON. `openapi::standard_responses` adds them to every
//! scoped operation of the document; the e2e check (tests/e2e/api_openapi.rs) includes this
//! file to hold the document to them. So it uses nothing of the crate, only `serde_json`.

use serde_json::Value;

/// What each path parameter names, as a 404 says it ("Not <this>"), by the path that ends in
/// the parameter: the longest that fits wins (a team under a site is one with access to it).
/// A path parameter missing here is a bug: [`not_found`] panics, so `cms up` does not start.
pub const PATH_PARAMETERS: [(&str, &str); 19] = [
    ("/chargers/{charger_uuid}", "a charger the caller sees"),
    ("/meters/chargee/{chargee}", "a charger the caller sees"),
    ("/connectors/{connector_id}", "a connector number"),
    ("/actions/{action}", "an action"),
    (
        "/reservations/{reservation_id}",
        "a reservation of the charger",
    ),
    ("/sites/{site_uuid}", "a site the caller sees"),
    (
        "/sites/{site_uuid}/teams/{team_uuid}",
        "a team with access to the site",
    ),
    ("/teams/{team_uuid}", "a team of the caller"),
    ("/teams/{team_id}", "a team of the caller"),
    ("/sites/{site_id}", "a site the team reaches"),
    ("/domains/{domain_id}", "its domain"),
    ("/id-tags/{id_tag}", "its tag"),
    ("/tariffs/{tariff_uuid}", "its tariff"),
    ("/providers/{provider_uuid}", "its provider"),
    ("/webhooks/{webhook_uuid}", "its webhook"),
    ("/deliveries/{delivery_uuid}", "a delivery of the webhook"),
    ("/tokens/{token_id}", "a live token of the caller's"),
    ("/oauth-grants/{grant_id}", "a live grant of the caller's"),
    (
        "/transactions/{transaction_id}",
        "a transaction of the charger",
    ),
];

/// Paths whose parameters name nothing that is looked up: an invite is accepted by its token,
/// which is checked with the site (a made-up site is a 422 on `token`, never a 404).
const NOTHING_LOOKED_UP: [&str; 1] = ["/api/v3/sites/{site_uuid}/teams/invite/accept"];

/// The 404 of every operation on `path` ("Not a team of the caller, or not its tariff"), or
/// `None` when its path names nothing. An operation may write its own that says more: it
/// begins with this one.
pub fn not_found(path: &str) -> Option<String> {
    if NOTHING_LOOKED_UP.contains(&path) {
        return None;
    }
    let segments: Vec<&str> = path.split('/').collect();
    let phrases: Vec<&str> = (0..segments.len())
        .filter(|i| segments[*i].starts_with('{'))
        .map(|i| {
            let up_to = segments[..=i].join("/");
            let named = PATH_PARAMETERS
                .iter()
                .filter(|(ending, _)| up_to.ends_with(ending))
                .max_by_key(|(ending, _)| ending.len());
            let (_, phrase) = named
                .unwrap_or_else(|| panic!("{path}: {} is not in PATH_PARAMETERS", segments[i]));
            *phrase
        })
        .collect();
    (!phrases.is_empty()).then(|| format!("Not {}", phrases.join(", or not ")))
}

/// The 422 of an operation that reads a body or query parameters ("`wait` or a field of the
/// body is invalid"), or `None` when it reads neither. An operation may write its own that
/// says more: it begins with this one.
pub fn invalid(operation: &Value) -> Option<String> {
    let parameters = operation["parameters"].as_array().into_iter().flatten();
    let mut inputs: Vec<String> = parameters
        .filter(|p| p["in"] == "query")
        .filter_map(|p| p["name"].as_str())
        .map(|name| format!("`{name}`"))
        .collect();
    if operation.get("requestBody").is_some() {
        inputs.push("a field of the body".into());
    }
    let either = match inputs.as_slice() {
        [] => return None,
        [one] => one.clone(),
        [first @ .., last] => format!("{} or {last}", first.join(", ")),
    };
    let mut sentence = format!("{either} is invalid");
    if let Some(first) = sentence.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    Some(sentence)
}

/// The 400 of an operation that reads a JSON body, or `None`.
pub fn not_an_object(operation: &Value) -> Option<&'static str> {
    operation["requestBody"]["content"]
        .get("application/json")
        .map(|_| "The body is not a JSON object")
}

/// Every standard error row of an operation: (status, description, schema name).
pub fn standard(path: &str, operation: &Value) -> Vec<(&'static str, String, &'static str)> {
    let rows = [
        (
            "400",
            not_an_object(operation).map(String::from),
            "ErrorBody",
        ),
        ("404", not_found(path), "ErrorBody"),
        ("422", invalid(operation), "ValidationErrorBody"),
    ];
    rows.into_iter()
        .filter_map(|(status, description, schema)| Some((status, description?, schema)))
        .collect()
}
