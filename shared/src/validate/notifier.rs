//! Notification target rules: a name, an `http` or `https` URL whose host
//! is not in the denied ranges, a secret of the right size for its kind,
//! and a bounded filter.

use http::Uri;

use super::error::{Findings, ValidationError};
use super::text::human_name;
use crate::destination::{DenyList, default_ranges};
use crate::model::{Notifier, NotifierKind};

/// Longest URL accepted, in bytes.
pub const MAX_URL_LEN: usize = 2_048;
/// Most zones, pools, members or events a filter may list (each).
pub const MAX_FILTER_ENTRIES: usize = 64;
/// Shortest webhook signing key, in bytes (128 bits).
pub const MIN_SIGNING_SECRET: usize = 16;
/// Longest secret of any kind, in bytes.
pub const MAX_NOTIFIER_SECRET: usize = 64;

/// Validate a target on its own (that the names in its filter exist is the
/// catalog's rule). An empty webhook secret is allowed only where the
/// server fills it in (create).
pub fn notifier(n: &Notifier) -> Result<(), ValidationError> {
    let mut f = Findings::new("");
    human_name(&mut f, "name", &n.name);
    if let Err(rule) = url(&n.url) {
        f.add("url", rule);
    }
    let len = n.secret.0.len();
    match n.kind {
        NotifierKind::Webhook | NotifierKind::Slack => f.require(
            len == 0 || (MIN_SIGNING_SECRET..=MAX_NOTIFIER_SECRET).contains(&len),
            "secret",
            format!(
                "must be {MIN_SIGNING_SECRET} to {MAX_NOTIFIER_SECRET} bytes (base64), not {len}"
            ),
        ),
        NotifierKind::Pagerduty => f.require(
            (1..=MAX_NOTIFIER_SECRET).contains(&len),
            "secret",
            format!(
                "must be the integration's routing key (base64 of its text, 1 to \
                 {MAX_NOTIFIER_SECRET} bytes), not {len} bytes"
            ),
        ),
    }
    let filter = &n.filter;
    let lists = [
        ("filter.zones", filter.zones.len()),
        ("filter.pools", filter.pools.len()),
        ("filter.members", filter.members.len()),
        ("filter.events", filter.events.len()),
    ];
    for (field, count) in lists {
        f.require(
            count <= MAX_FILTER_ENTRIES,
            field,
            format!("must list at most {MAX_FILTER_ENTRIES} entries, not {count}"),
        );
    }
    for (i, name) in filter.pools.iter().enumerate() {
        human_name(&mut f, &format!("filter.pools[{i}]"), name);
    }
    for (i, name) in filter.members.iter().enumerate() {
        human_name(&mut f, &format!("filter.members[{i}]"), name);
    }
    for (i, kind) in filter.events.iter().enumerate() {
        f.require(
            !filter.events[..i].contains(kind),
            &format!("filter.events[{i}]"),
            format!("{kind} is listed twice"),
        );
    }
    f.finish()
}

/// The host (an IPv6 address without its brackets) and port a URL
/// reaches: the port given, or 443 for `https` and 80 otherwise.
pub fn endpoint(uri: &Uri) -> Option<(&str, u16)> {
    let authority = uri.authority()?;
    let https = uri.scheme_str() == Some("https");
    let host = (authority.host())
        .trim_start_matches('[')
        .trim_end_matches(']');
    Some((
        host,
        authority.port_u16().unwrap_or(if https { 443 } else { 80 }),
    ))
}

/// Whether `host` is not a dotted quad but a resolver would still read it
/// as an IPv4 address (`inet_aton`'s forms: one to three parts, decimal,
/// octal or hex): such a host slips past an address check as a "name".
fn numeric_shorthand(host: &str) -> bool {
    let last = host.trim_end_matches('.').rsplit('.').next().unwrap_or("");
    !last.is_empty()
        && (last.bytes().all(|b| b.is_ascii_digit())
            || last
                .strip_prefix("0x")
                .or_else(|| last.strip_prefix("0X"))
                .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit())))
}

/// The rule a notification URL breaks, if any. A host given as an address
/// is checked against the default denied ranges here; a host name is
/// checked at each delivery, on every address it resolves to.
pub fn url(text: &str) -> Result<Uri, String> {
    if text.len() > MAX_URL_LEN {
        return Err(format!("must be at most {MAX_URL_LEN} bytes"));
    }
    let uri: Uri = text
        .parse()
        .map_err(|e| format!("is not a URL ({e}): give http://HOST[:PORT]/PATH or https://..."))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err("must start with http:// or https://".into()),
    }
    let Some(authority) = uri.authority() else {
        return Err("must name a host".into());
    };
    if authority.as_str().contains('@') {
        return Err("must not carry a user name or password (put a secret in `secret`)".into());
    }
    if authority.port_u16() == Some(0) {
        return Err("must name a port other than 0".into());
    }
    let Some((host, _)) = endpoint(&uri).filter(|(h, _)| !h.is_empty()) else {
        return Err("must name a host".into());
    };
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        if let Some(why) = DenyList::new(default_ranges()).denied_ip(ip) {
            return Err(format!(
                "is denied: {why} (link-local, metadata, unspecified, broadcast and multicast addresses)"
            ));
        }
    } else if numeric_shorthand(host) {
        return Err(format!(
            "host {host:?} is a numeric shorthand (0, 2130706433, 0x7f.1, 127.1): give a dotted-quad IPv4 address, an IPv6 literal or a DNS name"
        ));
    }
    Ok(uri)
}
