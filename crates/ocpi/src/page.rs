//! Pagination of the GET list endpoints (2.2.1 part I, "Pagination"): `offset` and `limit` in
//! the query, and `Link` (the next page), `X-Total-Count` and `X-Limit` in the answer's headers;
//! `date_from` / `date_to` bound objects by `last_updated` (from inclusive, to exclusive).

use chrono::{DateTime, Utc};
use std::collections::HashMap;

/// The most objects cms answers in one page, and the default.
pub const MAX_LIMIT: u64 = 100;

/// A list request's query, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageQuery {
    pub offset: u64,
    /// At most [`MAX_LIMIT`]: a larger `limit` is lowered to it (the spec's choice for the
    /// server), and `X-Limit` tells the client.
    pub limit: u64,
    pub date_from: Option<DateTime<Utc>>,
    pub date_to: Option<DateTime<Utc>>,
}

impl PageQuery {
    /// Reads `offset`, `limit`, `date_from` and `date_to`; a value that is not a number or a
    /// DateTime is an error naming the parameter (2001).
    pub fn parse(query: &HashMap<String, String>) -> Result<PageQuery, String> {
        let number = |name: &str| -> Result<Option<u64>, String> {
            query
                .get(name)
                .map(|v| {
                    v.trim()
                        .parse::<u64>()
                        .map_err(|_| format!("{name} must be a whole number"))
                })
                .transpose()
        };
        let date = |name: &str| -> Result<Option<DateTime<Utc>>, String> {
            query
                .get(name)
                .map(|v| crate::time::parse(v).ok_or_else(|| format!("{name} must be a DateTime")))
                .transpose()
        };
        Ok(PageQuery {
            offset: number("offset")?.unwrap_or(0),
            limit: number("limit")?.unwrap_or(MAX_LIMIT).min(MAX_LIMIT),
            date_from: date("date_from")?,
            date_to: date("date_to")?,
        })
    }

    /// The headers of a page of `total` objects served from `url` (the request's own address
    /// without its query): `X-Total-Count`, `X-Limit`, and `Link` when more follow.
    pub fn headers(&self, url: &str, total: u64) -> Vec<(&'static str, String)> {
        let mut headers = vec![
            ("X-Total-Count", total.to_string()),
            ("X-Limit", self.limit.to_string()),
        ];
        let next = self.offset + self.limit;
        if self.limit > 0 && next < total {
            let mut query = format!("offset={next}&limit={}", self.limit);
            for (name, value) in [("date_from", self.date_from), ("date_to", self.date_to)] {
                if let Some(t) = value {
                    query.push_str(&format!("&{name}={}", crate::time::format(t)));
                }
            }
            headers.push(("Link", format!("<{url}?{query}>; rel=\"next\"")));
        }
        headers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_page_links_the_next_while_objects_remain() {
        let page = PageQuery::parse(&query(&[("offset", "10"), ("limit", "5")])).unwrap();
        let headers = page.headers("http://cms/ocpi/2.2.1/locations", 16);
        assert!(headers.contains(&("X-Total-Count", "16".into())));
        assert!(headers.contains(&("X-Limit", "5".into())));
        assert!(headers.contains(&(
            "Link",
            "<http://cms/ocpi/2.2.1/locations?offset=15&limit=5>; rel=\"next\"".into()
        )));
        let last = PageQuery::parse(&query(&[("offset", "15"), ("limit", "5")])).unwrap();
        assert!(
            !last
                .headers("u", 16)
                .iter()
                .any(|(name, _)| *name == "Link")
        );
    }

    #[test]
    fn a_limit_above_the_maximum_is_lowered_and_bad_values_are_named() {
        assert_eq!(
            PageQuery::parse(&query(&[("limit", "1000")]))
                .unwrap()
                .limit,
            MAX_LIMIT
        );
        assert_eq!(
            PageQuery::parse(&query(&[("offset", "-1")])).unwrap_err(),
            "offset must be a whole number"
        );
        assert!(PageQuery::parse(&query(&[("date_from", "soon")])).is_err());
    }
}
