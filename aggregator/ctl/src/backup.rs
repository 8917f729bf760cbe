//! `gslbctl backup` (a consistent copy taken by the running aggregator;
//! `gslb-aggregator --restore` writes it into an empty data directory,
//! offline) and `gslbctl reset-edges` (the deliberate reset edges
//! otherwise refuse).

use std::path::Path;

use gslb_proto::pb;

use super::{Client, CtlError};

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
