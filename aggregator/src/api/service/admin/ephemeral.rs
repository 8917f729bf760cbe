//! Ephemeral members' heartbeats: unary ones, and the connection-kept
//! registration (seed 004), whose stream heartbeats the member while it
//! is open. When the stream closes (the client closes it, stops reading,
//! or the connection breaks) the member is deleted at once: seed 004's
//! release event, not a wait for its timeouts. Each registration creates
//! its member (names are unique in a pool), so a stream is the only one
//! holding its member.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use gslb_proto::pb;
use gslb_shared::{MemberId, MemberKind};
use tokio_stream::Stream;
use tonic::Status;

use crate::api::service::{Service, now};
use crate::core::catalog::{ObjectRef, Op};
use gslb_engine::Input;

/// The states a connection-kept registration streams back.
pub type StateStream = Pin<Box<dyn Stream<Item = Result<pb::EphemeralState, Status>> + Send>>;

/// One heartbeat; the member's health after it.
pub async fn beat(service: &Service, member: MemberId) -> Result<i32, Status> {
    let health = service
        .call(move |c| {
            c.step(Input::Heartbeat(member), now())?;
            Ok::<_, Status>(c.engine().member_status(member, now()).map(|s| s.health))
        })
        .await?;
    Ok(gslb_proto::convert::health_to_pb(health.unwrap_or_default()) as i32)
}

/// Keep `member` heartbeated while `inbound` is open: every
/// `heartbeatInterval` from here, and on each message the client sends
/// (answered with the member's state). Ends on the client's close, an
/// error, a second registration, or the member's deletion.
pub fn keep(
    service: Arc<Service>,
    member: MemberId,
    mut inbound: tonic::Streaming<pb::EphemeralKeepalive>,
) -> StateStream {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let interval = service
        .view()
        .catalog()
        .members
        .get(&member)
        .and_then(|m| match m.kind {
            MemberKind::Ephemeral(p) => Some(p.heartbeat_interval),
            MemberKind::Persistent => None,
        })
        .unwrap_or(Duration::from_secs(5));
    let who = crate::api::caller::current();
    tokio::spawn(async move {
        let state = |health| pb::EphemeralState {
            member_id: member.0,
            health,
        };
        let mut health = beat(&service, member).await;
        tracing::info!(%member, interval_ms = interval.as_millis() as u64, "connection-kept ephemeral member registered");
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
        let why = loop {
            match health {
                Ok(h) => {
                    if tx.send(Ok(state(h))).await.is_err() {
                        break "the client stopped reading";
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    break "the member is gone";
                }
            }
            // Beat on the clock; a client message beats and is answered.
            health = loop {
                tokio::select! {
                    _ = ticker.tick() => {
                        if let Err(e) = beat(&service, member).await {
                            break Err(e);
                        }
                    }
                    message = inbound.message() => {
                        break match message {
                            Ok(Some(pb::EphemeralKeepalive { msg: Some(pb::ephemeral_keepalive::Msg::Heartbeat(_)) })) => beat(&service, member).await,
                            Ok(Some(_)) => Err(Status::invalid_argument("register: only the first message registers; later ones are heartbeats")),
                            Ok(None) | Err(_) => Err(Status::cancelled("closed")),
                        };
                    }
                }
            };
            if matches!(&health, Err(e) if e.code() == tonic::Code::Cancelled) {
                break "the client closed the stream";
            }
        };
        if why == "the member is gone" {
            tracing::info!(%member, why, "connection-kept ephemeral member's stream ended");
            return;
        }
        // Released with its connection (seed 004), as the stream's caller.
        let delete = service.write_one(Op::Delete(ObjectRef::Member(member)));
        let deleted = match who {
            Some(by) => crate::api::caller::scoped(by, delete).await,
            None => delete.await,
        };
        match deleted {
            Ok(_) => {
                tracing::info!(%member, why, "connection-kept ephemeral member released: deleted with its stream")
            }
            Err(e) => {
                tracing::warn!(%member, why, error = %e, "connection-kept ephemeral member not deleted; its timeouts run")
            }
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}
