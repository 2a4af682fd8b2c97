//! Steps the REST API suites share: making a site, inviting a team to one and accepting, finding
//! a caller's team, and reading the field names of an answer.

use super::{Api, Cms};
use serde_json::{Value, json};

/// The body of a new site, every address field given: its one-line address reads
/// `Stationsplein 12A, 1012 AB Amsterdam`.
pub fn site_body(name: &str) -> Value {
    json!({
        "name": name, "street": "Stationsplein", "house_number": 12,
        "house_number_addition": "A", "postal_code": "1012 AB", "city": "Amsterdam",
        "country": "NL"
    })
}

/// Creates a site of the caller's personal team; returns it as the answer shows it.
pub async fn create_site(api: &Api, name: &str) -> Value {
    api.expect(201, "POST", "/api/v3/sites", Some(&site_body(name)))
        .await["data"]
        .clone()
}

/// The uuid of a resource as an answer shows it.
pub fn uuid_of(resource: &Value) -> String {
    resource["uuid"]
        .as_str()
        .unwrap_or_else(|| panic!("a uuid: {resource}"))
        .to_string()
}

/// The operators' default site (where `cms charger add` puts chargers), as the sites list
/// shows it to an operator; it exists once a charger was added.
pub async fn operators_site(api: &Api) -> String {
    let sites = api.get_ok("/api/v3/sites").await;
    sites["data"][0]["uuid"]
        .as_str()
        .unwrap_or_else(|| panic!("the operator sees the default site: {sites}"))
        .to_string()
}

/// The caller's team of `team_type` (`operators`, `personal`, ...).
pub async fn team_of_type(api: &Api, team_type: &str) -> Value {
    let teams = api.get_ok("/api/v2/teams").await;
    let data = teams["data"].as_array().expect("a data array");
    let team = data.iter().find(|t| t["type"] == team_type);
    team.unwrap_or_else(|| panic!("no {team_type} team in {teams}"))
        .clone()
}

/// Invites `email` to the site with the access `body` describes; returns the invite's token.
pub async fn invite(api: &Api, site: &str, email: &str, mut body: Value) -> String {
    body["email"] = json!(email);
    let path = format!("/api/v3/sites/{site}/teams/invite");
    let answer = api.expect(201, "POST", &path, Some(&body)).await;
    answer["invite_token"]
        .as_str()
        .expect("a token")
        .to_string()
}

/// Accepts an invite to the site for the caller's personal team; returns the team's access.
pub async fn accept_invite(api: &Api, site: &str, token: &str) -> Value {
    let path = format!("/api/v3/sites/{site}/teams/invite/accept");
    let answer = api
        .expect(200, "POST", &path, Some(&json!({"token": token})))
        .await;
    answer["data"].clone()
}

/// `owner` invites `email` to the site with the access `body` describes, and a user of that
/// address outside the Operators team (another customer) accepts for their personal team.
/// Returns the guest's client.
pub async fn invite_guest(cms: &Cms, owner: &Api, site: &str, email: &str, body: Value) -> Api {
    let token = invite(owner, site, email, body).await;
    let guest = Api::new(cms, &cms.guest_token(email).await);
    accept_invite(&guest, site, &token).await;
    guest
}

/// The field names of a JSON object, sorted.
pub fn sorted_keys(object: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = object
        .as_object()
        .unwrap_or_else(|| panic!("an object: {object}"))
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    keys
}

/// `POST /api/v3/teams/{team}/tariffs` that must answer 201; the new tariff's uuid.
pub async fn create_tariff(api: &Api, team: &str, tariff: &Value) -> String {
    let path = format!("/api/v3/teams/{team}/tariffs");
    uuid_of(&api.expect(201, "POST", &path, Some(tariff)).await["data"])
}
