//! Any text through the zone file import (`gslbctl zone import`, `POST
//! /api/v1/zones/{apex}/import`): `domain`'s parser and our reading of its
//! entries. Never a panic that escapes `read` (the parser's own panics are
//! caught there and refused as a bad file); whatever is read belongs to
//! the apex asked for, and stays within the import's limits.
#![no_main]

use std::sync::Once;

use gslb_aggregator::core::zonefile::{MAX_ZONE_FILE_RECORDS, Options, read};
use gslb_shared::DnsName;
use libfuzzer_sys::fuzz_target;

static QUIET: Once = Once::new();

fuzz_target!(|data: &[u8]| {
    // libFuzzer's hook aborts on any panic, caught or not; `read` catches
    // the parser's on purpose. A panic that escapes still fails the run:
    // the harness aborts on an unwound closure.
    QUIET.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let apex = DnsName::parse("import.test").unwrap();
    for strip_dnssec in [false, true] {
        let Ok(file) = read(text, Some(&apex), Options { strip_dnssec }) else {
            continue;
        };
        assert_eq!(file.zone.apex, apex);
        assert!(file.records.len() <= MAX_ZONE_FILE_RECORDS);
        for r in &file.records {
            assert_eq!(r.zone, apex);
            assert!(r.name.is_in_zone(&apex), "{} outside {apex}", r.name);
        }
    }
});
