//! Client regions: the CIDR table (`gslb_shared::region_table`, the same
//! code the aggregator's explain places a client with), longest prefix
//! wins. The edge looks up the EDNS Client Subnet address when a query
//! carries one, else the resolver's address; the matched prefix length
//! becomes the ECS scope of an answer that depends on the region (RFC 7871).
//!
//! Beside the table, the edge may hold MaxMind DB files (`--geo-mmdb`):
//! country, continent, subdivision and AS of an address, for branches that
//! match on those. They are swapped whole when reloaded from disk.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arc_swap::ArcSwapOption;
use gslb_shared::Region;
use gslb_shared::geo_db::{GeoDbs, Located};
use gslb_shared::region_table::RegionTable;
use ipnet::IpNet;

pub use gslb_shared::region_table::{Match, TableError as GeoError};

/// The MaxMind files in use, swapped whole on a reload, and the reloads'
/// counts.
#[derive(Debug, Default)]
pub struct GeoDbSlot {
    /// The files as last read.
    pub current: ArcSwapOption<GeoDbs>,
    /// Reloads done.
    pub reloads: AtomicU64,
    /// Reloads refused (the previous files stayed in use).
    pub failures: AtomicU64,
}

/// The CIDR → region table, and the MaxMind files if any.
#[derive(Debug, Clone, Default)]
pub struct GeoTable {
    table: RegionTable,
    dbs: Arc<GeoDbSlot>,
}

impl GeoTable {
    /// An empty table (every client falls to the default branch).
    pub fn new() -> Self {
        Self::default()
    }

    /// Parse the file format of `gslb_shared::region_table`.
    pub fn parse(text: &str) -> Result<Self, GeoError> {
        Ok(Self {
            table: RegionTable::parse(text)?,
            dbs: Arc::default(),
        })
    }

    /// Map a prefix (host bits beyond it are ignored); the region it had.
    pub fn insert(&mut self, net: IpNet, region: Region) -> Option<Region> {
        self.table.insert(net, region)
    }

    /// The region of an address, by the longest matching prefix.
    #[inline]
    pub fn lookup(&self, addr: IpAddr) -> Option<Match<'_>> {
        self.table.lookup(addr)
    }

    /// The MaxMind files this table consults (shared: a reload through one
    /// handle is seen by every clone).
    pub fn with_databases(mut self, dbs: Arc<GeoDbSlot>) -> Self {
        self.dbs = dbs;
        self
    }

    /// What the MaxMind files say of an address; `None` without files.
    pub fn place(&self, addr: IpAddr) -> Option<Located> {
        self.dbs.current.load().as_ref().map(|dbs| dbs.locate(addr))
    }

    /// When the oldest MaxMind file in use was built (Unix seconds).
    pub fn oldest_build(&self) -> Option<u64> {
        self.dbs
            .current
            .load()
            .as_ref()
            .and_then(|d| d.oldest_build())
    }

    /// MaxMind file reloads done and refused.
    pub fn reloads(&self) -> (u64, u64) {
        (
            self.dbs.reloads.load(Ordering::Relaxed),
            self.dbs.failures.load(Ordering::Relaxed),
        )
    }

    /// Number of prefixes.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when there are no prefixes.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}
