//! The MaxMind files explain places a client address with: read at start
//! (a bad file stops the start, naming it) and read again when their size
//! or modification time changes, checked at each use (explain is rare; a
//! stat per call is cheap).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use gslb_shared::geo_db::{Fingerprint, GeoDbError, GeoDbs, fingerprint};

/// The files and the copy in use.
#[derive(Debug, Default)]
pub struct ExplainGeo {
    paths: Vec<PathBuf>,
    loaded: Mutex<Option<(Fingerprint, Arc<GeoDbs>)>>,
}

impl ExplainGeo {
    /// Read `paths` (none: explain places no one).
    pub fn open(paths: Vec<PathBuf>) -> Result<Self, GeoDbError> {
        let loaded = if paths.is_empty() {
            None
        } else {
            Some((fingerprint(&paths), Arc::new(GeoDbs::open(&paths)?)))
        };
        Ok(Self {
            paths,
            loaded: Mutex::new(loaded),
        })
    }

    /// The files as they are on disk now; the previous copy if a changed
    /// file cannot be read (logged).
    pub fn current(&self) -> Option<Arc<GeoDbs>> {
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        let (seen, dbs) = loaded.as_mut()?;
        let now = fingerprint(&self.paths);
        if now != *seen {
            match GeoDbs::open(&self.paths) {
                Ok(fresh) => *dbs = Arc::new(fresh),
                Err(e) => tracing::error!(error = %e, "geo database not reloaded"),
            }
            *seen = now;
        }
        Some(Arc::clone(dbs))
    }
}
