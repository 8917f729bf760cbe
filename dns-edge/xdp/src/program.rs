//! The XDP program (bpf/dns_redirect.bpf.c, built by build.rs) loaded with
//! aya: its maps told the DNS port and the edge's addresses, attached to
//! one interface (native mode, else generic), and detached on demand or on
//! drop, so the interface goes back to the kernel path alone.

use std::net::IpAddr;
use std::os::fd::RawFd;

use aya::Ebpf;
use aya::maps::{Array, HashMap, XskMap};
use aya::programs::{Xdp, XdpMode};

/// Why the XDP path is not available.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    /// This binary was built without clang, so without the program.
    #[error("this gslb-edge was built without its XDP program (clang was not found at build time)")]
    NotBuilt,
    /// No such interface.
    #[error("interface {0:?} does not exist")]
    NoInterface(String),
    /// The kernel refused to load the program (no CAP_BPF, verifier).
    #[error("loading the XDP program: {0}")]
    Load(String),
    /// The program could not be attached (no CAP_NET_ADMIN, no XDP support).
    #[error("attaching the XDP program to {iface}: {error}")]
    Attach {
        /// The interface.
        iface: String,
        /// The error of the generic-mode attempt.
        error: String,
    },
    /// A map of the program could not be written.
    #[error("XDP map {map}: {error}")]
    Map {
        /// The map's name.
        map: &'static str,
        /// The error.
        error: String,
    },
}

/// How the program runs on the interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachMode {
    /// In the driver.
    Native,
    /// In the kernel's generic hook (slower; any interface).
    Generic,
}

impl AttachMode {
    /// Its name in logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            AttachMode::Native => "native",
            AttachMode::Generic => "generic",
        }
    }
}

#[cfg(gslb_xdp_program)]
fn object() -> Option<&'static [u8]> {
    Some(aya::include_bytes_aligned!(concat!(
        env!("OUT_DIR"),
        "/dns_redirect.bpf.o"
    )))
}

#[cfg(not(gslb_xdp_program))]
fn object() -> Option<&'static [u8]> {
    None
}

/// True when this build carries the XDP program.
pub fn built() -> bool {
    object().is_some()
}

/// The index of interface `iface` in this network namespace.
pub fn if_index(iface: &str) -> Result<u32, ProgramError> {
    let name =
        std::ffi::CString::new(iface).map_err(|_| ProgramError::NoInterface(iface.to_owned()))?;
    match xdp::nic::NicIndex::lookup_by_name(&name) {
        Ok(Some(i)) => Ok(i.0),
        _ => Err(ProgramError::NoInterface(iface.to_owned())),
    }
}

/// Most addresses the program matches per family (its maps' size).
pub const MAX_ADDRESSES: usize = 64;
const PROGRAM: &str = "gslb_dns";

/// The loaded program; detached when dropped.
pub struct Program {
    ebpf: Option<Ebpf>,
    iface: String,
    mode: AttachMode,
}

fn map_error(map: &'static str) -> impl Fn(aya::maps::MapError) -> ProgramError {
    move |e| ProgramError::Map {
        map,
        error: e.to_string(),
    }
}

/// The program's maps (bpf/dns_redirect.bpf.c).
const PORT: &str = "gslb_port";
const ADDRS4: &str = "gslb_addrs4";
const ADDRS6: &str = "gslb_addrs6";
const XSKS: &str = "gslb_xsks";

/// The program's map `name` as the aya map type `T`.
fn map<'a, T>(ebpf: &'a mut Ebpf, name: &'static str) -> Result<T, ProgramError>
where
    T: TryFrom<&'a mut aya::maps::Map, Error = aya::maps::MapError>,
{
    ebpf.map_mut(name)
        .ok_or(ProgramError::Map {
            map: name,
            error: "not in the object".into(),
        })?
        .try_into()
        .map_err(map_error(name))
}

impl Program {
    /// Load the program, point it at `port` on `addresses`, and attach it
    /// to `iface`. No frame is redirected until sockets are registered.
    pub fn attach(iface: &str, port: u16, addresses: &[IpAddr]) -> Result<Program, ProgramError> {
        let bytes = object().ok_or(ProgramError::NotBuilt)?;
        let mut ebpf = Ebpf::load(bytes).map_err(|e| ProgramError::Load(e.to_string()))?;
        // Stored as the packet carries it, in network order.
        let port = u16::from_ne_bytes(port.to_be_bytes());
        map::<Array<_, u16>>(&mut ebpf, PORT)?
            .set(0, port, 0)
            .map_err(map_error(PORT))?;
        let mut addrs4 = map::<HashMap<_, u32, u8>>(&mut ebpf, ADDRS4)?;
        let v4 = addresses.iter().filter_map(|a| match a {
            IpAddr::V4(a) => Some(a),
            IpAddr::V6(_) => None,
        });
        for a in v4.take(MAX_ADDRESSES) {
            addrs4
                .insert(u32::from_ne_bytes(a.octets()), 1, 0)
                .map_err(map_error(ADDRS4))?;
        }
        let mut addrs6 = map::<HashMap<_, [u8; 16], u8>>(&mut ebpf, ADDRS6)?;
        let v6 = addresses.iter().filter_map(|a| match a {
            IpAddr::V6(a) => Some(a),
            IpAddr::V4(_) => None,
        });
        for a in v6.take(MAX_ADDRESSES) {
            addrs6.insert(a.octets(), 1, 0).map_err(map_error(ADDRS6))?;
        }
        let program: &mut Xdp = ebpf
            .program_mut(PROGRAM)
            .ok_or_else(|| ProgramError::Load(format!("no program {PROGRAM} in the object")))?
            .try_into()
            .map_err(|e: aya::programs::ProgramError| ProgramError::Load(e.to_string()))?;
        program
            .load()
            .map_err(|e| ProgramError::Load(verifier_detail(&e)))?;
        let mode = match program.attach(iface, XdpMode::Driver) {
            Ok(_) => AttachMode::Native,
            Err(aya::programs::ProgramError::UnknownInterface { .. }) => {
                return Err(ProgramError::NoInterface(iface.to_owned()));
            }
            Err(native) => match program.attach(iface, XdpMode::Skb) {
                Ok(_) => {
                    tracing::debug!(iface, error = %native, "native XDP refused; generic mode");
                    AttachMode::Generic
                }
                Err(e) => {
                    return Err(ProgramError::Attach {
                        iface: iface.to_owned(),
                        error: e.to_string(),
                    });
                }
            },
        };
        Ok(Program {
            ebpf: Some(ebpf),
            iface: iface.to_owned(),
            mode,
        })
    }

    /// How the program is attached.
    pub fn mode(&self) -> AttachMode {
        self.mode
    }

    /// The interface it is attached to.
    pub fn iface(&self) -> &str {
        &self.iface
    }

    /// Send queue `queue`'s matching frames to the AF_XDP socket `fd`.
    pub fn register(&mut self, queue: u32, fd: RawFd) -> Result<(), ProgramError> {
        let ebpf = self.ebpf.as_mut().ok_or(ProgramError::Map {
            map: XSKS,
            error: "the program is detached".into(),
        })?;
        map::<XskMap<_>>(ebpf, XSKS)?
            .set(queue, fd, 0)
            .map_err(map_error(XSKS))
    }

    /// Detach and unload the program (idempotent): from now on the kernel
    /// sees every frame.
    pub fn detach(&mut self) {
        // Dropping aya's Ebpf detaches its links and closes the program.
        self.ebpf = None;
    }

    /// True while attached.
    pub fn attached(&self) -> bool {
        self.ebpf.is_some()
    }
}

/// The verifier's last lines, where it says why, rather than aya's summary.
fn verifier_detail(e: &aya::programs::ProgramError) -> String {
    match e {
        aya::programs::ProgramError::LoadError {
            io_error,
            verifier_log,
        } => {
            let log = verifier_log.to_string();
            let tail: Vec<&str> = log.lines().rev().take(3).collect();
            format!(
                "{io_error}: {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            )
        }
        other => other.to_string(),
    }
}
