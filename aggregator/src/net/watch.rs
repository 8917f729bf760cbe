//! Noticing that files changed: their modification times and sizes,
//! compared on use (a few `stat` calls per connection or call; no watcher
//! thread to keep alive).

use std::path::Path;
use std::time::SystemTime;

/// What `stat` says of each file (`None` for a missing one).
pub type Stamp = Vec<Option<(SystemTime, u64)>>;

/// The stamp of `paths` now.
pub fn stamp(paths: &[&Path]) -> Stamp {
    paths
        .iter()
        .map(|p| {
            std::fs::metadata(p)
                .ok()
                .and_then(|m| Some((m.modified().ok()?, m.len())))
        })
        .collect()
}
