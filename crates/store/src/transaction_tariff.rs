//! Which tariff a transaction is priced with: the part of a statement that chooses it, shared
//! by 1.6 starts (`state.rs`) and 2.0.1 transactions (`station_events.rs`).

/// `FROM ... WHERE c.id = {charger}` choosing, as `v` (its version), `s` (the site, for its
/// time zone) and `p` (the provider), the tariff of a transaction on charger `{charger}`
/// started at `{started}` and first received at `{at}`, with the id tag answered `{status}`
/// and whose key (`id_tags::id_tag_key`) is `{key}`. Each argument is a statement parameter
/// (`$n`).
///
/// The site's tariff and time zone go with the transaction: later edits do not change what it
/// costs. The tariff's version is the one in force at `{at}`, however much later the store
/// applies it; a tariff newer than that (the site took it since) is taken as it first was. A
/// driver of one of the site owner's providers pays the provider's tariff when it has one: a
/// tag the provider holds Accepted and unexpired, which neither the owner nor a team with
/// access to the site holds so (the gateway accepted it through the provider). A start the
/// gateway refused is not priced: the driver was turned away.
pub(crate) fn chosen(charger: &str, started: &str, at: &str, status: &str, key: &str) -> String {
    format!(
        "FROM chargers c LEFT JOIN sites s ON s.id = c.site_id
           LEFT JOIN providers p ON p.id = (
             SELECT pp.id FROM providers pp JOIN id_tags it ON it.team_id = pp.id_tag_team_id
             WHERE pp.team_id = s.team_id AND it.id_tag_key = {key} AND it.status = 'Accepted'
               AND (it.expiry_date IS NULL OR it.expiry_date > {started})
               AND NOT EXISTS (
                 SELECT 1 FROM id_tags own
                 WHERE own.id_tag_key = {key} AND own.status = 'Accepted'
                   AND (own.expiry_date IS NULL OR own.expiry_date > {started})
                   AND (own.team_id = s.team_id OR own.team_id IN
                        (SELECT sa.team_id FROM site_access sa WHERE sa.site_id = s.id)))
             ORDER BY pp.id LIMIT 1)
           LEFT JOIN tariff_versions v ON v.tariff_id = COALESCE(p.tariff_id, s.tariff_id)
             AND ({status} IS NULL OR {status} = 'Accepted')
             AND v.version = COALESCE(
               (SELECT MAX(w.version) FROM tariff_versions w
                WHERE w.tariff_id = v.tariff_id AND w.valid_from <= {at}),
               (SELECT MIN(w.version) FROM tariff_versions w WHERE w.tariff_id = v.tariff_id))
         WHERE c.id = {charger}"
    )
}
