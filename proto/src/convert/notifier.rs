//! Notification targets between the model and the admin API's messages.

use gslb_shared::validate::ValidationError;
use gslb_shared::{EventKind, Notifier, NotifierId, NotifierKind, NotifyFilter, Secret};

use super::{bad, name};
use crate::pb;

impl From<&Notifier> for pb::Notifier {
    fn from(n: &Notifier) -> Self {
        let f = &n.filter;
        pb::Notifier {
            // Views set the revision; requests read the precondition and mask.
            revision: 0,
            expected_revision: 0,
            update_mask: None,
            id: n.id.0,
            name: n.name.clone(),
            kind: n.kind.as_str().into(),
            url: n.url.clone(),
            filter: Some(pb::NotifyFilter {
                zones: f.zones.iter().map(ToString::to_string).collect(),
                pools: f.pools.clone(),
                members: f.members.clone(),
                events: f.events.iter().map(|e| e.as_str().into()).collect(),
            }),
            secret: n.secret.0.clone(),
        }
    }
}

/// The kind named `text`.
pub fn notifier_kind(text: &str) -> Result<NotifierKind, ValidationError> {
    match text {
        "webhook" => Ok(NotifierKind::Webhook),
        "slack" => Ok(NotifierKind::Slack),
        "pagerduty" => Ok(NotifierKind::Pagerduty),
        other => Err(bad(
            "kind",
            format!("must be webhook, slack or pagerduty, not {other:?}"),
        )),
    }
}

impl TryFrom<pb::Notifier> for Notifier {
    type Error = ValidationError;

    fn try_from(n: pb::Notifier) -> Result<Self, Self::Error> {
        let f = n.filter.unwrap_or_default();
        let zones = (f.zones.iter().enumerate())
            .map(|(i, z)| name(&format!("filter.zones[{i}]"), z))
            .collect::<Result<_, _>>()?;
        let events = (f.events.iter().enumerate())
            .map(|(i, e)| {
                EventKind::parse(e).ok_or_else(|| {
                    let known: Vec<_> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
                    bad(
                        &format!("filter.events[{i}]"),
                        format!("must be one of {}, not {e:?}", known.join(", ")),
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Notifier {
            id: NotifierId(n.id),
            name: n.name,
            kind: notifier_kind(&n.kind)?,
            url: n.url,
            filter: NotifyFilter {
                zones,
                pools: f.pools,
                members: f.members,
                events,
            },
            secret: Secret(n.secret),
        })
    }
}
