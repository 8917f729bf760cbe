//! Builds the XDP program (bpf/dns_redirect.bpf.c) with clang's BPF target.
//!
//! clang comes from Debian (`clang-14`, in scripts/packages.sh); `GSLB_CLANG`
//! names another. Without clang the crate still builds, without the
//! program: the edge then logs that its XDP path is not built in and
//! answers on the kernel path (the quickstart needs no system package).

use std::path::{Path, PathBuf};
use std::process::Command;

const SOURCE: &str = "bpf/dns_redirect.bpf.c";
const CANDIDATES: [&str; 3] = ["clang-14", "clang", "clang-15"];

fn find_clang() -> Option<String> {
    if let Ok(c) = std::env::var("GSLB_CLANG") {
        return Some(c);
    }
    CANDIDATES.into_iter().map(str::to_owned).find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The Debian multiarch include directory (asm/types.h), which clang does
/// not search for the BPF target.
fn multiarch_include() -> Option<PathBuf> {
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").ok()?;
    let dir = PathBuf::from(format!("/usr/include/{arch}-linux-gnu"));
    dir.is_dir().then_some(dir)
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(gslb_xdp_program)");
    println!("cargo::rerun-if-changed={SOURCE}");
    println!("cargo::rerun-if-env-changed=GSLB_CLANG");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let object = out.join("dns_redirect.bpf.o");
    let Some(clang) = find_clang() else {
        println!(
            "cargo::warning=clang not found (apt-get install clang-14, or set GSLB_CLANG): the edge is built without its XDP program and answers on the kernel path only"
        );
        // Look again on the next build: clang may be installed by then.
        for c in CANDIDATES {
            println!("cargo::rerun-if-changed=/usr/bin/{c}");
        }
        return;
    };
    let mut cmd = Command::new(&clang);
    cmd.args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror", "-c"])
        .arg(Path::new(SOURCE))
        .arg("-o")
        .arg(&object);
    if let Some(dir) = multiarch_include() {
        cmd.arg("-I").arg(dir);
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("{clang}: cannot run: {e}"));
    assert!(status.success(), "{clang} failed to build {SOURCE}");
    println!("cargo::rustc-cfg=gslb_xdp_program");
}
