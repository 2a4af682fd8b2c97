//! Laravel's paginator envelope: `data`, `links` and `meta`, with relative URLs.

use crate::http::error::ApiError;
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

impl<T> Page<T> {
    /// Page `page` of a list at `path` holding `total` items, of which `data` is this page.
    pub fn new(path: &str, page: i64, total: i64, data: Vec<T>) -> Page<T> {
        let url = |n: i64| format!("{path}?page={n}");
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
