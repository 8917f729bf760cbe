//! What is posted for an event, per kind of target:
//! - `webhook`: our JSON event, with `X-Gslb-Signature: v1=HEX`, the
//!   HMAC-SHA256 under the target's secret of `TIMESTAMP.BODY`, where
//!   TIMESTAMP is `X-Gslb-Timestamp` (Unix seconds at sending), and the
//!   event's idempotency key in `Idempotency-Key`;
//! - `slack`: an incoming-webhook message (`{"text": ...}`);
//! - `pagerduty`: an Events API v2 `trigger` or `resolve`, its `dedup_key`
//!   stable per subject and problem (`gslb/member/12/down`).
//!
//! Pure: the sending time comes in as an argument.

use gslb_shared::{EventKind, Notifier, NotifierKind};
use serde_json::{Value, json};

use super::Event;

/// Header carrying the signature.
pub const SIGNATURE_HEADER: &str = "x-gslb-signature";
/// Header carrying the Unix time the signature covers.
pub const TIMESTAMP_HEADER: &str = "x-gslb-timestamp";
/// Header carrying the event's idempotency key.
pub const IDEMPOTENCY_HEADER: &str = "idempotency-key";
/// Header carrying the event's kind.
pub const EVENT_HEADER: &str = "x-gslb-event";

/// One HTTP POST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Post {
    /// The JSON body.
    pub body: Vec<u8>,
    /// Headers besides `content-type: application/json`.
    pub headers: Vec<(&'static str, String)>,
}

/// An event's time as RFC 3339 in UTC, to the millisecond.
fn rfc3339(ms: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
    humantime::format_rfc3339_millis(t).to_string()
}

/// The signature of `body` sent at `timestamp` (Unix seconds) under `secret`:
/// `v1=` and the hex HMAC-SHA256 of `TIMESTAMP.BODY`.
pub fn signature(secret: &[u8], timestamp: u64, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
    let mut ctx = ring::hmac::Context::with_key(&key);
    ctx.update(timestamp.to_string().as_bytes());
    ctx.update(b".");
    ctx.update(body);
    format!("v1={}", hex::encode(ctx.sign().as_ref()))
}

/// How bad an event is, in PagerDuty's words.
fn severity(kind: EventKind) -> &'static str {
    match kind {
        EventKind::PoolNotEligible | EventKind::FailOpenOn => "critical",
        EventKind::MemberDown | EventKind::EdgeStale => "error",
        _ => "warning",
    }
}

/// Our event as JSON (the webhook body).
pub fn event_json(target: &Notifier, event: &Event) -> Value {
    json!({
        "id": event.idempotency_key(),
        "seq": event.seq,
        "type": event.kind.as_str(),
        "at": rfc3339(event.at_ms),
        "atMs": event.at_ms,
        "recovery": event.kind.is_recovery(),
        "subject": event.subject,
        "summary": event.summary(),
        "detail": event.detail,
        "target": target.name,
    })
}

/// The POST for `event` to `target`, sent at `now_secs`.
pub fn post(target: &Notifier, event: &Event, now_secs: u64) -> Post {
    let body = match target.kind {
        NotifierKind::Webhook => event_json(target, event),
        NotifierKind::Slack => {
            let mark = if event.kind.is_recovery() {
                ":large_green_circle:"
            } else {
                ":red_circle:"
            };
            json!({
                "text": format!("{mark} {} (gslb, {})", event.summary(), rfc3339(event.at_ms)),
            })
        }
        NotifierKind::Pagerduty => {
            let routing_key = String::from_utf8_lossy(&target.secret.0).into_owned();
            if event.kind.is_recovery() {
                json!({
                    "routing_key": routing_key,
                    "event_action": "resolve",
                    "dedup_key": event.dedup_key(),
                })
            } else {
                json!({
                    "routing_key": routing_key,
                    "event_action": "trigger",
                    "dedup_key": event.dedup_key(),
                    "payload": {
                        "summary": event.summary(),
                        "source": "gslb",
                        "severity": severity(event.kind),
                        "timestamp": rfc3339(event.at_ms),
                        "component": event.subject.describe(),
                        "class": event.kind.as_str(),
                        "custom_details": event_json(target, event),
                    },
                })
            }
        }
    };
    let body = body.to_string().into_bytes();
    let mut headers = vec![
        (EVENT_HEADER, event.kind.as_str().to_owned()),
        (IDEMPOTENCY_HEADER, event.idempotency_key()),
    ];
    // PagerDuty's secret is its routing key, already in the body.
    if target.kind != NotifierKind::Pagerduty && !target.secret.is_empty() {
        headers.push((TIMESTAMP_HEADER, now_secs.to_string()));
        headers.push((
            SIGNATURE_HEADER,
            signature(&target.secret.0, now_secs, &body),
        ));
    }
    Post { body, headers }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::core::notify::Subject;
    use gslb_shared::{MemberId, NotifierId, NotifyFilter, PoolId, Secret};

    fn target(kind: NotifierKind, secret: &[u8]) -> Notifier {
        Notifier {
            id: NotifierId(1),
            name: "ops".into(),
            kind,
            url: "http://127.0.0.1:9/".into(),
            filter: NotifyFilter::default(),
            secret: Secret(secret.to_vec()),
        }
    }

    fn event(kind: EventKind) -> Event {
        Event {
            seq: 42,
            at_ms: 1_796_160_686_938,
            kind,
            subject: Subject::Member {
                id: MemberId(12),
                name: "web-1".into(),
                pool: PoolId(3),
                pool_name: "web".into(),
            },
            detail: "quorum score 0.10".into(),
        }
    }

    fn header<'a>(post: &'a Post, name: &str) -> Option<&'a str> {
        (post.headers.iter())
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn a_webhook_is_signed_over_the_timestamp_and_the_exact_body() {
        let secret = [7u8; 32];
        let post = post(
            &target(NotifierKind::Webhook, &secret),
            &event(EventKind::MemberDown),
            1_000,
        );
        let sig = header(&post, SIGNATURE_HEADER).unwrap();
        assert_eq!(header(&post, TIMESTAMP_HEADER), Some("1000"));
        // Verified independently of `signature`: ring's verify over the same message.
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &secret);
        let mut message = b"1000.".to_vec();
        message.extend_from_slice(&post.body);
        let mac = hex::decode(sig.strip_prefix("v1=").unwrap()).unwrap();
        ring::hmac::verify(&key, &message, &mac).unwrap();
        // Another body or time does not verify.
        message.push(b' ');
        assert!(ring::hmac::verify(&key, &message, &mac).is_err());
        let body: Value = serde_json::from_slice(&post.body).unwrap();
        assert_eq!(body["type"], "member_down");
        assert_eq!(body["id"], "gslb-42-1796160686938");
        assert_eq!(body["at"], "2026-12-01T21:31:26.938Z");
        assert_eq!(body["subject"]["name"], "web-1");
        assert_eq!(body["subject"]["type"], "member");
        assert_eq!(body["subject"]["poolName"], "web");
        assert_eq!(
            header(&post, IDEMPOTENCY_HEADER),
            Some("gslb-42-1796160686938")
        );
    }

    #[test]
    fn pagerduty_triggers_and_resolves_one_incident_per_member() {
        let t = target(NotifierKind::Pagerduty, b"R0UTINGKEY");
        let down: Value =
            serde_json::from_slice(&post(&t, &event(EventKind::MemberDown), 1).body).unwrap();
        let up: Value =
            serde_json::from_slice(&post(&t, &event(EventKind::MemberUp), 2).body).unwrap();
        assert_eq!(down["event_action"], "trigger");
        assert_eq!(up["event_action"], "resolve");
        assert_eq!(down["dedup_key"], "gslb/member/12/down");
        assert_eq!(down["dedup_key"], up["dedup_key"]);
        assert_eq!(down["routing_key"], "R0UTINGKEY");
        assert_eq!(down["payload"]["severity"], "error");
        assert!(
            down["payload"]["summary"]
                .as_str()
                .unwrap()
                .contains("web-1")
        );
        assert!(
            header(
                &post(&t, &event(EventKind::MemberDown), 1),
                SIGNATURE_HEADER
            )
            .is_none()
        );
    }

    #[test]
    fn slack_gets_a_line_of_text() {
        let t = target(NotifierKind::Slack, b"");
        let p = post(&t, &event(EventKind::MemberUp), 1);
        let body: Value = serde_json::from_slice(&p.body).unwrap();
        let text = body["text"].as_str().unwrap();
        assert!(text.contains("member web-1 (pool web) is up"), "{text}");
        assert!(
            header(&p, SIGNATURE_HEADER).is_none(),
            "no secret, no signature"
        );
    }
}
