//! Condition polling with a deadline, and per-test scratch directories.

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Poll `cond` every 20 ms until it holds; panic naming `what` after `secs`.
pub fn wait_until(secs: u64, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out after {secs}s waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A fresh, empty directory under the system temp dir for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gslb-e2e-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}
