-- Prices shown on the chargers of a site that opts in (docs/tariffs.md "Prices on the charger"):
-- the Open Charge Alliance's pricing whitepaper's DataTransfer messages, to chargers holding the
-- `pro` licence that say they display them (CustomDisplayCostAndPrice).
ALTER TABLE sites ADD COLUMN show_prices BIGINT NOT NULL DEFAULT 0;
