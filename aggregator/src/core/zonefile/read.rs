//! Reading a master file: `$ORIGIN`, `$TTL`, relative names, multi-line
//! records and every type `domain` knows (others in RFC 3597 form);
//! `$INCLUDE` is refused (the file is all there is). An AXFR dump's
//! closing SOA (the first one again) is read as the end of the zone; a
//! signed file's DNSSEC records are refused, or dropped and counted when
//! asked ([`Options::strip_dnssec`]). Errors name the line.

use std::collections::HashMap;

use bytes::Bytes;
use domain::base::Name;
use domain::base::name::FlattenInto;
use domain::rdata::ZoneRecordData;
use domain::zonefile::inplace::{Entry, Zonefile};
use gslb_shared::validate::ValidationError;
use gslb_shared::wire::{self, Data};
use gslb_shared::{DnsName, Rdata, RecordType, Soa};

use crate::core::declarative::{DesiredRecord, DesiredZone};

/// Largest zone file read, in bytes (under the admin API's 64 MiB
/// message limit).
pub const MAX_ZONE_FILE_BYTES: usize = 48 << 20;
/// Most records one zone file may hold.
pub const MAX_ZONE_FILE_RECORDS: usize = 500_000;

/// How a file is read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Drop RRSIG, NSEC, NSEC3, NSEC3PARAM, DNSKEY, CDS, CDNSKEY and
    /// ZONEMD records (counted) instead of refusing the file: the edges
    /// make their own.
    pub strip_dnssec: bool,
}

/// The DNSSEC types a signed zone file carries, which the edges make.
const DNSSEC_TYPES: [(u16, &str); 8] = [
    (46, "RRSIG"),
    (47, "NSEC"),
    (50, "NSEC3"),
    (51, "NSEC3PARAM"),
    (48, "DNSKEY"),
    (59, "CDS"),
    (60, "CDNSKEY"),
    (63, "ZONEMD"),
];

/// What a zone file describes.
#[derive(Debug, Clone)]
pub struct ZoneFile {
    /// The zone: apex, SOA (its serial is ours, so the file's is dropped),
    /// the apex NS set, and the SOA record's TTL as the default TTL.
    pub zone: DesiredZone,
    /// Every other record set, in the order first seen, all static.
    pub records: Vec<DesiredRecord>,
    /// DNSSEC records dropped ([`Options::strip_dnssec`]).
    pub stripped: usize,
}

fn bad(field: impl Into<String>, rule: impl Into<String>) -> ValidationError {
    ValidationError::single(field, rule)
}

/// Line numbers of offsets in the file, counted as the reading moves on
/// (each offset is at or after the one before, so the count is linear).
struct Lines<'t> {
    text: &'t str,
    /// Offset counted to, and newlines before it.
    at: usize,
    newlines: usize,
    /// The line the last entry started on.
    last: usize,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        Lines {
            text,
            at: 0,
            newlines: 0,
            last: 0,
        }
    }

    /// The line (1-based) of the first entry at or after `offset`: blank
    /// and comment lines, `$ORIGIN` and `$TTL` (which the parser takes in
    /// along the way) are skipped.
    fn entry_at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.text.len()).max(self.at);
        let counted = self.text.get(self.at..offset).unwrap_or("");
        self.newlines += counted.matches('\n').count();
        self.at = offset;
        let mut line = self.newlines + 1;
        for l in self.text.get(offset..).unwrap_or("").split('\n') {
            let l = l.trim_start();
            let directive = ["$ORIGIN", "$TTL"]
                .iter()
                .any(|d| l.get(..d.len()).is_some_and(|p| p.eq_ignore_ascii_case(d)));
            if !l.is_empty() && !l.starts_with(';') && !directive {
                break;
            }
            line += 1;
        }
        // Every entry starts on a line of its own; after some entries (an
        // SOA) the parser's offset is still inside the entry it read.
        self.last = line.max(self.last + 1);
        self.last
    }
}

fn model_name(at: &str, text: &str) -> Result<DnsName, ValidationError> {
    DnsName::parse(text).map_err(|e| bad(at, format!("{text}: {e}")))
}

/// Read a zone file. `apex` is the origin relative names start from
/// (`--apex`); without it the file's `$ORIGIN`, or its SOA owner, decides.
pub fn read(
    text: &str,
    apex: Option<&DnsName>,
    options: Options,
) -> Result<ZoneFile, ValidationError> {
    if text.len() > MAX_ZONE_FILE_BYTES {
        return Err(bad(
            "file",
            format!(
                "is {} bytes; at most {MAX_ZONE_FILE_BYTES} are read",
                text.len()
            ),
        ));
    }
    let mut file = Zonefile::with_capacity(text.len());
    file.extend_from_slice(text.as_bytes());
    if let Some(a) = apex {
        let origin = Name::<Bytes>::from_octets(Bytes::from(wire::wire_key(a)))
            .map_err(|e| bad("apex", e.to_string()))?;
        file.set_origin(origin);
    }
    let mut soa: Option<(usize, DnsName, Soa, u32)> = None;
    let mut ns: Vec<DnsName> = Vec::new();
    // The apex NS set's TTL (the lowest of its records, RFC 2181 5.2).
    let mut ns_ttl: Option<u32> = None;
    let mut sets: Vec<(usize, DesiredRecord)> = Vec::new();
    let mut by_key: HashMap<(DnsName, RecordType), usize> = HashMap::new();
    let mut count = 0usize;
    let mut stripped = 0usize;
    // The first SOA as read (owner, TTL, data): an AXFR dump repeats it last.
    let mut first_soa: Option<(DnsName, u32, Data)> = None;
    let mut lines = Lines::new(text);
    loop {
        let start = file.current_offset();
        // `domain` 0.12's parser panics on some malformed input (an
        // unclosed `(` at the end of the file indexes past its buffer): a
        // hostile file must be an error, so the panic is caught here.
        let next = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| file.next_entry()));
        let Ok(next) = next else {
            return Err(bad(
                format!("line {}", lines.entry_at(start)),
                "the record does not end (an unclosed '(' or a cut file): nothing was imported",
            ));
        };
        let entry = match next {
            Ok(Some(entry)) => entry,
            Ok(None) => break,
            Err(e) => {
                // domain's position is where it noticed (often the next
                // line): name the line the entry starts on instead.
                let text_of = e.to_string();
                let mut parts = text_of.splitn(3, ':');
                let noticed = parts.next().and_then(|l| l.parse::<usize>().ok());
                let reason = parts.nth(1).unwrap_or(&text_of).trim();
                let line = noticed.map_or(usize::MAX, |n| n).min(lines.entry_at(start));
                return Err(bad(format!("line {line}"), reason));
            }
        };
        let line = lines.entry_at(start);
        let at = format!("line {line}");
        let record = match entry {
            Entry::Record(r) => r,
            Entry::Include { .. } => {
                return Err(bad(
                    at,
                    "$INCLUDE is not supported: put the included records in this file",
                ));
            }
        };
        count += 1;
        if count > MAX_ZONE_FILE_RECORDS {
            return Err(bad(
                at,
                format!("more than {MAX_ZONE_FILE_RECORDS} records in one file"),
            ));
        }
        let owner = model_name(&at, &record.owner().to_string())?;
        let ttl = record.ttl().as_secs();
        let data: Data = record.into_data().flatten_into();
        let code = domain::base::RecordData::rtype(&data).to_int();
        if let Some((_, name)) = DNSSEC_TYPES.iter().find(|(c, _)| *c == code) {
            if options.strip_dnssec {
                stripped += 1;
                continue;
            }
            return Err(bad(
                at,
                format!(
                    "{owner}: {name} records are made by the edges: the file is signed; \
                     import it with --strip-dnssec (?stripDnssec=true) to drop them"
                ),
            ));
        }
        match &data {
            ZoneRecordData::Soa(s) => {
                if let Some((first_owner, first_ttl, first)) = &first_soa {
                    // `dig axfr` ends with the SOA it began with.
                    if *first_owner == owner && *first_ttl == ttl && *first == data {
                        continue;
                    }
                    return Err(bad(
                        at,
                        "a second SOA record, not the same as the first: a file holds one zone \
                         (an AXFR dump may end with the first SOA again, unchanged)",
                    ));
                }
                first_soa = Some((owner.clone(), ttl, data.clone()));
                let zone_soa = Soa {
                    mname: model_name(&at, &s.mname().to_string())?,
                    rname: model_name(&at, &s.rname().to_string())?,
                    refresh: s.refresh().as_secs(),
                    retry: s.retry().as_secs(),
                    expire: s.expire().as_secs(),
                    negative_ttl: s.minimum().as_secs(),
                };
                soa = Some((line, owner, zone_soa, ttl));
                continue;
            }
            ZoneRecordData::Ns(n) if soa.as_ref().is_some_and(|(_, apex, _, _)| *apex == owner) => {
                let server = model_name(&at, &n.nsdname().to_string())?;
                ns_ttl = Some(ns_ttl.map_or(ttl, |t| t.min(ttl)));
                // Duplicates count once, as in any other set.
                if !ns.contains(&server) {
                    ns.push(server);
                }
                continue;
            }
            _ => {}
        }
        let rdata = wire::rdata(&data).map_err(|e| bad(&at, format!("{owner}: {e}")))?;
        let rtype = rdata.record_type();
        match by_key.get(&(owner.clone(), rtype)) {
            Some(&i) => {
                let set = &mut sets[i].1;
                // RFC 2181 5.2: one TTL per set; the lowest is kept.
                set.ttl = set.ttl.map(|t| t.min(ttl));
                let data = set.static_data.get_or_insert_with(Vec::new);
                if !data.contains(&rdata) {
                    data.push(rdata);
                }
            }
            None => {
                by_key.insert((owner.clone(), rtype), sets.len());
                sets.push((
                    line,
                    DesiredRecord {
                        zone: owner.clone(),
                        name: owner,
                        rtype,
                        ttl: Some(ttl),
                        static_data: Some(vec![rdata]),
                        dynamic: None,
                    },
                ));
            }
        }
    }
    let Some((_, origin, soa, default_ttl)) = soa else {
        return Err(bad("file", "has no SOA record: it names the zone"));
    };
    if let Some(a) = apex
        && *a != origin
    {
        return Err(bad(
            "apex",
            format!("is {a}, but the file's SOA is owned by {origin}"),
        ));
    }
    let mut records = Vec::with_capacity(sets.len());
    // An NS set at the apex read before the SOA is the zone's too.
    let mut apex_ns = ns;
    for (line, mut r) in sets {
        if !r.name.is_in_zone(&origin) {
            return Err(bad(
                format!("line {line}"),
                format!("{} is outside the zone {origin}", r.name),
            ));
        }
        if r.name == origin && r.rtype == RecordType::Ns {
            if let Some(ttl) = r.ttl {
                ns_ttl = Some(ns_ttl.map_or(ttl, |t| t.min(ttl)));
            }
            for data in r.static_data.take().unwrap_or_default() {
                if let Rdata::Ns(n) = data
                    && !apex_ns.contains(&n)
                {
                    apex_ns.push(n);
                }
            }
            continue;
        }
        r.zone = origin.clone();
        records.push(r);
    }
    if apex_ns.is_empty() {
        return Err(bad(
            "file",
            format!("has no NS record at the apex {origin}"),
        ));
    }
    Ok(ZoneFile {
        zone: DesiredZone {
            apex: origin,
            soa,
            ns: apex_ns,
            // Kept only where it differs, so a file whose NS set has the
            // SOA's TTL plans the same zone as a document without one.
            ns_ttl: ns_ttl.filter(|t| *t != default_ttl),
            default_ttl,
            transfer: None,
            dnssec: None,
        },
        records,
        stripped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "$ORIGIN example.test.
$TTL 600
; a comment line
@   3600 IN SOA ns1 hostmaster (
        2024010101 ; serial (ours replaces it)
        7200 900 1209600 300 )
    IN NS ns1
    IN NS ns2.example.net.
@   IN NS ns1.example.test.
ns1 IN A 192.0.2.53
www 60 IN A 192.0.2.1
www 30 IN A 192.0.2.2
www IN A 192.0.2.2
www IN TXT \"two\" \"strings\"
sub IN NS ns1.sub
ns1.sub IN A 192.0.2.70
_443._tcp.www IN TLSA 3 1 1 ( d2abde240d7cd3ee6b4b28c54df034b9
                              7983a1d16e8a410e4561cb106618e971 )
odd IN TYPE65534 \\# 2 abcd
";

    #[test]
    fn a_master_file_becomes_the_zone_and_its_sets() {
        let z = read(FILE, None, Options::default()).unwrap();
        assert_eq!(z.zone.apex.as_str(), "example.test");
        assert_eq!(z.zone.default_ttl, 3600);
        assert_eq!(z.zone.soa.mname.as_str(), "ns1.example.test");
        assert_eq!(z.zone.soa.negative_ttl, 300);
        let ns: Vec<&str> = z.zone.ns.iter().map(DnsName::as_str).collect();
        assert_eq!(ns, ["ns1.example.test", "ns2.example.net"]);
        let www = &z.records[1];
        assert_eq!(
            (www.name.as_str(), www.rtype),
            ("www.example.test", RecordType::A)
        );
        assert_eq!(www.ttl, Some(30), "the lowest TTL of the set");
        assert_eq!(
            www.static_data.as_ref().unwrap().len(),
            2,
            "duplicates once"
        );
        let types: Vec<String> = z
            .records
            .iter()
            .map(|r| format!("{} {}", r.name, r.rtype))
            .collect();
        assert_eq!(
            types,
            [
                "ns1.example.test A",
                "www.example.test A",
                "www.example.test TXT",
                "sub.example.test NS",
                "ns1.sub.example.test A",
                "_443._tcp.www.example.test TLSA",
                "odd.example.test TYPE65534",
            ]
        );
        assert!(z.records.iter().all(|r| r.zone.as_str() == "example.test"));
    }

    #[test]
    fn what_cannot_be_read_names_its_line() {
        let err = |text: &str, apex: Option<&str>| {
            let apex = apex.map(|a| DnsName::parse(a).unwrap());
            read(text, apex.as_ref(), Options::default())
                .unwrap_err()
                .to_string()
        };
        let head = "$ORIGIN example.test.\n@ 300 IN SOA ns1 h 1 2 3 4 5\n@ IN NS ns1\n";
        assert_eq!(
            err("$ORIGIN example.test.\n$TTL abc\n", None),
            "line 2: expected decimal number"
        );
        assert!(
            err(&format!("{head}$INCLUDE other.zone\n"), None)
                .contains("line 4: $INCLUDE is not supported")
        );
        let e = err(&format!("{head}www IN A not-an-address\n"), None);
        assert_eq!(e, "line 4: expected IPv4 address");
        assert!(
            err(&format!("{head}x.example.org. IN A 192.0.2.1\n"), None)
                .contains("line 4: x.example.org is outside the zone example.test")
        );
        assert!(err(&format!("{head}sig IN RRSIG A 13 2 300 20300101000000 20200101000000 1 example.test. AAAA\n"), None).contains("line 4: sig.example.test: RRSIG records are made by the edges: the file is signed; import it with --strip-dnssec"));
        assert!(
            err("www 300 IN A 192.0.2.1\n", Some("example.test")).contains("has no SOA record")
        );
        assert!(
            err(head, Some("other.test"))
                .contains("apex: is other.test, but the file's SOA is owned by example.test")
        );
        assert!(
            err(&format!("{head}@ 300 IN SOA ns1 h 1 2 3 4 6\n"), None)
                .contains("line 4: a second SOA record, not the same as the first")
        );
        assert!(
            err(&format!("{head}@ 60 IN SOA ns1 h 1 2 3 4 5\n"), None).contains("a second SOA"),
            "a different TTL is a different SOA"
        );
        assert!(
            err(
                ".\t86400\tIN\tSOA\ta.root-servers.net. nstld.verisign-grs.com. 1 2 3 4 5\n",
                None
            )
            .contains("is the root (.)")
        );
    }

    // The import path under hostile text: any soup of zone file tokens is
    // read or refused with a line, never a panic (the fuzz target's
    // property, run in every test run).
    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(500))]
        #[test]
        fn any_token_soup_is_read_or_refused(tokens in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just("(".to_owned()),
                proptest::strategy::Just(")".to_owned()),
                proptest::strategy::Just("\n".to_owned()),
                proptest::strategy::Just(";".to_owned()),
                proptest::strategy::Just("\"".to_owned()),
                proptest::strategy::Just("\\".to_owned()),
                proptest::strategy::Just("$ORIGIN".to_owned()),
                proptest::strategy::Just("$TTL".to_owned()),
                proptest::strategy::Just("@".to_owned()),
                proptest::strategy::Just("IN".to_owned()),
                proptest::strategy::Just("SOA".to_owned()),
                proptest::strategy::Just("NS".to_owned()),
                proptest::strategy::Just("TXT".to_owned()),
                proptest::strategy::Just("TYPE65534".to_owned()),
                proptest::strategy::Just("\\#".to_owned()),
                "[a-z0-9.]{1,12}",
                "[0-9]{1,6}",
                "[ -~]{1,4}",
            ],
            0..40,
        )) {
            let text = tokens.join(" ");
            let _ = read(&text, None, Options::default());
            let _ = read(&text, Some(&DnsName::parse("example.test").unwrap()), Options { strip_dnssec: true });
        }
    }

    #[test]
    fn an_unclosed_parenthesis_is_an_error_not_a_panic() {
        for text in [
            "$ORIGIN example.test.\n@ 300 IN SOA ns1 h ( 1 2 3 4 5\n",
            "$ORIGIN example.test.\n@ 300 IN SOA ns1 h 1 2 3 4 5\n@ IN NS ns1\nwww IN TXT ( \"a\"\n",
            "(",
            "x IN A (",
        ] {
            let err = read(text, None, Options::default())
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("line") || err.contains("file"),
                "{text:?}: {err}"
            );
        }
    }

    #[test]
    fn an_axfr_dump_and_a_signed_file_are_read() {
        // `dig axfr` output: the SOA first and last, DNSSEC records between.
        let dump = "example.test.\t300\tIN\tSOA\tns1.example.test. h.example.test. 7 2 3 4 5
example.test.\t300\tIN\tRRSIG\tSOA 13 2 300 20300101000000 20200101000000 1 example.test. AAAA
example.test.\t518400\tIN\tNS\tns1.example.test.
example.test.\t300\tIN\tDNSKEY\t257 3 13 AAAA
example.test.\t300\tIN\tNSEC\twww.example.test. NS SOA RRSIG NSEC DNSKEY
example.test.\t0\tIN\tNSEC3PARAM\t1 0 0 -
example.test.\t300\tIN\tZONEMD\t7 1 1 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
www.example.test.\t60\tIN\tA\t192.0.2.1
example.test.\t300\tIN\tSOA\tns1.example.test. h.example.test. 7 2 3 4 5
";
        let refused = read(dump, None, Options::default())
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("line 2: example.test: RRSIG records are made by the edges"),
            "{refused}"
        );
        let z = read(dump, None, Options { strip_dnssec: true }).unwrap();
        assert_eq!(z.stripped, 5);
        assert_eq!(
            z.zone.ns_ttl,
            Some(518_400),
            "the apex NS set keeps its TTL"
        );
        assert_eq!(z.zone.default_ttl, 300);
        let kept: Vec<String> = z
            .records
            .iter()
            .map(|r| format!("{} {} {:?}", r.name, r.rtype, r.ttl))
            .collect();
        assert_eq!(kept, ["www.example.test A Some(60)"]);
    }
}
