//! Backups: a consistent copy of the durable state (catalog, version, id
//! counter, epoch, latched health) as one JSON document, taken by the
//! running aggregator (`gslbctl backup`), and restored into an empty data
//! directory while no aggregator runs on it (`gslbctl restore`).

use std::path::Path;

use gslb_shared::MemberId;
use serde::{Deserialize, Serialize};

use super::{Latched, Loaded, RedbStore, StoreError};
use crate::core::catalog::CatalogState;

/// The document's `format` value.
pub const FORMAT: &str = "gslb-backup";
/// The document's `formatVersion` this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// A backup document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Backup {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// When it was taken, ms since the Unix epoch.
    pub taken_at_ms: u64,
    /// Catalog, version, id counter and epoch.
    pub state: CatalogState,
    /// Latched member state.
    pub latched: Vec<(MemberId, Latched)>,
    /// The audit log, oldest first (absent from backups of older builds).
    #[serde(default)]
    pub audit: Vec<crate::core::audit::AuditRecord>,
}

impl Backup {
    /// A backup of `state` and `latched`.
    pub fn of<'a>(
        state: &CatalogState,
        latched: impl IntoIterator<Item = (&'a MemberId, &'a Latched)>,
        now_ms: u64,
    ) -> Self {
        Backup {
            format: FORMAT.to_owned(),
            format_version: FORMAT_VERSION,
            taken_at_ms: now_ms,
            state: state.clone(),
            latched: latched.into_iter().map(|(m, l)| (*m, *l)).collect(),
            audit: Vec::new(),
        }
    }

    /// The document's bytes.
    pub fn encode(&self) -> Vec<u8> {
        // Our own types serialize infallibly to JSON.
        serde_json::to_vec_pretty(self).unwrap_or_default()
    }

    /// Read a document, refusing anything that is not a whole backup of a
    /// format this build reads.
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        let backup: Backup =
            serde_json::from_slice(bytes).map_err(|e| format!("not a gslb backup: {e}"))?;
        if backup.format != FORMAT || backup.format_version != FORMAT_VERSION {
            return Err(format!(
                "format {} version {}: this build reads {FORMAT} version {FORMAT_VERSION}",
                backup.format, backup.format_version
            ));
        }
        Ok(backup)
    }
}

/// Write `backup` into `dir`, which must hold no store (a damaged one is
/// moved aside first). Returns the restored version.
pub fn restore(dir: &Path, backup: &Backup) -> Result<u64, StoreError> {
    let held = |what: &str| {
        StoreError::Db(format!(
            "{}: {what}; move it aside and restore into an empty directory",
            dir.display()
        ))
    };
    if dir.join(super::FILE).exists() || dir.join("db").exists() {
        return Err(held("holds a store"));
    }
    if super::marker::marked(dir)? {
        return Err(held("holds the marker of a store"));
    }
    std::fs::create_dir_all(dir).map_err(|e| StoreError::Db(format!("{}: {e}", dir.display())))?;
    let store = RedbStore::open(dir)?;
    let loaded = Loaded {
        state: backup.state.clone(),
        latched: backup.latched.iter().copied().collect(),
        // Resolved again by the new leader within seconds.
        resolved: Default::default(),
        // Measured again within a few cycles.
        rtt: Default::default(),
        // Undelivered notifications are not part of a backup.
        outbox: Default::default(),
        first_start: false,
    };
    store.replace_all(&loaded, Some(&backup.audit), None, &[])?;
    Ok(backup.state.version)
}
