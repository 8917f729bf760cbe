//! Health decisions reach DNS: a member set down through gslbctl leaves
//! the edge's answers, comes back when set up, and with every member down
//! the pool's fail mode (open) answers them all.

use crate::support::*;

fn id_of(json: &str, name: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == name)
        .map(|o| o["id"].to_string())
        .unwrap_or_else(|| panic!("no {name} in {json}"))
}

#[test]
fn manual_health_changes_the_answers_and_all_down_fails_open() {
    let (_dir, agg, edge, _) = mesh("health", &[]);
    let dns = edge.dns();
    let pool = id_of(&agg.ctl(&["-o", "json", "pools", "list"]), "web");
    let members = agg.ctl(&["-o", "json", "members", "list", "--pool", &pool]);
    let (one, two) = (id_of(&members, "web-1"), id_of(&members, "web-2"));
    let answers = || short(dns, &["www.example.test"]);
    assert_eq!(answers(), ["192.0.2.1", "192.0.2.2"]);

    agg.ctl(&["health", &one, "down"]);
    wait_until(30, "web-1 out of DNS", || answers() == ["192.0.2.2"]);
    agg.ctl(&["health", &two, "down"]);
    // No healthy member: fail open answers every candidate.
    wait_until(30, "fail open", || answers() == ["192.0.2.1", "192.0.2.2"]);
    agg.ctl(&["health", &two, "up"]);
    wait_until(30, "web-2 alone", || answers() == ["192.0.2.2"]);
    agg.ctl(&["health", &one, "clear"]);
    wait_until(30, "both back", || answers() == ["192.0.2.1", "192.0.2.2"]);
}
