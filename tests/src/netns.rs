//! Network namespaces and veth links the tests create (and delete on drop),
//! and running code or commands inside them. Needs root.

use std::process::Command;

/// True when the process can create network namespaces (runs as root).
pub fn available() -> bool {
    nix::unistd::Uid::effective().is_root()
        && Command::new("ip")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
}

/// Run `ip ARGS`, which must succeed.
pub fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("ip not runnable: {e}"));
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A network namespace, deleted (with its interfaces) on drop.
pub struct Netns {
    /// Its name (as `ip netns` knows it).
    pub name: String,
}

impl Netns {
    /// Create `name` (removing a leftover of that name) with `lo` up.
    pub fn create(name: &str) -> Netns {
        let _ = Command::new("ip").args(["netns", "del", name]).output();
        ip(&["netns", "add", name]);
        let ns = Netns {
            name: name.to_owned(),
        };
        ns.ip(&["link", "set", "lo", "up"]);
        ns
    }

    /// Run `ip ARGS` inside the namespace.
    pub fn ip(&self, args: &[&str]) {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        ip(&all);
    }

    /// Run a command inside the namespace, which must succeed; returns stdout.
    pub fn exec(&self, args: &[&str]) -> String {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.name])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("ip netns exec: {e}"));
        assert!(
            out.status.success(),
            "in {}: {args:?}: {}",
            self.name,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Link this namespace to `peer` with a veth pair: `here`/`there` are the
    /// interface names, `here_addr`/`there_addr` their CIDR addresses.
    pub fn veth(&self, here: &str, here_addr: &str, peer: &Netns, there: &str, there_addr: &str) {
        ip(&[
            "link", "add", here, "netns", &self.name, "type", "veth", "peer", "name", there,
            "netns", &peer.name,
        ]);
        self.ip(&["addr", "add", here_addr, "dev", here]);
        self.ip(&["link", "set", here, "up"]);
        peer.ip(&["addr", "add", there_addr, "dev", there]);
        peer.ip(&["link", "set", there, "up"]);
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

/// Move the calling thread (only it) into namespace `name`, so a helper
/// thread can observe processes inside it over their loopback addresses.
pub fn enter(name: &str) {
    let path = format!("/var/run/netns/{name}");
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("open {path}: {e}"));
    nix::sched::setns(file, nix::sched::CloneFlags::CLONE_NEWNET)
        .unwrap_or_else(|e| panic!("setns {name}: {e}"));
}
