//! `cms dead-letter list`: the records the store refused, newest first, for an operator to
//! read (and, once the cause is mended, to replay by hand from the bus or the value shown).

use crate::store_args::StoreArgs;

#[derive(Debug, Clone, clap::Args)]
pub struct DeadLetterListArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// How many, newest first.
    #[arg(long, default_value_t = 20)]
    pub limit: i64,
}

/// Prints one line per dead letter: id, when, topic/partition@offset, key, reason, then the
/// record's headers and value (as text, control characters escaped).
pub async fn list(args: DeadLetterListArgs) -> Result<(), String> {
    let store = args.store.open().await.map_err(|e| e.to_string())?;
    let (letters, total) = store
        .dead_letters(args.limit.max(0), 0)
        .await
        .map_err(|e| e.to_string())?;
    store.close().await;
    let mut out = format!("{total} dead letter(s)\n");
    for stored in &letters {
        let l = &stored.letter;
        out.push_str(&format!(
            "{}\t{}\t{}/{}@{}\t{}\t{}\n\theaders {}\n\tvalue {}\n",
            stored.id,
            stored.created_at,
            l.topic,
            l.partition,
            l.offset,
            printable(&l.key),
            l.reason.replace(char::is_control, " "),
            l.headers,
            printable(&l.value),
        ));
    }
    print!("{out}");
    Ok(())
}

/// Bytes as one line of text: invalid UTF-8 replaced, control characters escaped.
fn printable(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).escape_debug().to_string()
}
