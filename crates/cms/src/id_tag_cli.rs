//! `cms id-tag import` and `cms id-tag list`: a team's id tags from and to the command line,
//! for the card batches an operator receives as spreadsheets.
//!
//! An import is checked whole before anything is written: a file with a bad row is refused,
//! every bad row named by its line, so that fixing the file and running again is the only way
//! on (no half-imported batch to reconcile). Rows are checked by the API's own rules.

use crate::paging::every_page;
use crate::store_args::StoreArgs;
use cms_store::id_tags::IdTagFields;
use std::collections::HashMap;
use std::path::PathBuf;

/// The columns of an import file; only `id_tag` is required.
pub const COLUMNS: [&str; 5] = ["id_tag", "status", "expiry_date", "parent_id_tag", "name"];

#[derive(Debug, Clone, clap::Args)]
pub struct IdTagImportArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The uuid of the team the tags belong to, or of a provider (its drivers' tags).
    #[arg(long)]
    pub team: String,
    /// A CSV file whose header names its columns: `id_tag` and any of `status` (default
    /// Accepted), `expiry_date` (RFC 3339), `parent_id_tag`, `name`. An empty field takes its
    /// default. A tag the team has (in any case) is replaced. `-` reads standard input.
    pub file: PathBuf,
    #[command(flatten)]
    pub quotas: crate::quota_args::QuotaArgs,
}

#[derive(Debug, Clone, clap::Args)]
pub struct IdTagListArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The uuid of the team whose tags to list, or of a provider.
    #[arg(long)]
    pub team: String,
}

/// Imports the file, or refuses it whole naming each bad row; prints
/// `imported N id tags (C created, U updated)`.
pub async fn import(args: IdTagImportArgs) -> Result<(), String> {
    let text = if args.file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(|e| e.to_string())?
    } else {
        std::fs::read_to_string(&args.file)
            .map_err(|e| format!("cannot read {}: {e}", args.file.display()))?
    };
    let tags = match parse(&text) {
        Ok(tags) => tags,
        Err(bad_rows) => {
            for bad in &bad_rows {
                eprintln!("{bad}");
            }
            return Err(format!(
                "{} refused: {} bad row(s); no tag was imported",
                args.file.display(),
                bad_rows.len()
            ));
        }
    };
    let store = args.quotas.open(&args.store).await?;
    let team = team_of(&store, &args.team).await?;
    let counts = store
        .import_id_tags(team.id, &tags)
        .await
        .map_err(crate::quota_args::explain)?;
    store.close().await;
    println!(
        "imported {} id tags ({} created, {} updated)",
        counts.created + counts.updated,
        counts.created,
        counts.updated
    );
    Ok(())
}

/// The rows of an import file, or a `line N: reason` for each bad one (the header's faults
/// alone when the header is bad).
pub fn parse(text: &str) -> Result<Vec<IdTagFields>, Vec<String>> {
    // Spreadsheets' "CSV UTF-8" starts with a byte-order mark, which is no part of the header.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header: Vec<String> = match reader.headers() {
        Ok(header) => header.iter().map(str::to_string).collect(),
        Err(e) => return Err(vec![format!("line 1: {e}")]),
    };
    check_header(&header)?;
    let mut tags = Vec::new();
    let mut bad = Vec::new();
    // Where each tag (uppercase) was first seen: a tag twice in a file is surely a mistake.
    let mut seen: HashMap<String, u64> = HashMap::new();
    for record in reader.records() {
        let record = match record {
            Ok(record) => record,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                bad.push(format!("line {line}: {e}"));
                continue;
            }
        };
        let line = record.position().map_or(0, |p| p.line());
        if record.len() != header.len() {
            bad.push(format!(
                "line {line}: {} fields, but the header names {}",
                record.len(),
                header.len()
            ));
            continue;
        }
        let fields = header
            .iter()
            .cloned()
            .zip(record.iter().map(str::to_string));
        match cms_api::id_tag_from_record(fields) {
            Ok(tag) => {
                let key = cms_store::id_tags::id_tag_key(&tag.id_tag);
                match seen.get(&key) {
                    Some(first) => bad.push(format!(
                        "line {line}: the id tag {} is already on line {first}",
                        tag.id_tag
                    )),
                    None => {
                        seen.insert(key, line);
                        tags.push(tag);
                    }
                }
            }
            Err(errors) => {
                let reasons: Vec<String> = errors.into_values().flatten().collect();
                bad.push(format!("line {line}: {}", reasons.join(" ")));
            }
        }
    }
    if bad.is_empty() { Ok(tags) } else { Err(bad) }
}

/// A header names `id_tag` and only known columns, each once.
fn check_header(header: &[String]) -> Result<(), Vec<String>> {
    let mut faults = Vec::new();
    for (i, column) in header.iter().enumerate() {
        if !COLUMNS.contains(&column.as_str()) {
            faults.push(format!(
                "line 1: unknown column {column:?}; the columns are {}",
                COLUMNS.join(",")
            ));
        } else if header[..i].contains(column) {
            faults.push(format!("line 1: the column {column} is named twice"));
        }
    }
    if !header.iter().any(|c| c == "id_tag") {
        faults.push("line 1: the header must name the id_tag column".to_string());
    }
    if faults.is_empty() {
        Ok(())
    } else {
        Err(faults)
    }
}

/// Prints the team's tags, by uppercase tag, one a line after a header: id_tag, status,
/// expiry_date, parent_id_tag, name, separated by tabs (`-` for none).
pub async fn list(args: IdTagListArgs) -> Result<(), String> {
    const PAGE: i64 = 1000;
    let store = args.store.open().await.map_err(|e| e.to_string())?;
    let team = team_of(&store, &args.team).await?;
    let tags = every_page(PAGE, |limit, offset| store.id_tags(team.id, limit, offset)).await?;
    let mut out = String::from("id_tag\tstatus\texpiry_date\tparent_id_tag\tname\n");
    for t in &tags {
        let or_none = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\n",
            t.id_tag,
            t.status,
            or_none(&t.expiry_date),
            or_none(&t.parent_id_tag),
            // A name may hold anything the API took: keep it on its line and column.
            or_none(&t.name).replace(char::is_control, " "),
        ));
    }
    store.close().await;
    print!("{out}");
    Ok(())
}

/// The team named by `uuid`, or the team holding the tags of the provider `uuid`, or why not.
async fn team_of(store: &cms_store::Store, uuid: &str) -> Result<cms_store::teams::Team, String> {
    let team = store.team_by_uuid(uuid).await.map_err(|e| e.to_string())?;
    if let Some(team) = team {
        return Ok(team);
    }
    let provider = store
        .provider_by_uuid(uuid)
        .await
        .map_err(|e| e.to_string())?;
    let Some(provider) = provider else {
        return Err(format!("there is no team or provider {uuid:?}"));
    };
    let team = store.team_by_id(provider.id_tag_team_id).await;
    team.map_err(|e| e.to_string())?
        .ok_or_else(|| format!("provider {uuid:?} has lost its tags' team"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spreadsheets_byte_order_mark_is_no_part_of_the_header() {
        let tags = parse("\u{feff}id_tag,status\nCARD-1,Blocked\n").unwrap();
        assert_eq!(tags.len(), 1);
        assert_eq!(tags[0].id_tag, "CARD-1");
    }

    #[test]
    fn quoted_fields_keep_their_commas_and_columns_come_in_any_order() {
        let text = "name,id_tag\n\"Doe, Jane\",card-1\n\"Multi\nline\",card-2\n";
        let tags = parse(text).unwrap();
        assert_eq!(tags[0].name.as_deref(), Some("Doe, Jane"));
        assert_eq!(tags[0].status, "Accepted");
        assert_eq!(tags[1].id_tag, "card-2");
    }

    #[test]
    fn every_bad_row_is_named_by_its_line() {
        let text = "id_tag,status\nok,Accepted\n\"two\nlines\",Blocked\nfine,Maybe\nOK,\nx\n";
        let bad = parse(text).unwrap_err();
        assert_eq!(bad.len(), 4, "{bad:?}");
        assert!(bad[0].starts_with("line 3: "), "{bad:?}");
        assert!(bad[1].starts_with("line 5: The selected status"), "{bad:?}");
        assert_eq!(bad[2], "line 6: the id tag OK is already on line 2");
        assert_eq!(bad[3], "line 7: 1 fields, but the header names 2");
    }

    #[test]
    fn a_header_names_known_columns_with_the_tag() {
        let bad = parse("tag,status\nx,Accepted\n").unwrap_err();
        assert!(bad[0].contains("unknown column \"tag\""), "{bad:?}");
        assert_eq!(bad[1], "line 1: the header must name the id_tag column");
    }
}
