//! A team's sessions across its chargers (`GET /api/v3/teams/{team}/transactions` and its CSV
//! export): the chargers of every site the team sees, newest first, never another team's.

use crate::support::rest::{create_site, team_of_type, uuid_of};
use crate::support::{Api, Charger, REPLY_TIMEOUT, eventually, on_both_stores};
use serde_json::{Value, json};

async fn start(charger: &mut Charger, tag: &str, meter: i64, at: &str) -> i64 {
    let payload = json!({"connectorId": 1, "idTag": tag, "meterStart": meter, "timestamp": at});
    charger.call_result("StartTransaction", payload).await["transactionId"]
        .as_i64()
        .expect("a transactionId")
}

async fn stop(charger: &mut Charger, id: i64, meter: i64, at: &str) {
    let payload = json!({"transactionId": id, "meterStop": meter, "timestamp": at});
    charger.call_result("StopTransaction", payload).await;
}

/// `(charger identity, transaction id)` of a list answer, in order.
fn listed(answer: &Value) -> Vec<(String, i64)> {
    let data = answer["data"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"));
    data.iter()
        .map(|t| {
            let identity = t["charger_identity"].as_str().expect("charger_identity");
            (identity.to_string(), t["id"].as_i64().expect("an id"))
        })
        .collect()
}

on_both_stores!(
    a_teams_transactions_span_its_sites_and_export_as_csv,
    |cms| {
        let api = Api::new(&cms, &cms.operator_token().await);
        // The operator's personal team owns two sites; the operators' default site holds a third
        // charger, of another team.
        let team = team_of_type(&api, "personal").await;
        let team_uuid = uuid_of(&team);
        let north = uuid_of(&create_site(&api, "North").await);
        let south = uuid_of(&create_site(&api, "South").await);
        let one = cms.add_charger_with("CP-TT-1", &["--site", &north]).await;
        cms.add_charger_with("CP-TT-2", &["--site", &south]).await;
        cms.add_charger("CP-TT-X").await;
        let mut cp1 = Charger::connect_and_boot(&cms, "CP-TT-1", "1.0.0").await;
        let mut cp2 = Charger::connect_and_boot(&cms, "CP-TT-2", "1.0.0").await;
        let mut other = Charger::connect_and_boot(&cms, "CP-TT-X", "1.0.0").await;
        let a = start(&mut cp1, "TAG,1", 1000, "2026-02-10T09:00:00Z").await;
        stop(&mut cp1, a, 2500, "2026-02-10T09:30:00Z").await;
        let b = start(&mut cp2, "TAG-2", 0, "2026-02-10T10:00:00Z").await;
        start(&mut other, "TAG-X", 0, "2026-02-10T11:00:00Z").await;

        let path = format!("/api/v3/teams/{team_uuid}/transactions");
        let list = eventually("both of the team's transactions", async || {
            let answer = api.get(&path).await;
            match answer.json["data"].as_array() {
                Some(data) if data.len() == 2 && data[1]["stopped_at"].is_string() => {
                    Ok(answer.json)
                }
                _ => Err(answer.body),
            }
        })
        .await;
        let expected = [("CP-TT-2".to_string(), b), ("CP-TT-1".to_string(), a)];
        assert_eq!(listed(&list), expected, "newest first, not CP-TT-X's");
        let stopped = &list["data"][1];
        assert_eq!(stopped["charger_uuid"], one.as_str());
        assert_eq!(
            (&stopped["id_tag"], &stopped["total_kwh"]),
            (&json!("TAG,1"), &json!("1.50"))
        );
        assert_eq!(list["meta"]["current_page"], 1, "{list}");

        let query = async |q: &str| listed(&api.get_ok(&format!("{path}?{q}")).await);
        assert_eq!(query("filter[status]=active").await, expected[..1]);
        assert_eq!(query("filter[status]=stopped").await, expected[1..]);
        assert_eq!(
            query(&format!("filter[charger_uuid]={one}")).await,
            expected[1..]
        );
        assert_eq!(
            query("filter[from]=2026-02-10T09:30:00Z").await,
            expected[..1]
        );
        assert_eq!(
            query("filter[to]=2026-02-10T09:30:00Z").await,
            expected[1..]
        );
        let bad = api.get(&format!("{path}?filter[status]=paused")).await;
        assert_eq!(bad.status, 422, "{}", bad.body);
        assert!(
            bad.json["errors"]["filter.status"].is_array(),
            "{}",
            bad.body
        );

        let csv = reqwest::Client::builder()
            .no_proxy()
            .timeout(REPLY_TIMEOUT)
            .build()
            .expect("http client")
            .get(cms.http_url(&format!("{path}.csv?filter[status]=stopped")))
            .bearer_auth(cms.operator_token().await)
            .send()
            .await
            .expect("GET .csv");
        assert_eq!(csv.status(), 200);
        let header = |name: &str| csv.headers()[name].to_str().unwrap().to_string();
        assert!(header("content-type").starts_with("text/csv"));
        assert_eq!(
            header("content-disposition"),
            r#"attachment; filename="transactions.csv""#
        );
        let text = csv.text().await.expect("a body");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "transaction_uuid,charger_identity,connector_id,id_tag,started_at,stopped_at,\
         energy_kwh,cost_excl_vat,cost_incl_vat,currency"
        );
        assert_eq!(lines.len(), 2, "{text}");
        // The id the JSON gives; no price without a tariff.
        assert_eq!(
            lines[1],
            format!(
                r#"{a},CP-TT-1,1,"TAG,1",2026-02-10T09:00:00.000000Z,2026-02-10T09:30:00.000000Z,1.50,,,"#
            )
        );
        assert!(text.ends_with("\r\n") || text.ends_with('\n'));

        // Someone outside the team sees nothing of it.
        let stranger = Api::new(&cms, &cms.guest_token("stranger@example.org").await);
        assert_eq!(stranger.get(&path).await.status, 404);
        assert_eq!(stranger.get(&format!("{path}.csv")).await.status, 404);
    }
);
