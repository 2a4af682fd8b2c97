//! A filtered chargers list's links keep its filters (issue 43, docs/api.md "Fleet overview"):
//! page 1's `next` of `GET /api/v3/chargers?filter[...]` (and of a site's list) is the filtered
//! page 2, not the unfiltered one, so a console paging through a search stays in it.

use crate::support::rest::{create_site, uuid_of};
use crate::support::{Api, Cms, eventually};
use serde_json::{Value, json};

/// The query both lists are asked with: 27 of the 30 chargers match it (the other 3 are
/// offline too, but their reference is not "Kept bay ...").
const FILTERS: &str = "filter[search]=kept%20bay&filter[status]=offline";
/// The same filters as the links carry them, percent-encoded (RFC 3986), the page last.
const ENCODED: &str = "filter%5Bsearch%5D=kept%20bay&filter%5Bstatus%5D=offline";

fn references(page: &Value) -> Vec<String> {
    let data = page["data"].as_array().unwrap_or_else(|| panic!("{page}"));
    data.iter()
        .map(|c| c["reference"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn a_filtered_lists_next_link_leads_to_the_filtered_second_page() {
    let cms = Cms::up().await;
    let operator = Api::new(&cms, &cms.operator_token().await);
    let site = uuid_of(&create_site(&operator, "Links depot").await);
    let register = format!("/api/v3/sites/{site}/chargers");
    for n in 0..30 {
        let reference = match n < 27 {
            true => format!("Kept bay {n}"),
            false => format!("Spare bay {n}"),
        };
        let body = json!({"identity": format!("LINKS-{n:02}"), "reference": reference});
        operator.expect(201, "POST", &register, Some(&body)).await;
    }

    for list in ["/api/v3/chargers".to_string(), register.clone()] {
        // Every charger held by the fleet's state: the filtered page 2 holds the last two.
        let second = format!("{list}?{FILTERS}&page=2");
        eventually("the 27 matching chargers to be listed", async || {
            let page = operator.get_ok(&second).await;
            match references(&page).len() {
                2 => Ok(()),
                n => Err(format!("{n} on page 2: {page}")),
            }
        })
        .await;

        let first = operator.get_ok(&format!("{list}?{FILTERS}")).await;
        assert_eq!(references(&first).len(), 25, "{first}");
        let shown = format!("{} {}", first["links"], first["meta"]);
        let url = |n: i64| format!("{list}?{ENCODED}&page={n}");
        assert_eq!(first["links"]["first"], url(1).as_str(), "{shown}");
        assert_eq!(first["links"]["last"], url(2).as_str(), "{shown}");
        assert_eq!(first["links"]["next"], url(2).as_str(), "{shown}");
        assert!(first["links"]["prev"].is_null(), "{shown}");
        assert_eq!(first["meta"]["path"], list.as_str(), "{shown}");
        assert_eq!(
            first["meta"]["current_page_url"],
            url(1).as_str(),
            "{shown}"
        );

        // Followed as given: the filtered page 2, and its `prev` back to the filtered page 1.
        let next = first["links"]["next"].as_str().unwrap();
        let followed = operator.get_ok(next).await;
        let on_page_2 = references(&followed);
        assert_eq!(on_page_2.len(), 2, "{list}: {followed}");
        assert!(
            on_page_2.iter().all(|r| r.starts_with("Kept bay")),
            "{list}: an unfiltered page 2: {followed}"
        );
        assert_eq!(followed["meta"]["current_page"], 2, "{followed}");
        assert_eq!(followed["meta"]["from"], 26, "{followed}");
        assert_eq!(followed["meta"]["to"], 27, "{followed}");
        assert!(followed["links"]["next"].is_null(), "{followed}");
        let back = operator
            .get_ok(followed["links"]["prev"].as_str().unwrap())
            .await;
        assert_eq!(references(&back), references(&first), "{back}");
    }
}
