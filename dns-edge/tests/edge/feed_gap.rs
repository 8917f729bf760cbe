//! A delta that does not follow the held version makes the edge resync
//! with a full snapshot. The feed here is a test server so the test can
//! send the gap; the edge is the real binary.

use std::sync::{Arc, Mutex};

use gslb_proto::pb;
use gslb_proto::pb::edge_feed_server::{EdgeFeed, EdgeFeedServer};
use gslb_proto::pb::snapshot_update::Update;
use gslb_shared::*;
use tokio::sync::mpsc;
use tokio_stream::wrappers::{ReceiverStream, TcpListenerStream};
use tonic::{Request, Response, Status};

use crate::support::*;

#[derive(Clone, Default)]
struct Fake {
    /// Held version of each subscription, in order.
    subscribes: Arc<Mutex<Vec<u64>>>,
    /// Versions reported applied.
    applied: Arc<Mutex<Vec<u64>>>,
    /// The resubscription's full snapshot waits for this.
    release: Arc<tokio::sync::Notify>,
}

fn snapshot(version: u64) -> pb::SnapshotUpdate {
    let mut s = Snapshot {
        version,
        ..Snapshot::default()
    };
    let apex = DnsName::parse("gap.test").unwrap();
    s.catalog.zones.insert(
        ZoneId(1),
        Zone {
            id: ZoneId(1),
            apex: apex.clone(),
            soa: Soa {
                mname: apex.clone(),
                rname: apex.clone(),
                refresh: 1,
                retry: 1,
                expire: 1,
                negative_ttl: 1,
            },
            ns: vec![apex],
            default_ttl: 60,
            ns_ttl: None,
            transfer: Default::default(),
            dnssec: None,
        },
    );
    pb::SnapshotUpdate {
        published_at_ms: 1,
        update: Some(Update::Full(pb::Snapshot::from(&s))),
    }
}

#[tonic::async_trait]
impl EdgeFeed for Fake {
    type SubscribeStream = ReceiverStream<Result<pb::SnapshotUpdate, Status>>;

    async fn subscribe(
        &self,
        request: Request<pb::SubscribeRequest>,
    ) -> Result<Response<Self::SubscribeStream>, Status> {
        let held = request.into_inner().held_version;
        let nth = {
            let mut s = self.subscribes.lock().unwrap();
            s.push(held);
            s.len()
        };
        let (tx, rx) = mpsc::channel(4);
        let release = Arc::clone(&self.release);
        tokio::spawn(async move {
            if nth == 1 {
                let _ = tx.send(Ok(snapshot(1))).await;
                let gap = pb::SnapshotUpdate {
                    published_at_ms: 2,
                    update: Some(Update::Delta(pb::SnapshotDelta {
                        base_version: 5,
                        version: 6,
                        ..pb::SnapshotDelta::default()
                    })),
                };
                let _ = tx.send(Ok(gap)).await;
            } else {
                release.notified().await;
                let _ = tx.send(Ok(snapshot(7))).await;
            }
            tx.closed().await;
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn report_applied(
        &self,
        request: Request<pb::AppliedReport>,
    ) -> Result<Response<pb::AppliedAck>, Status> {
        self.applied
            .lock()
            .unwrap()
            .push(request.into_inner().version);
        Ok(Response::new(pb::AppliedAck {}))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delta_gap_triggers_a_full_resync() {
    let fake = Fake::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tonic::transport::Server::builder()
        .add_service(EdgeFeedServer::new(fake.clone()))
        .serve_with_incoming(TcpListenerStream::new(listener));
    let server = tokio::spawn(server);
    let url = format!("http://{addr}");
    let release = Arc::clone(&fake.release);
    let edge = tokio::task::spawn_blocking(move || {
        let edge = Edge::start(&["--aggregator", &url]);
        // Between the gap and the full snapshot: seed 003's out_of_sync,
        // the held version still served.
        wait_until(20, "out_of_sync", || {
            edge.get("/status/config")
                .1
                .contains("\"state\":\"out_of_sync\"")
        });
        assert!(edge.get("/status/config").1.contains("\"version\":1"));
        release.notify_one();
        edge.wait_version(7);
        assert!(
            edge.get("/status/config")
                .1
                .contains("\"state\":\"synced\"")
        );
        let soa = short(edge.dns(), &["gap.test", "SOA"]);
        (edge, soa)
    });
    let (edge, soa) = edge.await.unwrap();
    assert!(
        soa[0].contains(" 7 1 1 1 1"),
        "serving the resynced snapshot: {soa:?}"
    );
    assert_eq!(
        *fake.subscribes.lock().unwrap(),
        [0, 0],
        "the resubscription asked for a full snapshot"
    );
    assert_eq!(*fake.applied.lock().unwrap(), [1, 7]);
    assert!(edge.proc.stderr.contains("resyncing with a full snapshot"));
    drop(edge);
    server.abort();
}
