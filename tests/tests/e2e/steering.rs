//! Steering through the mesh: round-robin when a record names none
//! (seed 002), and sticky answers that stay with a client subnet, asked
//! with dig from the edge.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;

use gslb_e2e::catalog::{ZONE, member, pool};
use gslb_e2e::dns::short;
use gslb_e2e::local::LocalMesh;

/// Pool `web` of six members with no active check (up unless set down),
/// `rr.example.test` without steering and `sticky.example.test` sticky
/// with firstN 1; the member at `disabled`, if any, is disabled.
fn config(disabled: Option<&str>) -> String {
    let members: Vec<String> = (1..=6)
        .map(|i| {
            let addr: SocketAddr = format!("127.0.20.{i}:80").parse().unwrap();
            let off = disabled == Some(addr.ip().to_string().as_str());
            member(
                &format!("web-{i}"),
                addr,
                if off { "enabled = false" } else { "" },
            )
        })
        .collect();
    format!(
        "{ZONE}\n[[check]]\nname = \"none\"\nprobe = {{ type = \"none\" }}\ninterval = \"10s\"\ntimeout = \"1s\"\n{}\n[[record]]\nzone = \"example.test\"\nname = \"rr.example.test\"\ntype = \"A\"\ndynamic = {{ pools = [\"web\"], firstN = 1 }}\n\n[[record]]\nzone = \"example.test\"\nname = \"sticky.example.test\"\ntype = \"A\"\ndynamic = {{ steering = \"sticky\", pools = [\"web\"], firstN = 1 }}\n",
        pool("web", Some("none"), "", &members)
    )
}

#[test]
fn records_without_steering_rotate_and_sticky_ones_keep_each_subnet() {
    let mesh = LocalMesh::start("e2e-steering", &config(None), &[("fra1", "eu")]);
    // Round-robin: six queries in a row see every member.
    let seen: HashSet<Vec<String>> = (0..6)
        .map(|_| short(None, mesh.dns, &["rr.example.test", "A"]))
        .collect();
    assert_eq!(seen.len(), 6, "{seen:?}");
    // Sticky: each ECS subnet keeps its member over repeated queries, and
    // the subnets spread over the members.
    let mut first: HashMap<u32, Vec<String>> = HashMap::new();
    for round in 0..3 {
        for subnet in 0..24u32 {
            let ecs = format!("+subnet=198.51.{subnet}.0/24");
            let got = short(None, mesh.dns, &["sticky.example.test", "A", &ecs]);
            assert_eq!(got.len(), 1, "{got:?}");
            let kept = first.entry(subnet).or_insert_with(|| got.clone());
            assert_eq!(*kept, got, "subnet {subnet} moved in round {round}");
        }
    }
    let spread: HashSet<_> = first.values().collect();
    assert!(spread.len() >= 3, "{spread:?}");
    // Taking a member out moves only its own subnets.
    let gone = first[&0][0].clone();
    mesh.apply(&config(Some(&gone)));
    for (subnet, before) in &first {
        let ecs = format!("+subnet=198.51.{subnet}.0/24");
        let now = short(None, mesh.dns, &["sticky.example.test", "A", &ecs]);
        if before[0] != gone {
            assert_eq!(
                &now, before,
                "subnet {subnet} moved though its member stayed"
            );
        } else {
            assert_ne!(now[0], gone);
        }
    }
}
