//! The mark of an initialised store: a file beside the database, written (and
//! fsynced) with the first commit. A store that carries the mark but whose
//! data is gone or damaged is refused rather than opened empty: an empty
//! start used to publish an empty catalog to every edge, and its own first
//! write made restoring the lost file impossible.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use super::StoreError;

/// The marker's file name inside the data directory.
pub const MARKER: &str = "gslb-store.initialised";

/// True when `dir` holds the marker.
pub fn marked(dir: &Path) -> Result<bool, StoreError> {
    match fs::metadata(dir.join(MARKER)) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(StoreError::Db(format!(
            "{}: {e}",
            dir.join(MARKER).display()
        ))),
    }
}

/// Write the marker durably (temporary file, fsync, rename, fsync of the
/// directory).
pub fn mark(dir: &Path, version: u64) -> Result<(), StoreError> {
    let io = |e: std::io::Error| StoreError::Db(format!("{}: {e}", dir.join(MARKER).display()));
    let tmp = dir.join(format!("{MARKER}.tmp"));
    let mut file = File::create(&tmp).map_err(io)?;
    writeln!(
        file,
        "This directory holds an initialised gslb store (marked at version {version}).\n\
         gslb-aggregator refuses to start when this file is here and the store's data is gone."
    )
    .map_err(io)?;
    file.sync_all().map_err(io)?;
    fs::rename(&tmp, dir.join(MARKER)).map_err(io)?;
    File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
    Ok(())
}

/// The error for a marked store whose data is gone or damaged.
pub fn lost(dir: &Path, what: impl Into<String>) -> StoreError {
    StoreError::Lost {
        dir: dir.display().to_string(),
        what: what.into(),
    }
}

/// Run `f`, turning a panic inside the database library on a damaged file
/// into [`StoreError::Lost`].
pub fn no_panic<T>(dir: &Path, f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    // The default hook would print the panic as a crash; the error says it.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    match outcome {
        Ok(result) => result,
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Err(lost(
                dir,
                format!("the database is damaged (a panic: {why})"),
            ))
        }
    }
}

/// Run `check` on a scratch copy of the database file in `dir` (removed
/// after), reporting its errors against `dir`.
pub fn on_copy(
    dir: &Path,
    check: impl FnOnce(&Path) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let copy = dir.join(".open-check");
    let io = |e: std::io::Error| StoreError::Db(format!("{}: {e}", copy.display()));
    if copy.exists() {
        fs::remove_dir_all(&copy).map_err(io)?;
    }
    fs::create_dir(&copy).map_err(io)?;
    let result = fs::copy(dir.join(super::FILE), copy.join(super::FILE))
        .map(drop)
        .map_err(io)
        .and_then(|()| no_panic(&copy, || check(&copy)));
    let _ = fs::remove_dir_all(&copy);
    result.map_err(|e| match e {
        StoreError::Lost { what, .. } => lost(dir, what),
        other => other,
    })
}
