-- Prices on a 2.0.1 station (docs/tariffs.md "Prices on the charger"): the gateway answers a
-- driver's Authorize with the site's price text as the idTokenInfo's personalMessage, from its
-- memory of the registry. What that text is made of is part of the charger's registration
-- (cms_store::registry): whether its site shows prices and with which tariff, its `pro`
-- licence (logged already), and whether its device model has TariffCostCtrlr on. A change of
-- any of them is logged, so it reaches the gateway holding the station without a reconnect.
CREATE TRIGGER sites_prices_registry_update AFTER UPDATE OF show_prices, tariff_id ON sites
    FOR EACH ROW
    WHEN (NEW.show_prices IS DISTINCT FROM OLD.show_prices OR NEW.tariff_id IS DISTINCT FROM OLD.tariff_id)
    EXECUTE FUNCTION sites_registry_log();

CREATE FUNCTION tariffs_prices_registry_log() RETURNS trigger AS $$
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT c.identity FROM chargers c
        JOIN sites s ON s.id = c.site_id WHERE s.tariff_id = NEW.id AND s.show_prices = 1;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER tariffs_prices_registry_update AFTER UPDATE OF body ON tariffs
    FOR EACH ROW WHEN (NEW.body IS DISTINCT FROM OLD.body)
    EXECUTE FUNCTION tariffs_prices_registry_log();

CREATE FUNCTION charger_variables_prices_registry_log() RETURNS trigger AS $$
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE id = NEW.charger_id;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER charger_variables_prices_registry_insert AFTER INSERT ON charger_variables
    FOR EACH ROW
    WHEN (NEW.key IN ('TariffCostCtrlr/Available:Tariff', 'TariffCostCtrlr/Available:Cost',
                      'TariffCostCtrlr/Enabled:Tariff', 'TariffCostCtrlr/Enabled:Cost'))
    EXECUTE FUNCTION charger_variables_prices_registry_log();

CREATE TRIGGER charger_variables_prices_registry_update AFTER UPDATE OF value ON charger_variables
    FOR EACH ROW
    WHEN (NEW.key IN ('TariffCostCtrlr/Available:Tariff', 'TariffCostCtrlr/Available:Cost',
                      'TariffCostCtrlr/Enabled:Tariff', 'TariffCostCtrlr/Enabled:Cost')
          AND NEW.value IS DISTINCT FROM OLD.value)
    EXECUTE FUNCTION charger_variables_prices_registry_log();

-- A provider's own tariff prices its drivers' sessions at the owner's `id_tags` sites, which the
-- gateway cannot tell when it answers: such a site's stations are told no price text
-- (cms_store::price_display::PRICED_BY_SITE), so a provider taking or dropping a tariff changes
-- their registration.
CREATE TRIGGER providers_prices_registry_update AFTER UPDATE OF tariff_id ON providers
    FOR EACH ROW WHEN (NEW.tariff_id IS DISTINCT FROM OLD.tariff_id)
    EXECUTE FUNCTION providers_registry_log();
