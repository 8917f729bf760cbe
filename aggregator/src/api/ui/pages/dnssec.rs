//! DNSSEC: each zone signed or not; a signed zone's keys (role, tag,
//! state, since when), the DS records to publish at the parent, and where
//! a rollover stands, with its two operator steps (start one, say the new
//! DS is published). The same public data `gslbctl dnssec` shows.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use gslb_shared::rollover::{Next, Timings};
use gslb_shared::{KeyScheme, Zone};
use maud::{Markup, html};

use super::super::Ui;
use super::super::auth::Caller;

/// `GET /ui/dnssec`.
pub async fn page(State(ui): State<Arc<Ui>>, Extension(caller): Extension<Caller>) -> Response {
    let view = ui.service.view();
    let catalog = super::seen(view.catalog(), caller.scope.as_deref());
    let largest = |z: &Zone| {
        (catalog.records.values())
            .filter(|r| r.zone == z.id)
            .map(|r| r.ttl)
            .max()
            .unwrap_or(0)
    };
    super::page(
        &caller,
        "DNSSEC",
        "/ui/dnssec",
        html! {
            p { "Private keys never leave the aggregators and edges: this page shows public halves only. "
                "Sign a zone with " code { "gslbctl dnssec enable ZONE" } "." }
            @for z in catalog.zones.values() {
                (zone(z, Timings::of(z, largest(z))))
            }
        },
    )
}

fn zone(z: &Zone, timings: Timings) -> Markup {
    let Some(s) = &z.dnssec else {
        return html! {
            section.zone aria-label=(format!("zone {}", z.apex)) {
                h2 { "zone " (z.apex) } p.small { "Not signed." }
            }
        };
    };
    let keys = gslb_shared::zone_keys::public_keys(z);
    let ds = gslb_shared::zone_keys::ds_lines(z);
    let next = match gslb_shared::rollover::next(s, timings) {
        Next::Idle if s.zsk_lifetime > 0 => format!(
            "No rollover running; the ZSK rolls over {} s after it started signing.",
            s.zsk_lifetime
        ),
        Next::Idle => "No rollover running.".to_owned(),
        Next::DsSeen { .. } => {
            "Waiting for the new DS at the parent: publish it, then say so below.".to_owned()
        }
        Next::At { at, step } => format!("Next: {step} at {}.", super::rfc3339(at * 1000)),
    };
    let waiting = matches!(gslb_shared::rollover::next(s, timings), Next::DsSeen { .. });
    let roles: &[&str] = match s.scheme {
        KeyScheme::Csk => &["csk"],
        KeyScheme::KskZsk => &["zsk", "ksk"],
    };
    html! {
        section.zone.signed aria-label=(format!("zone {}", z.apex)) data-zone=(z.id.0) data-apex=(z.apex) {
            h2 { "zone " (z.apex) }
            p {
                "Signed with " (s.algorithm) " (" (s.scheme) ")"
                @if s.unsign { ", unsigning: CDS/CDNSKEY delete published" }
                "; signatures valid " (s.signature_validity) " s from " (s.inception_offset) " s before they are made."
            }
            p.next { (next) }
            @match &keys {
                Ok(keys) => {
                    table {
                        caption.sr-only { "Keys of " (z.apex) }
                        thead { tr { th scope="col" { "Role" } th scope="col" { "Tag" } th scope="col" { "State" } th scope="col" { "Since" } th scope="col" { "DS seen" } } }
                        tbody {
                            @for (k, key) in keys {
                                tr {
                                    td { (k.role) } td.num { (key.key_tag()) } td { (k.state) }
                                    td { (time(k.since.max(k.created))) }
                                    td { @match k.ds_seen { Some(at) => { (time(at)) } None => { "—" } } }
                                }
                            }
                        }
                    }
                }
                Err(e) => { p.error role="alert" { (e) } }
            }
            h3 { "DS records for the parent" }
            @match &ds {
                Ok(lines) => { pre.ds { (lines.join("\n")) } }
                Err(e) => { p.error role="alert" { (e) } }
            }
            div.actions {
                @for role in roles {
                    button.operates.rollover type="button" data-role=(role) { "Start a " (role.to_uppercase()) " rollover" }
                }
                @if waiting { button.operates.ds-seen type="button" { "The new DS is published at the parent" } }
            }
        }
    }
}

/// Seconds since the Unix epoch, as a time element.
fn time(secs: u64) -> Markup {
    let at = super::rfc3339(secs * 1000);
    html! { time datetime=(at) { (at) } }
}
