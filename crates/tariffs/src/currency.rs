//! The currencies a tariff may be in.

/// ISO 4217 codes of the currencies in circulation (List One, as amended up to 2026): BGN,
/// HRK, ANG, ZWL, SLL and CUC are gone (replaced by EUR, EUR, XCG, ZWG, SLE, and withdrawn).
/// Left out on purpose though listed: fund codes (BOV, CHE, CHW, CLF, COU, MXV, USN, UYI, UYW),
/// precious metals (XAG, XAU, XPD, XPT), bond-market and accounting units (XBA-XBD, XDR, XSU,
/// XUA, XAD), and the test and "no currency" codes (XTS, XXX): nobody sells a kWh in those.
pub const CURRENCIES: [&str; 155] = [
    "AED", "AFN", "ALL", "AMD", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BHD",
    "BIF", "BMD", "BND", "BOB", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHF",
    "CLP", "CNY", "COP", "CRC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN",
    "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD",
    "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES",
    "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL",
    "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN",
    "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK", "PHP",
    "PKR", "PLN", "PYG", "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK",
    "SGD", "SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB", "TJS", "TMT",
    "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "UGX", "USD", "UYU", "UZS", "VED", "VES",
    "VND", "VUV", "WST", "XAF", "XCD", "XCG", "XOF", "XPF", "YER", "ZAR", "ZMW", "ZWG",
];

/// Whether `code` is one of [`CURRENCIES`], spelt exactly (upper case).
pub fn is_currency(code: &str) -> bool {
    CURRENCIES.binary_search(&code).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_and_without_duplicates_so_binary_search_works() {
        assert!(CURRENCIES.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn knows_current_codes_and_not_replaced_or_lower_case_ones() {
        for code in ["EUR", "USD", "GBP", "XCG", "ZWG", "SLE", "CHF", "XOF"] {
            assert!(is_currency(code), "{code}");
        }
        for code in [
            "BGN", "HRK", "ANG", "ZWL", "XXX", "XTS", "eur", "EU", "EURO", "",
        ] {
            assert!(!is_currency(code), "{code}");
        }
    }
}
