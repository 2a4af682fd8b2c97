//! Laravel's paginator envelope: `data`, `links` and `meta`, with relative URLs; a filtered
//! list's links repeat its filters (Laravel's `withQueryString`).

use crate::http::error::ApiError;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Serialize;
use utoipa::ToSchema;

/// The page size of every list (the reference's observed 25).
pub const PER_PAGE: i64 = 25;

/// Reads `?page=`: absent means 1; anything but an integer ≥ 1 is a 422 on `page`.
pub fn page_number(raw: Option<&str>) -> Result<i64, ApiError> {
    match raw {
        None => Ok(1),
        Some(text) => match text.parse::<i64>() {
            Ok(page) if page >= 1 => Ok(page),
            Ok(_) => Err(ApiError::invalid(
                "page",
                "The page field must be at least 1.",
            )),
            Err(_) => Err(ApiError::invalid(
                "page",
                "The page field must be an integer.",
            )),
        },
    }
}

/// How many items come before page `page`: what the store skips. Saturating: `?page=` may be
/// any integer a client sends, up to i64::MAX.
pub fn page_offset(page: i64) -> i64 {
    (page - 1).saturating_mul(PER_PAGE)
}

/// A page of a list: `data`, plus Laravel's `links` and `meta` with relative URLs.
#[derive(Serialize, ToSchema)]
pub struct Page<T> {
    pub data: Vec<T>,
    pub links: Links,
    pub meta: Meta,
}

#[derive(Serialize, ToSchema)]
pub struct Links {
    pub first: Option<String>,
    pub last: Option<String>,
    pub prev: Option<String>,
    pub next: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct Meta {
    pub current_page: i64,
    pub current_page_url: String,
    pub from: Option<i64>,
    pub path: String,
    pub per_page: i64,
    pub to: Option<i64>,
}

/// What PHP's `rawurlencode` leaves as it is (RFC 3986's unreserved characters): the links
/// read as the reference's do.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The filter parameters of a request's `query` (`filter[key]`, and `filter` where a list
/// takes its JSON form) as its pages' links repeat them: `filter%5Bkey%5D=value`,
/// percent-encoded, joined by `&`; each key once, with the value the list read (the last
/// given), in the order first given. Empty without filters.
pub fn filters_query(query: &[(String, String)]) -> String {
    let is_filter = |key: &str| key == "filter" || key.starts_with("filter[");
    let mut kept: Vec<(&str, &str)> = Vec::new();
    for (key, value) in query.iter().filter(|(k, _)| is_filter(k)) {
        match kept.iter_mut().find(|(k, _)| k == key) {
            Some(given) => given.1 = value,
            None => kept.push((key, value)),
        }
    }
    let encode = |text| utf8_percent_encode(text, UNRESERVED);
    let pairs: Vec<String> = kept
        .iter()
        .map(|(key, value)| format!("{}={}", encode(key), encode(value)))
        .collect();
    pairs.join("&")
}

impl<T> Page<T> {
    /// Page `page` of a list at `path` holding `total` items, of which `data` is this page.
    pub fn new(path: &str, page: i64, total: i64, data: Vec<T>) -> Page<T> {
        Page::filtered(path, "", page, total, data)
    }

    /// [`Page::new`] of a list read with `filters` (from [`filters_query`]): every link, and
    /// `meta.current_page_url`, carries them before the page number; `meta.path` does not.
    pub fn filtered(path: &str, filters: &str, page: i64, total: i64, data: Vec<T>) -> Page<T> {
        let url = |n: i64| match filters {
            "" => format!("{path}?page={n}"),
            _ => format!("{path}?{filters}&page={n}"),
        };
        let last_page = ((total + PER_PAGE - 1) / PER_PAGE).max(1);
        let first_item = page_offset(page).saturating_add(1);
        let count = data.len() as i64;
        Page {
            links: Links {
                first: Some(url(1)),
                last: Some(url(last_page)),
                prev: (page > 1).then(|| url(page - 1)),
                next: (page < last_page).then(|| url(page + 1)),
            },
            meta: Meta {
                current_page: page,
                current_page_url: url(page),
                from: (count > 0).then_some(first_item),
                path: path.to_string(),
                per_page: PER_PAGE,
                to: (count > 0).then_some(first_item.saturating_add(count - 1)),
            },
            data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn pages_link_to_their_neighbours() {
        let page = Page::new("/x", 2, 30, vec![Value::Null; 5]);
        assert_eq!(page.links.prev.as_deref(), Some("/x?page=1"));
        assert_eq!(page.links.next, None);
        assert_eq!(page.links.last.as_deref(), Some("/x?page=2"));
        assert_eq!((page.meta.from, page.meta.to), (Some(26), Some(30)));
    }

    #[test]
    fn a_filtered_pages_links_carry_its_filters_encoded() {
        let query: Vec<(String, String)> = [
            ("filter[search]", "Bay 1&2+é"),
            ("page", "2"),
            ("filter[status]", "online"),
            ("other", "x"),
            ("filters", "y"),
            ("filter[search]", "a-b_c.d~"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into();
        let filters = filters_query(&query);
        // The last `filter[search]` is the one the list read; `page` and others are not kept.
        assert_eq!(
            filters,
            "filter%5Bsearch%5D=a-b_c.d~&filter%5Bstatus%5D=online"
        );
        let page = Page::filtered("/x", &filters, 2, 60, vec![Value::Null; 25]);
        let url = |n| format!("/x?{filters}&page={n}");
        assert_eq!(page.links.first, Some(url(1)));
        assert_eq!(page.links.prev, Some(url(1)));
        assert_eq!(page.links.next, Some(url(3)));
        assert_eq!(page.links.last, Some(url(3)));
        assert_eq!(page.meta.current_page_url, url(2));
        assert_eq!(page.meta.path, "/x");
        let spaced = [("filter[search]".to_string(), "Bay 1&2+é".to_string())];
        assert_eq!(
            filters_query(&spaced),
            "filter%5Bsearch%5D=Bay%201%262%2B%C3%A9"
        );
        assert_eq!(filters_query(&[]), "");
    }

    #[test]
    fn the_largest_page_number_is_an_empty_page() {
        let page: Page<Value> = Page::new("/x", i64::MAX, 3, vec![]);
        assert_eq!((page.meta.from, page.meta.to), (None, None));
        assert_eq!(page.links.prev, Some(format!("/x?page={}", i64::MAX - 1)));
        assert_eq!(page.links.next, None);
    }

    #[test]
    fn an_empty_page_has_no_item_positions() {
        let page: Page<Value> = Page::new("/x", 1, 0, vec![]);
        assert_eq!((page.meta.from, page.meta.to), (None, None));
        assert_eq!(page.links.next, None);
    }

    #[test]
    fn page_numbers_are_positive_integers() {
        assert_eq!(page_number(None).unwrap(), 1);
        assert_eq!(page_number(Some("3")).unwrap(), 3);
        for bad in ["0", "-1", "x", "1.5"] {
            assert!(
                matches!(page_number(Some(bad)), Err(ApiError::Validation(_))),
                "{bad}"
            );
        }
    }
}
