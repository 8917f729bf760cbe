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

/// A core namespace holding `core_addrs` on its loopback (aggregator,
/// backends, edge) and `locations` namespaces around it: location `i`
/// (from 1) is linked to the core by a veth pair on `10.{net}.{i}.0/24`
/// (`uplink` there, `{tag}{i}` in the core, the core end `.1`) and routes
/// `10.{served}.0.0/24` through it. Deleted with it on drop.
pub struct Star {
    /// The core namespace.
    pub core: Netns,
    /// One namespace per location, in order.
    pub locations: Vec<Netns>,
}

impl Star {
    /// Create it; `tag` names the namespaces (`gslb{pid}{tag}core`, ...).
    pub fn create(tag: &str, core_addrs: &[&str], locations: usize, net: u8, served: u8) -> Star {
        let pid = std::process::id();
        let core = Netns::create(&format!("gslb{pid}{tag}core"));
        for addr in core_addrs {
            core.ip(&["addr", "add", &format!("{addr}/32"), "dev", "lo"]);
        }
        let locations = (1..=locations)
            .map(|i| {
                let ns = Netns::create(&format!("gslb{pid}{tag}{i}"));
                ns.veth(
                    "uplink",
                    &format!("10.{net}.{i}.2/24"),
                    &core,
                    &format!("{tag}{i}"),
                    &format!("10.{net}.{i}.1/24"),
                );
                ns.ip(&[
                    "route",
                    "add",
                    &format!("10.{served}.0.0/24"),
                    "via",
                    &format!("10.{net}.{i}.1"),
                ]);
                ns
            })
            .collect();
        Star { core, locations }
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
