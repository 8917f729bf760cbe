//! The question type and response codes a DNS health check names, read
//! with `domain`'s mnemonics so the API and the agent agree on them.

use domain::base::iana::{Rcode, Rtype};

/// Types a check may not ask for: transfers and meta types have no
/// single-message answer to judge.
const NOT_QUERYABLE: [Rtype; 7] = [
    Rtype::AXFR,
    Rtype::IXFR,
    Rtype::OPT,
    Rtype::TSIG,
    Rtype::TKEY,
    Rtype::MAILA,
    Rtype::MAILB,
];

/// The record type a check asks for (a mnemonic such as `AAAA`, any case).
pub fn query_type(text: &str) -> Option<Rtype> {
    let rtype = Rtype::from_mnemonic(text.as_bytes())?;
    (!NOT_QUERYABLE.contains(&rtype)).then_some(rtype)
}

/// A response code by its name (`NOERROR`, `NXDOMAIN`, …, any case).
pub fn response_code(text: &str) -> Option<Rcode> {
    text.to_ascii_uppercase().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mnemonics_parse_in_any_case_and_transfers_are_refused() {
        assert_eq!(query_type("aaaa"), Some(Rtype::AAAA));
        assert_eq!(query_type("SOA"), Some(Rtype::SOA));
        assert_eq!(query_type("AXFR"), None);
        assert_eq!(query_type("nope"), None);
        assert_eq!(response_code("nxdomain"), Some(Rcode::NXDOMAIN));
        assert_eq!(response_code("NOERROR"), Some(Rcode::NOERROR));
        assert_eq!(response_code("OK"), None);
    }
}
