//! The on-disk snapshot cache: every applied snapshot is written (to a
//! temporary file, fsync, rename, fsync of the directory), so a restarted
//! edge can answer before it reaches an aggregator. A file that is short,
//! has the wrong magic or checksum, or does not decode is never applied.
//!
//! Layout: `GSLBSNP1`, CRC-32 of the payload (u32 BE), payload length
//! (u64 BE), payload (a protobuf `SnapshotUpdate` carrying the full snapshot
//! and its publication time).

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use gslb_shared::Snapshot;

const MAGIC: &[u8; 8] = b"GSLBSNP1";
const HEADER: usize = 8 + 4 + 8;
/// The cache file's name inside the cache directory.
pub const FILE: &str = "snapshot.bin";

/// Why a cache file was not used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// Reading or writing failed.
    #[error("{path}: {error}")]
    Io {
        /// File.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The content is not a snapshot we wrote.
    #[error("{path}: {rule}")]
    Corrupt {
        /// File.
        path: PathBuf,
        /// What is wrong.
        rule: String,
    },
}

/// The cache file in `dir`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

/// Encode a snapshot as a cache file's bytes.
pub fn encode(snapshot: &Snapshot) -> Vec<u8> {
    let payload = gslb_proto::convert::snapshot_to_bytes(snapshot);
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&crc32fast::hash(&payload).to_be_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_be_bytes());
    out.extend_from_slice(&payload);
    out
}

/// Decode a cache file's bytes (`path` is only for the error).
pub fn decode(bytes: &[u8], path: &Path) -> Result<Snapshot, CacheError> {
    let corrupt = |rule: String| CacheError::Corrupt {
        path: path.to_owned(),
        rule,
    };
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(corrupt("not a gslb snapshot cache (bad magic)".into()));
    }
    let crc = u32::from_be_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    let mut len = [0; 8];
    len.copy_from_slice(&bytes[12..20]);
    let payload = &bytes[HEADER..];
    if u64::from_be_bytes(len) != payload.len() as u64 {
        return Err(corrupt(format!(
            "length {} does not match the {} bytes present",
            u64::from_be_bytes(len),
            payload.len()
        )));
    }
    if crc32fast::hash(payload) != crc {
        return Err(corrupt("checksum mismatch".into()));
    }
    gslb_proto::convert::snapshot_from_bytes(payload).map_err(corrupt)
}

/// Read the cached snapshot from `dir`; `Ok(None)` when there is none.
pub fn load(dir: &Path) -> Result<Option<Snapshot>, CacheError> {
    let file = path(dir);
    match fs::read(&file) {
        Ok(bytes) => decode(&bytes, &file).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(CacheError::Io { path: file, error }),
    }
}

/// Write `encoded` (from [`encode`]) to `dir` atomically: readers see the
/// old file or the new one, never a mix.
pub fn store(dir: &Path, encoded: &[u8]) -> Result<(), CacheError> {
    let file = path(dir);
    let tmp = dir.join(format!("{FILE}.tmp"));
    let io = |path: &Path| {
        let path = path.to_owned();
        move |error| CacheError::Io { path, error }
    };
    fs::create_dir_all(dir).map_err(io(dir))?;
    // Owner only: the snapshot holds the zones' TSIG secrets.
    let _ = fs::remove_file(&tmp);
    let mut f = {
        use std::os::unix::fs::OpenOptionsExt;
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io(&tmp))?
    };
    f.write_all(encoded).map_err(io(&tmp))?;
    f.sync_all().map_err(io(&tmp))?;
    drop(f);
    fs::rename(&tmp, &file).map_err(io(&file))?;
    // The rename is durable only once the directory entry is.
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io(dir))?;
    Ok(())
}

/// Writes applied snapshots to the cache off the apply path: the feed
/// hands each one over and goes on; one task encodes and stores the latest
/// handed over, so a burst of updates costs one write, and an apply never
/// waits on the disk.
#[derive(Debug, Clone)]
pub struct Writer {
    /// How many were handed over, and the latest.
    latest: std::sync::Arc<tokio::sync::watch::Sender<(u64, Option<Snapshot>)>>,
    /// How many of those the last write covered.
    done: tokio::sync::watch::Receiver<u64>,
}

impl Writer {
    /// Start the writing task for `dir` (on the current tokio runtime).
    pub fn spawn(dir: PathBuf) -> Self {
        let (latest, mut rx) = tokio::sync::watch::channel((0u64, None::<Snapshot>));
        let (done_tx, done) = tokio::sync::watch::channel(0u64);
        tokio::spawn(async move {
            while rx.changed().await.is_ok() {
                // A persistent snapshot: the clone shares its maps.
                let (handed, Some(snapshot)) = rx.borrow_and_update().clone() else {
                    continue;
                };
                let dir = dir.clone();
                let version = snapshot.version;
                let written =
                    tokio::task::spawn_blocking(move || store(&dir, &encode(&snapshot))).await;
                match written {
                    Ok(Ok(())) => tracing::debug!(version, "snapshot cache written"),
                    Ok(Err(e)) => tracing::warn!(error = %e, "snapshot cache not written"),
                    Err(e) => tracing::warn!(error = %e, "snapshot cache writer failed"),
                }
                done_tx.send_replace(handed);
            }
        });
        Self {
            latest: std::sync::Arc::new(latest),
            done,
        }
    }

    /// Hand `snapshot` over to be written (replacing one not yet written).
    pub fn write(&self, snapshot: &Snapshot) {
        self.latest.send_modify(|(handed, latest)| {
            *handed += 1;
            *latest = Some(snapshot.clone());
        });
    }

    /// Wait (at most `limit`) until what was handed over is written: at
    /// shutdown, so a restart finds the version last served.
    pub async fn flush(&self, limit: std::time::Duration) -> bool {
        let want = self.latest.borrow().0;
        let mut done = self.done.clone();
        matches!(
            tokio::time::timeout(limit, done.wait_for(|&d| d >= want)).await,
            Ok(Ok(_))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> Snapshot {
        Snapshot {
            version: 42,
            published_at_ms: 1_700_000_000_000,
            ..Snapshot::default()
        }
    }

    #[test]
    fn round_trip() {
        let dir = std::env::temp_dir().join(format!("gslb-cache-{}", std::process::id()));
        store(&dir, &encode(&snapshot())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(path(&dir)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the cache holds TSIG secrets");
        assert_eq!(load(&dir).unwrap(), Some(snapshot()));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_corruption_is_refused() {
        let good = encode(&snapshot());
        let p = Path::new("x");
        assert!(decode(&good, p).is_ok());
        assert!(decode(&good[..good.len() - 1], p).is_err(), "short");
        assert!(decode(b"GSLBSNP1", p).is_err(), "header only");
        let mut flipped = good.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(decode(&flipped, p).is_err(), "checksum");
        let mut magic = good.clone();
        magic[0] = b'X';
        assert!(decode(&magic, p).is_err(), "magic");
        assert!(decode(&[], p).is_err(), "empty");
    }

    #[test]
    fn a_missing_file_is_no_cache() {
        let dir = std::env::temp_dir().join("gslb-cache-absent-dir");
        assert!(load(&dir).unwrap().is_none());
    }
}
