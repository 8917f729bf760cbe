//! The geo data explain places a client address with: the same CIDR region
//! table (`--geo-file`) and MaxMind files (`--geo-mmdb`) the edges answer
//! with, handled as the edges handle them: both read at start (a bad file
//! stops the start, naming it), the table kept as read, the MaxMind files
//! read again when their size or modification time changes, checked at
//! each use (explain is rare; a stat per call is cheap).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gslb_shared::geo_db::{Fingerprint, GeoDbs, fingerprint};
use gslb_shared::region_table::RegionTable;

/// Largest `--geo-file` read (a table of a million prefixes fits).
pub const MAX_GEO_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The files and the copies in use.
#[derive(Debug, Default)]
pub struct ExplainGeo {
    mmdb: Vec<PathBuf>,
    loaded: Mutex<Option<(Fingerprint, Arc<GeoDbs>)>>,
    table: Option<(PathBuf, Arc<RegionTable>)>,
}

/// What explain places a client with now, and where it came from.
#[derive(Debug, Clone, Default)]
pub struct GeoData {
    /// The MaxMind files, if any.
    pub dbs: Option<Arc<GeoDbs>>,
    /// The region table, if any.
    pub table: Option<Arc<RegionTable>>,
    /// The MaxMind files' paths.
    pub mmdb: Vec<PathBuf>,
    /// The region table's path.
    pub table_path: Option<PathBuf>,
}

fn read_table(path: &Path) -> anyhow::Result<RegionTable> {
    use anyhow::Context;
    let size = std::fs::metadata(path)
        .with_context(|| format!("geo-file {}", path.display()))?
        .len();
    anyhow::ensure!(
        size <= MAX_GEO_FILE_BYTES,
        "geo-file {}: {size} bytes, more than the {MAX_GEO_FILE_BYTES} read",
        path.display()
    );
    let text =
        std::fs::read_to_string(path).with_context(|| format!("geo-file {}", path.display()))?;
    RegionTable::parse(&text).with_context(|| format!("geo-file {}", path.display()))
}

impl ExplainGeo {
    /// Read the MaxMind files `mmdb` and the region table `table` (none:
    /// explain places no one).
    pub fn open(mmdb: Vec<PathBuf>, table: Option<PathBuf>) -> anyhow::Result<Self> {
        let loaded = if mmdb.is_empty() {
            None
        } else {
            Some((fingerprint(&mmdb), Arc::new(GeoDbs::open(&mmdb)?)))
        };
        let table = match table {
            Some(path) => {
                let read = read_table(&path)?;
                tracing::info!(path = %path.display(), prefixes = read.len(), "geo-file loaded for explain");
                Some((path, Arc::new(read)))
            }
            None => None,
        };
        Ok(Self {
            mmdb,
            loaded: Mutex::new(loaded),
            table,
        })
    }

    /// The data as explain uses it now: the MaxMind files as they are on
    /// disk (the previous copy of a changed file that cannot be read,
    /// logged), the table as read at start.
    pub fn current(&self) -> GeoData {
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((seen, dbs)) = loaded.as_mut() {
            let now = fingerprint(&self.mmdb);
            if now != *seen {
                match GeoDbs::open(&self.mmdb) {
                    Ok(fresh) => *dbs = Arc::new(fresh),
                    Err(e) => tracing::error!(error = %e, "geo database not reloaded"),
                }
                *seen = now;
            }
        }
        GeoData {
            dbs: loaded.as_ref().map(|(_, d)| Arc::clone(d)),
            table: self.table.as_ref().map(|(_, t)| Arc::clone(t)),
            mmdb: self.mmdb.clone(),
            table_path: self.table.as_ref().map(|(p, _)| p.clone()),
        }
    }
}
