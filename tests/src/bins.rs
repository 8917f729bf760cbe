//! Where the workspace's binaries are: beside the running test or example.

use std::path::PathBuf;

/// The directory holding `gslb-aggregator`, `gslb-agent`, `gslb-edge`,
/// `gslbctl` and `gslb-demo-backend`: `GSLB_BIN_DIR`, else the profile
/// directory the running executable was built into.
pub fn bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("GSLB_BIN_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("current exe");
    let mut dir = exe.parent().expect("exe dir").to_path_buf();
    // Tests run from target/<profile>/deps, examples from .../examples.
    if dir.ends_with("deps") || dir.ends_with("examples") {
        dir.pop();
    }
    dir
}

/// The path of binary `name`, which must have been built.
pub fn bin(name: &str) -> PathBuf {
    let path = bin_dir().join(name);
    assert!(
        path.exists(),
        "{} not built: build the workspace first (scripts/test.sh or cargo build --workspace)",
        path.display()
    );
    path
}
