//! `gslbctl dnssec`: sign a zone, see its keys, print the DS for the
//! registrar, and turn signing off in its safe order. Private keys never
//! leave the aggregators and edges; this reads the public halves only.

use gslb_proto::pb;
use gslb_shared::dnssec::ZoneKey;
use gslb_shared::rollover::{Next, Timings};
use gslb_shared::{KeyScheme, SigningAlgorithm, Zone, ZoneSigning};

use crate::table;
use crate::{Client, CtlError, Output};

/// DNSSEC actions.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum DnssecAction {
    /// Sign a zone: the aggregator makes its keys. Publish the DS that
    /// `gslbctl dnssec ds` prints at the parent afterwards.
    Enable {
        /// The zone's apex.
        zone: String,
        /// ecdsap256sha256 (13, the default) or ed25519 (15).
        #[arg(long, default_value = "ecdsap256sha256")]
        algorithm: String,
        /// csk (one combined key, the default) or ksk-zsk.
        #[arg(long, default_value = "csk")]
        scheme: String,
    },
    /// The zone's keys and signing settings.
    Status {
        /// The zone's apex.
        zone: String,
    },
    /// Start a key rollover: zsk (pre-publication, automatic from there),
    /// ksk or csk (double DS: publish the new DS that `ds` prints, then
    /// run `ds-seen`).
    Rollover {
        /// The zone's apex.
        zone: String,
        /// zsk, ksk or csk.
        #[arg(long)]
        role: String,
    },
    /// The new key's DS is at the parent: the rollover goes on once the
    /// parent's DS TTL has passed.
    DsSeen {
        /// The zone's apex.
        zone: String,
    },
    /// The DS records (SHA-256) to publish at the parent.
    Ds {
        /// The zone's apex.
        zone: String,
    },
    /// Turning signing off, step 1: the edges keep signing and publish
    /// CDS/CDNSKEY delete records. Remove the DS at the parent now.
    Unsign {
        /// The zone's apex.
        zone: String,
    },
    /// Turning signing off, step 2 (refused before step 1): stop signing.
    /// Only once the parent's DS is gone and its TTL has passed.
    Disable {
        /// The zone's apex.
        zone: String,
        /// Say that the DS is gone from the parent.
        #[arg(long)]
        ds_removed: bool,
    },
}

/// Run a DNSSEC action.
pub async fn run(c: &mut Client, action: DnssecAction, out: Output) -> Result<String, CtlError> {
    match action {
        DnssecAction::Enable {
            zone,
            algorithm,
            scheme,
        } => {
            let mut z = find(c, &zone).await?;
            if z.dnssec.is_some() {
                return Err(CtlError::Input(format!("zone {zone} is signed already")));
            }
            let algorithm: SigningAlgorithm = match algorithm.as_str() {
                "13" => SigningAlgorithm::EcdsaP256Sha256,
                "15" => SigningAlgorithm::Ed25519,
                text => text
                    .parse()
                    .map_err(|e| CtlError::Input(format!("--algorithm {e}")))?,
            };
            let scheme: KeyScheme =
                (scheme.parse()).map_err(|e| CtlError::Input(format!("--scheme {e}")))?;
            z.dnssec = Some(ZoneSigning {
                algorithm,
                scheme,
                ..ZoneSigning::default()
            });
            let z = update(c, &z).await?;
            Ok(format!(
                "zone {} is signed; publish its DS at the parent:\n{}",
                z.apex,
                ds_lines(&z)?
            ))
        }
        DnssecAction::Status { zone } => {
            let z = find(c, &zone).await?;
            let records = c
                .list_record_sets(pb::ListRequest {
                    zone_id: z.id.0,
                    ..Default::default()
                })
                .await?
                .into_inner()
                .records;
            let largest = records.iter().map(|r| r.ttl).max().unwrap_or(0);
            status(&z, Timings::of(&z, largest), out)
        }
        DnssecAction::Rollover { zone, role } => {
            let z = find(c, &zone).await?;
            let reply = c
                .start_rollover(pb::RolloverRequest {
                    zone_id: z.id.0,
                    role: role.clone(),
                })
                .await?
                .into_inner();
            let z = Zone::try_from(reply).map_err(|e| CtlError::Input(e.to_string()))?;
            Ok(if role == "zsk" {
                format!(
                    "zone {zone}: the new ZSK is published; it signs once the DNSKEY TTL and the propagation delay have passed\n"
                )
            } else {
                format!(
                    "zone {zone}: a new {role} is pending. Publish its DS at the parent (keep the old one):\n{}then run\n  gslbctl dnssec ds-seen {zone}\n",
                    ds_lines(&z)?
                )
            })
        }
        DnssecAction::DsSeen { zone } => {
            let z = find(c, &zone).await?;
            c.confirm_ds_seen(pb::IdRequest {
                id: z.id.0,
                ..Default::default()
            })
            .await?;
            Ok(format!(
                "zone {zone}: the new key takes over once the parent's DS TTL and the propagation delay have passed; remove the old DS after that (`gslbctl dnssec status {zone}`)\n"
            ))
        }
        DnssecAction::Ds { zone } => {
            let z = find(c, &zone).await?;
            ds_lines(&z)
        }
        DnssecAction::Unsign { zone } => {
            let mut z = find(c, &zone).await?;
            let s = signing(&mut z)?;
            s.unsign = true;
            update(c, &z).await?;
            Ok(format!(
                "zone {zone}: the edges publish CDS/CDNSKEY delete records and keep signing.\n\
                 Remove the DS at the parent, wait out its TTL, then run\n  \
                 gslbctl dnssec disable {zone} --ds-removed\n"
            ))
        }
        DnssecAction::Disable { zone, ds_removed } => {
            if !ds_removed {
                return Err(CtlError::Input(
                    "--ds-removed is required: stop signing only once the parent no longer \
                     publishes the DS (else resolvers fail the zone)"
                        .into(),
                ));
            }
            let mut z = find(c, &zone).await?;
            signing(&mut z)?;
            z.dnssec = None;
            update(c, &z).await?;
            Ok(format!("zone {zone} is no longer signed\n"))
        }
    }
}

/// The zone with apex `apex`.
async fn find(c: &mut Client, apex: &str) -> Result<Zone, CtlError> {
    let wanted = apex.trim_end_matches('.').to_ascii_lowercase();
    let zones = c
        .list_zones(pb::ListRequest::default())
        .await?
        .into_inner()
        .zones;
    let z = zones
        .into_iter()
        .find(|z| z.apex == wanted)
        .ok_or_else(|| CtlError::Input(format!("no zone has the apex {apex}")))?;
    Zone::try_from(z).map_err(|e| CtlError::Input(e.to_string()))
}

async fn update(c: &mut Client, z: &Zone) -> Result<Zone, CtlError> {
    let reply = c.update_zone(pb::Zone::from(z)).await?.into_inner();
    Zone::try_from(reply).map_err(|e| CtlError::Input(e.to_string()))
}

fn signing(z: &mut Zone) -> Result<&mut ZoneSigning, CtlError> {
    let apex = z.apex.to_string();
    z.dnssec
        .as_mut()
        .ok_or_else(|| CtlError::Input(format!("zone {apex} is not signed")))
}

/// A zone's keys with their public halves.
fn keys(z: &Zone) -> Result<Vec<(&gslb_shared::SigningKey, ZoneKey)>, CtlError> {
    if z.dnssec.is_none() {
        return Err(CtlError::Input(format!("zone {} is not signed", z.apex)));
    }
    gslb_shared::zone_keys::public_keys(z).map_err(|e| CtlError::Input(e.to_string()))
}

/// The DS records of the zone's key-signing keys, one per line.
fn ds_lines(z: &Zone) -> Result<String, CtlError> {
    let lines = gslb_shared::zone_keys::ds_lines(z).map_err(|e| CtlError::Input(e.to_string()))?;
    Ok(lines.iter().map(|l| format!("{l}\n")).collect())
}

fn status(z: &Zone, t: Timings, out: Output) -> Result<String, CtlError> {
    let keys = keys(z)?;
    let Some(s) = &z.dnssec else {
        return Err(CtlError::Input(format!("zone {} is not signed", z.apex)));
    };
    let next = match gslb_shared::rollover::next(s, t) {
        Next::Idle if s.zsk_lifetime > 0 => format!(
            "no rollover running; the ZSK rolls over {} s after it started signing",
            s.zsk_lifetime
        ),
        Next::Idle => "no rollover running (start one with gslbctl dnssec rollover)".to_owned(),
        Next::DsSeen { .. } => {
            "waiting for the new DS at the parent: publish it, then gslbctl dnssec ds-seen"
                .to_owned()
        }
        Next::At { at, step } => format!(
            "{step} at {at} (in {} s)",
            at.saturating_sub(gslb_shared::clock::now_secs())
        ),
    };
    Ok(match out {
        Output::Json => serde_json::json!({
            "zone": z.apex.to_string(),
            "algorithm": s.algorithm.to_string(),
            "scheme": s.scheme,
            "signatureValidity": s.signature_validity,
            "inceptionOffset": s.inception_offset,
            "propagationDelay": s.propagation_delay,
            "parentDsTtl": s.parent_ds_ttl,
            "zskLifetime": s.zsk_lifetime,
            "unsign": s.unsign,
            "next": next,
            "keys": keys.iter().map(|(k, key)| serde_json::json!({
                "role": k.role.to_string(),
                "tag": key.key_tag(),
                "flags": k.role.flags(),
                "state": k.state.to_string(),
                "since": k.since.max(k.created),
                "dsSeen": k.ds_seen,
                "created": k.created,
            })).collect::<Vec<_>>(),
        })
        .to_string(),
        Output::Table => {
            let rows: Vec<Vec<String>> = keys
                .iter()
                .map(|(k, key)| {
                    vec![
                        k.role.to_string(),
                        key.key_tag().to_string(),
                        s.algorithm.to_string(),
                        k.state.to_string(),
                        crate::time::at_secs(k.since.max(k.created)),
                        k.ds_seen
                            .map_or_else(|| "-".to_owned(), crate::time::at_secs),
                    ]
                })
                .collect();
            format!(
                "zone {}: signed{}, signatures valid {} s from {} s before they are made\nnext: {next}\n{}",
                z.apex,
                if s.unsign {
                    " (unsigning: CDS/CDNSKEY delete published)"
                } else {
                    ""
                },
                s.signature_validity,
                s.inception_offset,
                table::render(
                    &["ROLE", "TAG", "ALGORITHM", "STATE", "SINCE", "DS SEEN"],
                    &rows
                )
            )
        }
    })
}
