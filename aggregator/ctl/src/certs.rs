//! `gslbctl certs`: a development CA and certificates for components,
//! written into a directory (the CA is made on first use and reused).

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use super::CtlError;
use gslb_proto::link::identity::Role;
use gslb_proto::link::pki::{CA_CERT, Ca, Leaf};

/// Arguments of `gslbctl certs`.
#[derive(Debug, Clone, clap::Args)]
pub struct CertsArgs {
    /// Directory of the CA and the certificates (created if missing).
    #[arg(long)]
    pub dir: PathBuf,
    /// A DNS name or IP address the certificates are valid for, as servers
    /// (repeat; aggregators need the addresses others dial).
    #[arg(long = "host")]
    pub hosts: Vec<String>,
    /// Days the certificates are valid.
    #[arg(long, default_value_t = 365)]
    pub days: u64,
    /// What to issue, ROLE:NAME (roles: agent, edge, aggregator, operator);
    /// writes NAME.crt and NAME.key.
    #[arg(required = true)]
    pub certs: Vec<String>,
}

/// Issue every certificate asked for; the lines to print.
pub fn run(args: &CertsArgs) -> Result<String, CtlError> {
    let input = |e: anyhow::Error| CtlError::Input(format!("{e:#}"));
    if args.days == 0 || args.days > 3650 {
        return Err(CtlError::Input("days: must be between 1 and 3650".into()));
    }
    let mut wanted = Vec::new();
    for spec in &args.certs {
        let (role, name) = spec.split_once(':').ok_or_else(|| {
            CtlError::Input(format!("{spec:?}: write ROLE:NAME, e.g. agent:fra-1"))
        })?;
        let role: Role = role.parse().map_err(CtlError::Input)?;
        wanted.push((role, name.to_owned()));
    }
    let (ca, created) = Ca::open_or_create(&args.dir, args.days * 2).map_err(input)?;
    let mut out = String::new();
    if created {
        out += &format!("created CA {}\n", args.dir.join(CA_CERT).display());
    }
    let now = SystemTime::now();
    for (role, name) in &wanted {
        let path = ca
            .issue(&Leaf {
                role: *role,
                name,
                hosts: &args.hosts,
                not_before: now,
                not_after: now + Duration::from_secs(args.days * 86_400),
            })
            .map_err(input)?;
        out += &format!(
            "issued {role} {name}: {} (key {name}.key)\n",
            path.display()
        );
    }
    Ok(out)
}
