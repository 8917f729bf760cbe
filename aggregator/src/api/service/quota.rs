//! Streams held per caller identity: feed subscriptions and agent
//! sessions are long-lived and each can hold megabytes, so one certificate
//! identity may hold only a few of each, and the node only so many in all.
//! A caller without a certificate (a plain-text `--insecure` listener,
//! where nothing is authenticated anyway) counts toward the total only.

use std::sync::Arc;

use tonic::Status;

use super::Service;
use crate::core::lock;

/// Who calls: the certificate's identity, if it presented one.
pub fn caller(extensions: &tonic::Extensions) -> Option<String> {
    extensions
        .get::<crate::net::listener::Peer>()
        .and_then(|p| p.identity.as_ref())
        .map(ToString::to_string)
}

/// A limit on one kind of stream.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    /// What the stream is, as errors name it (`subscribe`, `session`).
    pub kind: &'static str,
    /// What is counted, as errors name it.
    pub what: &'static str,
    /// Most per identity.
    pub per_identity: usize,
    /// Most in all.
    pub total: usize,
}

/// One stream counted against its identity and the total; given back when
/// dropped.
#[derive(Debug)]
pub struct Held {
    service: Arc<Service>,
    keys: [String; 2],
}

/// Count a new stream of `limit.kind` by `who`, or refuse it
/// (`RESOURCE_EXHAUSTED`, naming the limit).
pub fn take(service: &Arc<Service>, limit: Limit, who: Option<&str>) -> Result<Held, Status> {
    let keys = [
        who.map_or_else(String::new, |w| format!("{}|{w}", limit.kind)),
        format!("{}|*", limit.kind),
    ];
    let who = who.unwrap_or("");
    let mut counts = lock(&service.quotas);
    let count = |k: &String| counts.get(k).copied().unwrap_or(0);
    let (mine, total) = (count(&keys[0]), count(&keys[1]));
    if !keys[0].is_empty() && mine >= limit.per_identity {
        return Err(Status::resource_exhausted(format!(
            "{}: {who} holds {mine} {}, the most one identity may",
            limit.kind, limit.what
        )));
    }
    if total >= limit.total {
        return Err(Status::resource_exhausted(format!(
            "{}: {total} {} are open, the most this aggregator serves",
            limit.kind, limit.what
        )));
    }
    for k in keys.iter().filter(|k| !k.is_empty()) {
        *counts.entry(k.clone()).or_default() += 1;
    }
    drop(counts);
    Ok(Held {
        service: Arc::clone(service),
        keys,
    })
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut counts = lock(&self.service.quotas);
        for k in &self.keys {
            if let Some(n) = counts.get_mut(k) {
                *n -= 1;
                if *n == 0 {
                    counts.remove(k);
                }
            }
        }
    }
}
