//! `gslbctl zone import FILE` and `gslbctl zone export APEX`: zone files
//! in and out through the admin API (read and planned by the aggregator).

use std::path::PathBuf;

use gslb_proto::pb;

use crate::render;
use crate::{Client, CtlError, Output};

/// Zone file actions.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ZoneAction {
    /// Import an RFC 1035 master file into its zone: prints the plan (as
    /// `apply` does) and applies it all or nothing. The zone's static
    /// record sets become the file's; pool-backed sets stay.
    Import {
        /// The master file.
        file: PathBuf,
        /// Origin of relative names (else the file's $ORIGIN or SOA owner).
        #[arg(long)]
        apex: Option<String>,
        /// Only plan and validate.
        #[arg(long)]
        dry_run: bool,
        /// Delete the zone's static record sets the file leaves out
        /// (without it, such an import is refused and names them).
        #[arg(long)]
        prune: bool,
        /// Drop the file's DNSSEC records (RRSIG, NSEC, NSEC3, NSEC3PARAM,
        /// DNSKEY, CDS, CDNSKEY, ZONEMD; counted in the plan) instead of
        /// refusing a signed file: the edges sign the zone themselves.
        #[arg(long)]
        strip_dnssec: bool,
    },
    /// Write a zone as a master file to stdout: static data, and each
    /// pool-backed name's current answer, marked with a comment.
    Export {
        /// The zone's apex.
        apex: String,
    },
}

/// Run a zone file action.
pub async fn run(c: &mut Client, action: ZoneAction, out: Output) -> Result<String, CtlError> {
    match action {
        ZoneAction::Import {
            file,
            apex,
            dry_run,
            prune,
            strip_dnssec,
        } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| CtlError::Input(format!("{}: {e}", file.display())))?;
            let r = c
                .import_zone(pb::ImportZoneRequest {
                    text,
                    apex: apex.unwrap_or_default(),
                    dry_run,
                    prune,
                    strip_dnssec,
                })
                .await?
                .into_inner();
            Ok(render::plan(&r, out))
        }
        ZoneAction::Export { apex } => Ok(c
            .export_zone(pb::ExportZoneRequest { apex })
            .await?
            .into_inner()
            .text),
    }
}
