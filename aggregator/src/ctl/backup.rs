//! `gslbctl backup` (a consistent copy taken by the running aggregator),
//! `gslbctl restore` (into an empty data directory, offline) and
//! `gslbctl reset-edges` (the deliberate reset edges otherwise refuse).

use std::path::Path;

use gslb_proto::pb;

use super::{Client, CtlError};
use crate::core::store::backup::{self, Backup};

/// Take a backup and write it to `out` (owner-only, atomically).
pub async fn take(c: &mut Client, out: &Path) -> Result<String, CtlError> {
    let r = c.backup_store(pb::BackupRequest {}).await?.into_inner();
    let text = String::from_utf8(r.document)
        .map_err(|e| CtlError::Input(format!("the backup is not UTF-8 JSON: {e}")))?;
    gslb_proto::link::pki::write_secret(out, &text)
        .map_err(|e| CtlError::Input(format!("{}: {e:#}", out.display())))?;
    Ok(format!(
        "backup of version {} written to {} ({} bytes)\n",
        r.version,
        out.display(),
        text.len()
    ))
}

/// Restore `file` into `data_dir` (no aggregator may run on it).
pub fn restore(data_dir: &Path, file: &Path) -> Result<String, CtlError> {
    let bytes =
        std::fs::read(file).map_err(|e| CtlError::Input(format!("{}: {e}", file.display())))?;
    let doc =
        Backup::decode(&bytes).map_err(|e| CtlError::Input(format!("{}: {e}", file.display())))?;
    let version = backup::restore(data_dir, &doc).map_err(|e| CtlError::Input(e.to_string()))?;
    let c = &doc.state.catalog;
    Ok(format!(
        "restored version {version} ({} zones, {} record sets, {} pools, {} members, {} checks) into {}; \
         start gslb-aggregator --data-dir {} (edges holding a newer version refuse it until gslbctl reset-edges)\n",
        c.zones.len(),
        c.records.len(),
        c.pools.len(),
        c.members.len(),
        c.checks.len(),
        data_dir.display(),
        data_dir.display()
    ))
}

/// Raise the edge epoch, confirming the current version.
pub async fn reset_edges(c: &mut Client, confirm_version: u64) -> Result<String, CtlError> {
    let r = c
        .reset_edges(pb::ResetEdgesRequest { confirm_version })
        .await?
        .into_inner();
    Ok(format!(
        "edges reset: epoch {} at version {}; every edge now takes this catalog, even if older or empty\n",
        r.epoch, r.version
    ))
}
