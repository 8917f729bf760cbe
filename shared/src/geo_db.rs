//! MaxMind DB files (GeoIP2 and GeoLite2 Country, City and ASN, DB-IP's
//! files of the same layout), read with the `maxminddb` crate: what a
//! client address says of its country, continent, subdivision and AS, and
//! the prefix of the network that said it (an answer's ECS scope).
//!
//! Several files can be used at once (a City file and an ASN file): each is
//! asked, the first to know a part wins, and the scope is the longest
//! network prefix any of them matched (every address in it gets the same
//! answer from each file).

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use maxminddb::Reader;
use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};

use crate::model::{GeoCode, Place};

/// Largest file read (GeoIP2-City is about 100 MiB).
pub const MAX_GEO_DB_BYTES: u64 = 1 << 30;
/// Most files at once.
pub const MAX_GEO_DBS: usize = 8;
/// Places kept decoded per thread (about 40 bytes each).
pub const MAX_DECODED: usize = 16_384;

/// Numbers each file read, so a reload never meets its predecessor's
/// decoded places.
static NEXT_FILE: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Places decoded on this thread, by file and record offset: decoding
    /// is most of a lookup (the tree walk is a quarter), and many
    /// addresses share a record. Cleared when full.
    static DECODED: RefCell<FxHashMap<(u64, usize), Place>> = RefCell::default();
}

/// The place of record `offset` of file `file`, decoded by `decode` on a miss.
fn decoded(file: u64, offset: usize, decode: impl FnOnce() -> Place) -> Place {
    DECODED.with(|cache| {
        if let Some(place) = cache.borrow().get(&(file, offset)) {
            return *place;
        }
        let place = decode();
        let mut cache = cache.borrow_mut();
        if cache.len() >= MAX_DECODED {
            cache.clear();
        }
        cache.insert((file, offset), place);
        place
    })
}

/// A file that cannot be used, and why.
#[derive(Debug, thiserror::Error)]
#[error("geo database {path}: {reason}")]
pub struct GeoDbError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub reason: String,
}

/// Where a client is and how far that holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located {
    /// What the files know.
    pub place: Place,
    /// The longest network prefix matched (in the address's own family).
    pub prefix_len: u8,
}

/// What identifies a file's version on disk, to notice a replacement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
}

fn stamp(path: &Path) -> std::io::Result<Stamp> {
    let meta = std::fs::metadata(path)?;
    Ok(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
    })
}

/// The versions of a list of files on disk (size and modification time;
/// `None` for a file that cannot be seen): compare two to notice a change
/// without reading the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint(Vec<Option<Stamp>>);

/// The [`Fingerprint`] of `paths` now.
pub fn fingerprint(paths: &[PathBuf]) -> Fingerprint {
    Fingerprint(paths.iter().map(|p| stamp(p).ok()).collect())
}

struct GeoDb {
    /// Unique per file read (see [`NEXT_FILE`]).
    id: u64,
    path: PathBuf,
    reader: Reader<Vec<u8>>,
}

/// One or more MaxMind DB files, loaded into memory.
pub struct GeoDbs {
    dbs: Vec<GeoDb>,
}

impl fmt::Debug for GeoDbs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(
                self.dbs
                    .iter()
                    .map(|d| (&d.path, &d.reader.metadata.database_type)),
            )
            .finish()
    }
}

impl GeoDbs {
    /// Read and check every file.
    pub fn open(paths: &[PathBuf]) -> Result<GeoDbs, GeoDbError> {
        if paths.len() > MAX_GEO_DBS {
            return Err(GeoDbError {
                path: paths[MAX_GEO_DBS].clone(),
                reason: format!("at most {MAX_GEO_DBS} geo databases are supported"),
            });
        }
        let dbs = paths
            .iter()
            .map(|p| open_one(p))
            .collect::<Result<_, _>>()?;
        Ok(GeoDbs { dbs })
    }

    /// Each file's path and database type (`GeoLite2-City`, ...).
    pub fn describe(&self) -> Vec<(PathBuf, String)> {
        (self.dbs.iter())
            .map(|d| (d.path.clone(), d.reader.metadata.database_type.clone()))
            .collect()
    }

    /// When the oldest of the files was built (seconds since the Unix
    /// epoch, from its metadata): what an alert on stale files watches.
    pub fn oldest_build(&self) -> Option<u64> {
        self.dbs.iter().map(|d| d.reader.metadata.build_epoch).min()
    }

    /// What the files say of `ip`. An IPv4-mapped IPv6 address is looked
    /// up as IPv4.
    pub fn locate(&self, ip: IpAddr) -> Located {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        let mut found = Located {
            place: Place::UNKNOWN,
            prefix_len: 0,
        };
        for db in &self.dbs {
            let Ok(result) = db.reader.lookup(ip) else {
                continue; // an IPv6 address in an IPv4-only file
            };
            if let Ok(network) = result.network() {
                found.prefix_len = found.prefix_len.max(network.prefix());
            }
            let Some(offset) = result.offset() else {
                continue; // no data for this address in this file
            };
            found.place.merge(decoded(db.id, offset, || {
                match result.decode::<Record<'_>>() {
                    Ok(Some(record)) => record.place(),
                    _ => Place::UNKNOWN,
                }
            }));
        }
        found
    }
}

fn open_one(path: &Path) -> Result<GeoDb, GeoDbError> {
    let fail = |reason: String| GeoDbError {
        path: path.to_owned(),
        reason,
    };
    let before = stamp(path).map_err(|e| fail(e.to_string()))?;
    if before.len > MAX_GEO_DB_BYTES {
        return Err(fail(format!(
            "is {} bytes; at most {MAX_GEO_DB_BYTES} are read",
            before.len
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let reader =
        Reader::from_source(bytes).map_err(|e| fail(format!("is not a MaxMind DB file: {e}")))?;
    Ok(GeoDb {
        id: NEXT_FILE.fetch_add(1, Ordering::Relaxed),
        path: path.to_owned(),
        reader,
    })
}

/// The parts of a GeoIP2/GeoLite2/DB-IP record used here; the rest is
/// skipped by the decoder.
#[derive(Deserialize)]
struct Record<'a> {
    #[serde(borrow, default)]
    country: Option<Coded<'a>>,
    #[serde(borrow, default)]
    registered_country: Option<Coded<'a>>,
    #[serde(borrow, default)]
    continent: Option<Coded<'a>>,
    #[serde(default)]
    subdivisions: FirstSubdivision,
    #[serde(default)]
    autonomous_system_number: Option<u32>,
}

/// A map with an `iso_code` (countries, subdivisions) or a `code`
/// (continents).
#[derive(Deserialize)]
struct Coded<'a> {
    #[serde(borrow, default)]
    iso_code: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    code: Option<Cow<'a, str>>,
}

impl Coded<'_> {
    fn code(&self) -> Option<GeoCode> {
        self.iso_code
            .as_deref()
            .or(self.code.as_deref())
            .and_then(GeoCode::new)
    }
}

impl Record<'_> {
    fn place(&self) -> Place {
        let country = (self.country.as_ref().and_then(Coded::code))
            .or_else(|| self.registered_country.as_ref().and_then(Coded::code));
        Place {
            country,
            continent: self.continent.as_ref().and_then(Coded::code),
            subdivision: self.subdivisions.0,
            asn: self.autonomous_system_number,
        }
    }
}

/// The first (largest) subdivision's code, read without collecting the
/// list.
#[derive(Default)]
struct FirstSubdivision(Option<GeoCode>);

impl<'de> Deserialize<'de> for FirstSubdivision {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct First;
        impl<'de> Visitor<'de> for First {
            type Value = FirstSubdivision;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of subdivisions")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let first: Option<Coded<'de>> = seq.next_element()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstSubdivision(first.and_then(|c| c.code())))
            }
        }
        d.deserialize_seq(First)
    }
}
