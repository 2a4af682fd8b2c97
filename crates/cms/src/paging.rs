//! The admin commands' listings read the store a page at a time (a team may hold 100k id tags)
//! and print every row: one loop for all of them.

use std::future::Future;

/// Every row of a listing the store serves in pages of `page` (`fetch(limit, offset)` answers
/// a page and the total), in the store's order; the first error as text.
pub async fn every_page<T, E, F, Fut>(page: i64, mut fetch: F) -> Result<Vec<T>, String>
where
    E: std::fmt::Display,
    F: FnMut(i64, i64) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, i64), E>>,
{
    let mut rows = Vec::new();
    let mut offset = 0;
    loop {
        let (mut more, total) = fetch(page, offset).await.map_err(|e| e.to_string())?;
        let done = more.is_empty();
        rows.append(&mut more);
        offset += page;
        // An empty page ends it too, should rows go while the listing is read.
        if done || offset >= total {
            return Ok(rows);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::every_page;

    /// A listing of `n` numbers served as the store serves them.
    async fn listing(n: i64, page: i64) -> Result<Vec<i64>, String> {
        every_page(page, |limit, offset| async move {
            let rows: Vec<i64> = (offset..n.min(offset + limit)).collect();
            Ok::<_, String>((rows, n))
        })
        .await
    }

    #[tokio::test]
    async fn every_row_is_read_once_whatever_the_page_size() {
        for (n, page) in [(0, 3), (1, 3), (3, 3), (7, 3), (250, 100)] {
            assert_eq!(
                listing(n, page).await,
                Ok((0..n).collect()),
                "{n} by {page}"
            );
        }
    }

    #[tokio::test]
    async fn a_failing_page_is_the_listings_error() {
        let answer: Result<Vec<i64>, String> =
            every_page(10, |_, _| async { Err("the store is gone") }).await;
        assert_eq!(answer, Err("the store is gone".to_string()));
    }
}
