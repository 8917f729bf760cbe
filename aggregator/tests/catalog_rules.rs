//! The catalog's write rules: validation before change, references, deletes
//! that would orphan something, ids, versions, all-or-nothing batches.
#![allow(clippy::unwrap_used)]

use gslb_aggregator::core::catalog::*;
use gslb_shared::*;

fn zone() -> Zone {
    Zone {
        id: ZoneId(0),
        apex: DnsName::parse("example.com").unwrap(),
        soa: Soa {
            mname: DnsName::parse("ns1.example.com").unwrap(),
            rname: DnsName::parse("hostmaster.example.com").unwrap(),
            refresh: 3600,
            retry: 600,
            expire: 604_800,
            negative_ttl: 300,
        },
        ns: vec![DnsName::parse("ns1.example.com").unwrap()],
        default_ttl: 300,
        ns_ttl: None,
        transfer: Default::default(),
        dnssec: None,
    }
}

fn record(zone: ZoneId, name: &str, rtype: RecordType, data: RecordData) -> RecordSet {
    RecordSet {
        id: RecordSetId(0),
        zone,
        name: DnsName::parse(name).unwrap(),
        rtype,
        ttl: 30,
        data,
    }
}

fn dynamic(pools: &[PoolId]) -> RecordData {
    RecordData::Dynamic(DynamicRecord {
        steering: Steering::RoundRobin,
        pools: pools.to_vec(),
        geo: vec![],
        first_n: 0,
        flatten: false,
        region_locations: Default::default(),
    })
}

fn created(state: &mut CatalogState, object: Object) -> ObjectRef {
    match state.apply(Op::Create(object)).unwrap().what {
        Written::Upserted(o) => o.reference(),
        Written::Deleted(_) => unreachable!(),
    }
}

/// A zone, a check, a pool using it, a member and a dynamic record.
fn populated() -> (CatalogState, ZoneId, CheckId, PoolId, MemberId, RecordSetId) {
    let mut s = CatalogState::default();
    let ObjectRef::Zone(z) = created(&mut s, Object::Zone(zone())) else {
        unreachable!()
    };
    let ObjectRef::Check(c) = created(
        &mut s,
        Object::Check(Check::new(
            CheckId(0),
            "http",
            Probe::Http(HttpProbe::default()),
        )),
    ) else {
        unreachable!()
    };
    let mut pool = Pool::new(PoolId(0), "web");
    pool.check = Some(c);
    let ObjectRef::Pool(p) = created(&mut s, Object::Pool(pool)) else {
        unreachable!()
    };
    let ObjectRef::Member(m) = created(
        &mut s,
        Object::Member(Member::new(
            MemberId(0),
            p,
            "web-1",
            "192.0.2.1".parse().unwrap(),
            80,
        )),
    ) else {
        unreachable!()
    };
    let ObjectRef::Record(r) = created(
        &mut s,
        Object::Record(record(z, "www.example.com", RecordType::A, dynamic(&[p]))),
    ) else {
        unreachable!()
    };
    (s, z, c, p, m, r)
}

#[test]
fn creates_assign_increasing_ids_and_versions() {
    let (s, z, c, p, m, r) = populated();
    assert_eq!((z.0, c.0, p.0, m.0, r.0), (1, 2, 3, 4, 5));
    assert_eq!((s.version, s.last_id), (5, 5));
}

#[test]
fn an_invalid_object_is_refused_naming_the_field_and_nothing_changes() {
    let (mut s, _, _, p, _, _) = populated();
    let before = s.clone();
    let mut bad = Member::new(MemberId(0), p, "web-2", "192.0.2.2".parse().unwrap(), 80);
    bad.weight = 5_000_000;
    let err = s.apply(Op::Create(Object::Member(bad))).unwrap_err();
    let CatalogError::Invalid(v) = &err else {
        panic!("{err:?}")
    };
    assert!(v.names("weight"), "{err}");
    assert_eq!(s, before);
}

#[test]
fn references_must_resolve() {
    let (mut s, z, _, _, _, _) = populated();
    let orphan = Member::new(
        MemberId(0),
        PoolId(99),
        "x",
        "192.0.2.9".parse().unwrap(),
        80,
    );
    assert_eq!(
        s.apply(Op::Create(Object::Member(orphan)))
            .unwrap_err()
            .to_string(),
        "pool: pool 99 does not exist"
    );
    let mut pool = Pool::new(PoolId(0), "p");
    pool.check = Some(CheckId(77));
    assert_eq!(
        s.apply(Op::Create(Object::Pool(pool)))
            .unwrap_err()
            .to_string(),
        "check: check 77 does not exist"
    );
    let r = record(z, "api.example.com", RecordType::A, dynamic(&[PoolId(42)]));
    assert_eq!(
        s.apply(Op::Create(Object::Record(r)))
            .unwrap_err()
            .to_string(),
        "data.dynamic.pools: pool 42 does not exist"
    );
    let r = record(ZoneId(50), "api.example.com", RecordType::A, dynamic(&[]));
    assert_eq!(
        s.apply(Op::Create(Object::Record(r)))
            .unwrap_err()
            .to_string(),
        "zone: zone 50 does not exist"
    );
}

#[test]
fn one_record_set_per_name_and_type_and_cname_stands_alone() {
    let (mut s, z, _, p, _, _) = populated();
    let dup = record(z, "www.example.com", RecordType::A, dynamic(&[p]));
    assert!(
        s.apply(Op::Create(Object::Record(dup)))
            .unwrap_err()
            .to_string()
            .starts_with("name: www.example.com already has a A")
    );
    let cname = record(
        z,
        "www.example.com",
        RecordType::Cname,
        RecordData::Static(vec![Rdata::Cname(DnsName::parse("x.example.net").unwrap())]),
    );
    assert!(
        s.apply(Op::Create(Object::Record(cname)))
            .unwrap_err()
            .to_string()
            .contains("CNAME")
    );
    let txt = record(
        z,
        "www.example.com",
        RecordType::Txt,
        RecordData::Static(vec![Rdata::Txt(vec!["v=1".into()])]),
    );
    s.apply(Op::Create(Object::Record(txt))).unwrap();
}

#[test]
fn deletes_that_would_orphan_something_are_refused() {
    let (mut s, z, c, p, m, r) = populated();
    let in_use = |e: CatalogError| matches!(e, CatalogError::InUse { .. });
    assert!(in_use(s.apply(Op::Delete(ObjectRef::Zone(z))).unwrap_err()));
    assert!(in_use(
        s.apply(Op::Delete(ObjectRef::Check(c))).unwrap_err()
    ));
    let err = s.apply(Op::Delete(ObjectRef::Pool(p))).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("pool {p} is in use: member {m} belongs to it")
    );
    s.apply(Op::Delete(ObjectRef::Member(m))).unwrap();
    let err = s.apply(Op::Delete(ObjectRef::Pool(p))).unwrap_err();
    assert!(err.to_string().contains("answers from it"), "{err}");
    s.apply(Op::Delete(ObjectRef::Record(r))).unwrap();
    s.apply(Op::Delete(ObjectRef::Pool(p))).unwrap();
    s.apply(Op::Delete(ObjectRef::Check(c))).unwrap();
    s.apply(Op::Delete(ObjectRef::Zone(z))).unwrap();
    assert_eq!(s.catalog, Catalog::default());
}

#[test]
fn unknown_ids_are_not_found() {
    let (mut s, ..) = populated();
    assert_eq!(
        s.apply(Op::Delete(ObjectRef::Member(MemberId(1234))))
            .unwrap_err(),
        CatalogError::NotFound(ObjectRef::Member(MemberId(1234)))
    );
    let ghost = Pool::new(PoolId(999), "ghost");
    assert_eq!(
        s.apply(Op::Update(Object::Pool(ghost))).unwrap_err(),
        CatalogError::NotFound(ObjectRef::Pool(PoolId(999)))
    );
}

#[test]
fn the_apex_cannot_change_and_must_be_unique() {
    let (mut s, z, ..) = populated();
    let mut moved = s.catalog.zones[&z].clone();
    moved.apex = DnsName::parse("example.org").unwrap();
    assert_eq!(
        s.apply(Op::Update(Object::Zone(moved)))
            .unwrap_err()
            .to_string(),
        "apex: cannot change; create a new zone"
    );
    assert!(
        s.apply(Op::Create(Object::Zone(zone())))
            .unwrap_err()
            .to_string()
            .contains("already serves example.com")
    );
}

#[test]
fn a_batch_applies_entirely_or_not_at_all() {
    let (mut s, _, _, p, _, _) = populated();
    let before = s.clone();
    let ok = Member::new(MemberId(0), p, "web-2", "192.0.2.2".parse().unwrap(), 80);
    let bad = Member::new(
        MemberId(0),
        PoolId(404),
        "web-3",
        "192.0.2.3".parse().unwrap(),
        80,
    );
    let err = s
        .apply_all(vec![
            Op::Create(Object::Member(ok.clone())),
            Op::Create(Object::Member(bad)),
        ])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "operation 1: pool: pool 404 does not exist"
    );
    assert_eq!(s, before, "nothing from the batch stayed");
    let changes = s.apply_all(vec![Op::Create(Object::Member(ok))]).unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(s.version, before.version + 1);
}

#[test]
fn changes_serialize_for_the_store() {
    let (mut s, _, _, p, _, _) = populated();
    let change = s
        .apply(Op::Create(Object::Member(Member::new(
            MemberId(0),
            p,
            "m",
            "192.0.2.7".parse().unwrap(),
            80,
        ))))
        .unwrap();
    let json = serde_json::to_string(&change).unwrap();
    assert_eq!(serde_json::from_str::<Change>(&json).unwrap(), change);
}

#[test]
fn prepare_changes_nothing_and_commit_equals_apply() {
    let (s, _, _, p, _, _) = populated();
    let op = || {
        Op::Create(Object::Member(Member::new(
            MemberId(0),
            p,
            "web-9",
            "192.0.2.9".parse().unwrap(),
            80,
        )))
    };
    let before = s.clone();
    let prepared = s.prepare(op()).unwrap();
    assert_eq!(s, before, "prepare is read-only");
    let mut via_commit = s.clone();
    let committed = via_commit.commit(prepared);
    let mut via_apply = s.clone();
    assert_eq!(via_apply.apply(op()).unwrap(), committed);
    assert_eq!(via_commit, via_apply);
    let bad = Op::Delete(ObjectRef::Pool(p));
    assert!(s.prepare(bad).is_err());
}

#[test]
fn ids_are_the_servers_and_the_counter_never_wraps() {
    let mut s = CatalogState::default();
    // A client's id (u64::MAX once wrapped the counter to 0, the "assign
    // me one" value, and every later create failed) is refused, anywhere.
    for id in [u64::MAX, MAX_ID, 5] {
        let mut pool = Pool::new(PoolId(id), "p");
        pool.id = PoolId(id);
        let err = s.apply(Op::Create(Object::Pool(pool))).unwrap_err();
        assert!(
            err.to_string().contains("ids are assigned by the server"),
            "{err}"
        );
        assert!(
            refuse_client_ids(&[Op::Create(Object::Pool(Pool::new(PoolId(id), "p")))]).is_err()
        );
    }
    assert_eq!(s.last_id, 0);
    let ObjectRef::Pool(first) = created(&mut s, Object::Pool(Pool::new(PoolId(0), "a"))) else {
        unreachable!()
    };
    assert_eq!(first, PoolId(1));
    // The planner's reserved next id is the server's own.
    let ObjectRef::Pool(second) = created(&mut s, Object::Pool(Pool::new(PoolId(2), "b"))) else {
        unreachable!()
    };
    assert_eq!(second, PoolId(2));
    // At the top of the id space creates are refused, not wrapped.
    s.last_id = MAX_ID;
    let err = s
        .apply(Op::Create(Object::Pool(Pool::new(PoolId(0), "c"))))
        .unwrap_err();
    assert!(err.to_string().contains("every id up to"), "{err}");
    s.last_id = u64::MAX;
    assert!(
        s.apply(Op::Create(Object::Pool(Pool::new(PoolId(0), "c"))))
            .is_err()
    );
    assert_eq!(s.catalog.pools.len(), 2);
}

#[test]
fn a_parent_zone_holds_no_records_a_child_zone_would_hide() {
    let mut s = CatalogState::default();
    let ObjectRef::Zone(parent) = created(&mut s, Object::Zone(zone())) else {
        unreachable!()
    };
    let a = |name: &str, z: ZoneId| {
        record(
            z,
            name,
            RecordType::A,
            RecordData::Static(vec![Rdata::A("192.0.2.1".parse().unwrap())]),
        )
    };
    created(&mut s, Object::Record(a("x.sub.example.com", parent)));
    // The child zone would hide x.sub.example.com: refused.
    let mut child = zone();
    child.apex = DnsName::parse("sub.example.com").unwrap();
    let err = s
        .apply(Op::Create(Object::Zone(child.clone())))
        .unwrap_err();
    assert!(err.to_string().contains("would be hidden"), "{err}");
    // Without that record the child zone is fine, and the parent may not
    // write below its apex.
    let x = *s.catalog.records.keys().next().unwrap();
    s.apply(Op::Delete(ObjectRef::Record(x))).unwrap();
    let ObjectRef::Zone(child) = created(&mut s, Object::Zone(child)) else {
        unreachable!()
    };
    let err = s
        .apply(Op::Create(Object::Record(a("y.sub.example.com", parent))))
        .unwrap_err();
    assert!(err.to_string().contains("served by zone"), "{err}");
    created(&mut s, Object::Record(a("y.sub.example.com", child)));
    created(&mut s, Object::Record(a("other.example.com", parent)));

    // The parent's side of the delegation may be at the child's apex: its
    // NS set, then the DS set (answered from the parent); nothing else.
    let stat = |name: &str, rtype, data: Rdata| {
        record(parent, name, rtype, RecordData::Static(vec![data]))
    };
    let ns = Rdata::Ns(DnsName::parse("ns1.sub.example.com").unwrap());
    let ds = Rdata::Ds {
        key_tag: 7,
        algorithm: 13,
        digest_type: 2,
        digest: "ab".repeat(32),
    };
    let err = s
        .apply(Op::Create(Object::Record(stat(
            "sub.example.com",
            RecordType::Ds,
            ds.clone(),
        ))))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("create the NS set at this name first"),
        "{err}"
    );
    created(
        &mut s,
        Object::Record(stat("sub.example.com", RecordType::Ns, ns.clone())),
    );
    created(
        &mut s,
        Object::Record(stat("sub.example.com", RecordType::Ds, ds.clone())),
    );
    let err = s
        .apply(Op::Create(Object::Record(stat(
            "sub.example.com",
            RecordType::Txt,
            Rdata::Txt(vec!["x".into()]),
        ))))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("only the delegation's NS and DS sets"),
        "{err}"
    );
    // And a child zone may be created under a delegation already there.
    created(
        &mut s,
        Object::Record(stat("kid.example.com", RecordType::Ns, ns)),
    );
    created(
        &mut s,
        Object::Record(stat("kid.example.com", RecordType::Ds, ds)),
    );
    let mut kid = zone();
    kid.apex = DnsName::parse("kid.example.com").unwrap();
    created(&mut s, Object::Zone(kid));
}

#[test]
fn member_names_are_unique_within_a_pool() {
    let mut s = CatalogState::default();
    let ObjectRef::Pool(a) = created(&mut s, Object::Pool(Pool::new(PoolId(0), "a"))) else {
        unreachable!()
    };
    let ObjectRef::Pool(b) = created(&mut s, Object::Pool(Pool::new(PoolId(0), "b"))) else {
        unreachable!()
    };
    // Each create at its own endpoint, so only the name rule can refuse it.
    let port = std::cell::Cell::new(80u16);
    let m = |pool, name: &str| {
        port.set(port.get() + 1);
        Member::new(
            MemberId(0),
            pool,
            name,
            "192.0.2.1".parse().unwrap(),
            port.get(),
        )
    };
    let ObjectRef::Member(first) = created(&mut s, Object::Member(m(a, "web-1"))) else {
        unreachable!()
    };
    let err = s
        .apply(Op::Create(Object::Member(m(a, "web-1"))))
        .unwrap_err();
    assert!(
        err.to_string().contains(&format!(
            "member {first} of pool {a} is already named \"web-1\""
        )),
        "{err}"
    );
    // Issue 43 item 26: names compare case-folded and normalised: a case
    // variant, a decomposed accent or full-width letters are the same name;
    // a trailing space and look-alike scripts are refused outright.
    for same in ["WEB-1", "Web-1", "ｗｅｂ-1"] {
        let err = s.apply(Op::Create(Object::Member(m(a, same)))).unwrap_err();
        assert!(err.to_string().contains("already named"), "{same}: {err}");
    }
    created(&mut s, Object::Member(m(a, "caf\u{e9}")));
    let err = s
        .apply(Op::Create(Object::Member(m(a, "cafe\u{301}"))))
        .unwrap_err();
    assert!(err.to_string().contains("already named"), "NFD: {err}");
    for (bad, rule) in [("web-1 ", "whitespace"), ("w\u{435}b-1", "look-alike")] {
        let err = s.apply(Op::Create(Object::Member(m(a, bad)))).unwrap_err();
        assert!(err.to_string().contains(rule), "{bad:?}: {err}");
    }
    let err = s
        .apply(Op::Create(Object::Pool(Pool::new(PoolId(0), "A"))))
        .unwrap_err();
    assert!(
        err.to_string().contains("already named"),
        "pools too: {err}"
    );
    // Another pool may use the name; a rename or a delete frees it.
    created(&mut s, Object::Member(m(b, "web-1")));
    let mut renamed = s.catalog.members[&first].clone();
    renamed.name = "web-0".into();
    s.apply(Op::Update(Object::Member(renamed))).unwrap();
    created(&mut s, Object::Member(m(a, "web-1")));
    let err = s
        .apply(Op::Create(Object::Member(m(a, "web-0"))))
        .unwrap_err();
    assert!(err.to_string().contains("already named"), "{err}");
    s.apply(Op::Delete(ObjectRef::Member(first))).unwrap();
    created(&mut s, Object::Member(m(a, "web-0")));
    // A batch sees its own earlier creates.
    let batch = vec![
        Op::Create(Object::Member(m(b, "x"))),
        Op::Create(Object::Member(m(b, "x"))),
    ];
    assert!(s.apply_all(batch).is_err());
}

#[test]
fn an_endpoint_is_a_member_of_a_pool_once() {
    let mut s = CatalogState::default();
    let ObjectRef::Pool(a) = created(&mut s, Object::Pool(Pool::new(PoolId(0), "a"))) else {
        unreachable!()
    };
    let ObjectRef::Pool(b) = created(&mut s, Object::Pool(Pool::new(PoolId(0), "b"))) else {
        unreachable!()
    };
    let m = |pool, name: &str, port| {
        Member::new(MemberId(0), pool, name, "192.0.2.7".parse().unwrap(), port)
    };
    let ObjectRef::Member(first) = created(&mut s, Object::Member(m(a, "one", 80))) else {
        unreachable!()
    };
    let err = s
        .apply(Op::Create(Object::Member(m(a, "two", 80))))
        .unwrap_err();
    let CatalogError::Invalid(v) = &err else {
        panic!("{err}")
    };
    assert_eq!(v.errors[0].field, "address", "{err}");
    assert!(
        err.to_string().contains(&format!(
            "member {first} of pool {a} already has address 192.0.2.7 and port 80"
        )),
        "{err}"
    );
    // Another port, another pool, or the member itself updated: allowed.
    created(&mut s, Object::Member(m(a, "two", 81)));
    created(&mut s, Object::Member(m(b, "one", 80)));
    let mut same = s.catalog.members[&first].clone();
    same.weight = 7;
    s.apply(Op::Update(Object::Member(same))).unwrap();
    // Moving a member onto a taken endpoint is refused; a delete frees it.
    let ObjectRef::Member(third) = created(&mut s, Object::Member(m(a, "three", 82))) else {
        unreachable!()
    };
    let mut moved = s.catalog.members[&third].clone();
    moved.port = 80;
    assert!(s.apply(Op::Update(Object::Member(moved.clone()))).is_err());
    s.apply(Op::Delete(ObjectRef::Member(first))).unwrap();
    s.apply(Op::Update(Object::Member(moved))).unwrap();
    // A batch sees its own earlier creates.
    let batch = vec![
        Op::Create(Object::Member(m(b, "x", 90))),
        Op::Create(Object::Member(m(b, "y", 90))),
    ];
    assert!(s.apply_all(batch).is_err());
}

#[test]
fn delegations_refuse_hidden_data_on_every_write() {
    let mut s = CatalogState::default();
    let ObjectRef::Zone(z) = created(&mut s, Object::Zone(zone())) else {
        unreachable!()
    };
    let stat =
        |name: &str, rtype, rdata: Rdata| record(z, name, rtype, RecordData::Static(vec![rdata]));
    let ns = |target: &str| Rdata::Ns(DnsName::parse(target).unwrap());
    let ds = Rdata::Ds {
        key_tag: 7,
        algorithm: 13,
        digest_type: 2,
        digest: "ab".repeat(32),
    };
    let txt = Rdata::Txt(vec!["x".into()]);
    let glue = Rdata::A("192.0.2.53".parse().unwrap());
    let refused = |s: &mut CatalogState, r: RecordSet, rule: &str| {
        let err = s.apply(Op::Create(Object::Record(r))).unwrap_err();
        assert!(err.to_string().contains(rule), "{err}");
    };

    // DS needs its cut; the apex NS set is the zone's own.
    refused(
        &mut s,
        stat("sub.example.com", RecordType::Ds, ds.clone()),
        "create the NS set at this name first",
    );
    refused(
        &mut s,
        stat("example.com", RecordType::Ns, ns("ns9.example.com")),
        "the apex NS set is the zone's ns list",
    );

    // A cut over data it would hide is refused, naming that data.
    let www = created(
        &mut s,
        Object::Record(stat("www.sub.example.com", RecordType::Txt, txt.clone())),
    );
    refused(
        &mut s,
        stat("sub.example.com", RecordType::Ns, ns("ns1.sub.example.com")),
        "record set",
    );
    let ObjectRef::Record(www) = www else {
        unreachable!()
    };
    s.apply(Op::Delete(ObjectRef::Record(www))).unwrap();

    // Glue below, then the cut, then DS and glue at it.
    created(
        &mut s,
        Object::Record(stat("ns1.sub.example.com", RecordType::A, glue.clone())),
    );
    let ObjectRef::Record(cut) = created(
        &mut s,
        Object::Record(stat(
            "sub.example.com",
            RecordType::Ns,
            ns("ns1.sub.example.com"),
        )),
    ) else {
        unreachable!()
    };
    let ObjectRef::Record(ds_id) = created(
        &mut s,
        Object::Record(stat("sub.example.com", RecordType::Ds, ds)),
    ) else {
        unreachable!()
    };
    created(
        &mut s,
        Object::Record(stat("sub.example.com", RecordType::A, glue)),
    );

    // Nothing else at or below it.
    refused(
        &mut s,
        stat("sub.example.com", RecordType::Txt, txt.clone()),
        "would never be served",
    );
    refused(
        &mut s,
        stat("x.sub.example.com", RecordType::Txt, txt),
        "is below the delegation point sub.example.com",
    );
    refused(
        &mut s,
        stat(
            "sub.example.com",
            RecordType::Cname,
            Rdata::Cname(DnsName::parse("x.example.net").unwrap()),
        ),
        "a CNAME cannot be at the delegation point",
    );
    let pool = created(&mut s, Object::Pool(Pool::new(PoolId(0), "p")));
    let ObjectRef::Pool(pool) = pool else {
        unreachable!()
    };
    refused(
        &mut s,
        record(z, "sub.example.com", RecordType::Aaaa, dynamic(&[pool])),
        "a dynamic (pool-backed) record cannot be at the delegation point",
    );
    refused(
        &mut s,
        record(z, "w.sub.example.com", RecordType::A, dynamic(&[pool])),
        "only glue",
    );

    // The cut stays while its DS set does.
    let err = s.apply(Op::Delete(ObjectRef::Record(cut))).unwrap_err();
    assert!(err.to_string().contains("delete it first"), "{err}");
    s.apply(Op::Delete(ObjectRef::Record(ds_id))).unwrap();
    s.apply(Op::Delete(ObjectRef::Record(cut))).unwrap();
    validate::catalog(&s.catalog).unwrap();
}

fn tsig(name: &str, secret: &[u8]) -> TsigKey {
    TsigKey {
        id: TsigKeyId(0),
        name: DnsName::parse(name).unwrap(),
        algorithm: TsigAlgorithm::HmacSha256,
        secret: Secret(secret.to_vec()),
    }
}

fn error_of(state: &mut CatalogState, op: Op) -> String {
    state.apply(op).unwrap_err().to_string()
}

#[test]
fn transfer_settings_name_existing_keys_and_a_key_in_use_stays() {
    let mut s = CatalogState::default();
    let ObjectRef::Zone(z) = created(&mut s, Object::Zone(zone())) else {
        unreachable!()
    };
    let mut with = zone();
    with.id = z;
    with.transfer.allow.push(TransferPeer {
        address: "192.0.2.7".parse().unwrap(),
        key: DnsName::parse("xfr.example.com").unwrap(),
    });
    let err = error_of(&mut s, Op::Update(Object::Zone(with.clone())));
    assert!(
        err.contains("transfer.allow[0].key") && err.contains("does not exist"),
        "{err}"
    );

    // Secrets: 16 to 64 bytes; none on create is for the server to fill.
    let short = error_of(
        &mut s,
        Op::Create(Object::TsigKey(tsig("xfr.example.com", &[1; 8]))),
    );
    assert!(
        short.contains("secret") && short.contains("16 to 64"),
        "{short}"
    );
    let mut ops = vec![Op::Create(Object::TsigKey(tsig("xfr.example.com", &[])))];
    fill_secrets(&mut ops, || vec![7; GENERATED_SECRET_BYTES]);
    let ObjectRef::TsigKey(k) = s.apply(ops.remove(0)).unwrap().what.reference() else {
        unreachable!()
    };
    assert_eq!(s.catalog.tsig_keys[&k].secret.0, vec![7; 32]);
    let twice = error_of(
        &mut s,
        Op::Create(Object::TsigKey(tsig("xfr.example.com", &[2; 32]))),
    );
    assert!(twice.contains("already named"), "{twice}");

    s.apply(Op::Update(Object::Zone(with))).unwrap();
    let in_use = error_of(&mut s, Op::Delete(ObjectRef::TsigKey(k)));
    assert!(in_use.contains("transfers with it"), "{in_use}");
    let mut renamed = tsig("new.example.com", &[]);
    renamed.id = k;
    let rename = error_of(&mut s, Op::Update(Object::TsigKey(renamed)));
    assert!(rename.contains("rename it there first"), "{rename}");

    // An update without the secret keeps it; views never show it.
    let mut same = tsig("xfr.example.com", &[]);
    same.id = k;
    let change = s.apply(Op::Update(Object::TsigKey(same))).unwrap();
    assert_eq!(s.catalog.tsig_keys[&k].secret.0, vec![7; 32]);
    let Written::Upserted(object) = change.what else {
        unreachable!()
    };
    let shown = serde_json::to_string(&object.redacted()).unwrap();
    assert!(!shown.contains("secret"), "{shown}");
    assert!(!format!("{:?}", s.catalog.tsig_keys[&k]).contains("7, 7"));
}

trait Reference {
    fn reference(&self) -> ObjectRef;
}

impl Reference for Written {
    fn reference(&self) -> ObjectRef {
        match self {
            Written::Upserted(o) => o.reference(),
            Written::Deleted(r) => *r,
        }
    }
}

fn pool_named(s: &mut CatalogState, name: &str) -> PoolId {
    let ObjectRef::Pool(p) = created(s, Object::Pool(Pool::new(PoolId(0), name))) else {
        unreachable!()
    };
    p
}

fn member_at(pool: PoolId, name: &str, address: &str) -> Object {
    Object::Member(Member::new(
        MemberId(0),
        pool,
        name,
        address.parse().unwrap(),
        443,
    ))
}

fn pool_backed(pools: &[PoolId], flatten: bool, first_n: u32) -> RecordData {
    RecordData::Dynamic(DynamicRecord {
        steering: Steering::Weighted,
        pools: pools.to_vec(),
        geo: vec![],
        first_n,
        flatten,
        region_locations: Default::default(),
    })
}

#[test]
fn hostname_members_back_cname_pools_and_flattened_records_only() {
    let (mut s, z, _, ip_pool, _, _) = populated();
    let lbs = pool_named(&mut s, "lbs");
    created(&mut s, member_at(lbs, "eu", "eu-lb.cdn.example.net"));
    // A CNAME pool of hostnames, a flattened A record of the same pool.
    created(
        &mut s,
        Object::Record(record(
            z,
            "app.example.com",
            RecordType::Cname,
            pool_backed(&[lbs], false, 0),
        )),
    );
    created(
        &mut s,
        Object::Record(record(
            z,
            "example.com",
            RecordType::A,
            pool_backed(&[lbs, ip_pool], true, 0),
        )),
    );
    // A plain A record of hostnames, a CNAME pool of addresses: refused,
    // naming the member.
    let err = error_of(
        &mut s,
        Op::Create(Object::Record(record(
            z,
            "plain.example.com",
            RecordType::A,
            pool_backed(&[lbs], false, 0),
        ))),
    );
    assert!(
        err.contains("data.dynamic.pools")
            && err.contains("eu-lb.cdn.example.net")
            && err.contains("flatten: true"),
        "{err}"
    );
    let err = error_of(
        &mut s,
        Op::Create(Object::Record(record(
            z,
            "ips.example.com",
            RecordType::Cname,
            pool_backed(&[ip_pool], false, 0),
        ))),
    );
    assert!(
        err.contains("192.0.2.1") && err.contains("must be hostnames"),
        "{err}"
    );
    // A member joining a pool is held to every record the pool backs.
    let err = error_of(&mut s, Op::Create(member_at(lbs, "raw", "198.51.100.7")));
    assert!(
        err.contains("address") && err.contains("app.example.com"),
        "{err}"
    );
    let err = error_of(
        &mut s,
        Op::Create(member_at(ip_pool, "us", "us-lb.cdn.example.net")),
    );
    assert!(err.contains("www.example.com"), "{err}");
}

#[test]
fn cname_pools_answer_one_name_and_not_at_the_apex() {
    let (mut s, z, _, _, _, _) = populated();
    let lbs = pool_named(&mut s, "lbs");
    for (name, rtype, data, says) in [
        (
            "example.com",
            RecordType::Cname,
            pool_backed(&[lbs], false, 0),
            "zone apex",
        ),
        (
            "two.example.com",
            RecordType::Cname,
            pool_backed(&[lbs], false, 2),
            "must be 0 or 1",
        ),
        (
            "flat.example.com",
            RecordType::Cname,
            pool_backed(&[lbs], true, 0),
            "only an A or AAAA record is flattened",
        ),
        (
            "mx.example.com",
            RecordType::Mx,
            pool_backed(&[lbs], false, 0),
            "must be A, AAAA or CNAME",
        ),
    ] {
        let err = error_of(
            &mut s,
            Op::Create(Object::Record(record(z, name, rtype, data))),
        );
        assert!(err.contains(says), "{name}: {err}");
    }
}

#[test]
fn loops_through_our_own_names_are_refused_on_every_write() {
    let (mut s, z, _, _, _, _) = populated();
    let lbs = pool_named(&mut s, "lbs");
    let cname =
        |target: &str| RecordData::Static(vec![Rdata::Cname(DnsName::parse(target).unwrap())]);
    created(
        &mut s,
        Object::Record(record(
            z,
            "app.example.com",
            RecordType::Cname,
            pool_backed(&[lbs], false, 0),
        )),
    );
    // The pool names the record itself.
    let err = error_of(
        &mut s,
        Op::Create(member_at(lbs, "self", "app.example.com")),
    );
    assert!(
        err.contains("loop through our own names: app.example.com -> app.example.com"),
        "{err}"
    );
    // Through a static CNAME: alias -> app, and the pool names alias.
    created(
        &mut s,
        Object::Record(record(
            z,
            "alias.example.com",
            RecordType::Cname,
            cname("app.example.com"),
        )),
    );
    let err = error_of(
        &mut s,
        Op::Create(member_at(lbs, "alias", "alias.example.com")),
    );
    assert!(
        err.contains("app.example.com -> alias.example.com -> app.example.com"),
        "{err}"
    );
    // The other way round: the member first, then the CNAME that closes it.
    created(&mut s, member_at(lbs, "other", "other.example.com"));
    let err = error_of(
        &mut s,
        Op::Create(Object::Record(record(
            z,
            "other.example.com",
            RecordType::Cname,
            cname("app.example.com"),
        ))),
    );
    assert!(
        err.contains("other.example.com -> app.example.com -> other.example.com"),
        "{err}"
    );
    // A chain that ends outside is fine, and the whole catalog agrees.
    created(
        &mut s,
        Object::Record(record(
            z,
            "other.example.com",
            RecordType::Cname,
            cname("cdn.example.net"),
        )),
    );
    validate::catalog(&s.catalog).unwrap();
    // Issue 43 item 25: a wildcard CNAME whose target the wildcard itself
    // answers (`x.wc` owns nothing, so `*.wc` synthesises it) is a loop,
    // in either order of writing.
    let err = error_of(
        &mut s,
        Op::Create(Object::Record(record(
            z,
            "*.wc.example.com",
            RecordType::Cname,
            cname("x.wc.example.com"),
        ))),
    );
    assert!(
        err.contains("*.wc.example.com -> x.wc.example.com -> *.wc.example.com"),
        "{err}"
    );
    created(
        &mut s,
        Object::Record(record(
            z,
            "*.w2.example.com",
            RecordType::Cname,
            cname("y.other.example.com"),
        )),
    );
    let err = error_of(
        &mut s,
        Op::Create(Object::Record(record(
            z,
            "y.other.example.com",
            RecordType::Cname,
            cname("q.w2.example.com"),
        ))),
    );
    assert!(err.contains("makes a loop"), "{err}");
    // A target that owns records of its own is not the wildcard's.
    created(
        &mut s,
        Object::Record(record(
            z,
            "x.w3.example.com",
            RecordType::A,
            RecordData::Static(vec![Rdata::A("192.0.2.1".parse().unwrap())]),
        )),
    );
    created(
        &mut s,
        Object::Record(record(
            z,
            "*.w3.example.com",
            RecordType::Cname,
            cname("x.w3.example.com"),
        )),
    );
    validate::catalog(&s.catalog).unwrap();
}

fn new_key(algorithm: SigningAlgorithm, role: KeyRole) -> Option<SigningKey> {
    let k = gslb_shared::dnssec::ZoneKey::generate(algorithm, role.flags()).ok()?;
    Some(SigningKey::new(
        role,
        Secret(k.dnskey.public_key().clone()),
        k.secret,
        1,
    ))
}

fn signed_zone(state: &mut CatalogState, scheme: KeyScheme) -> Zone {
    let mut z = zone();
    z.dnssec = Some(ZoneSigning {
        scheme,
        ..ZoneSigning::default()
    });
    let mut ops = [Op::Create(Object::Zone(z))];
    fill_keys(&mut ops, new_key);
    let [Op::Create(object)] = ops else {
        unreachable!()
    };
    match state.apply(Op::Create(object)).unwrap().what {
        Written::Upserted(o) => match *o {
            Object::Zone(z) => z,
            _ => unreachable!(),
        },
        Written::Deleted(_) => unreachable!(),
    }
}

#[test]
fn a_signed_zone_gets_its_keys_once_and_no_write_replaces_them() {
    let mut s = CatalogState::default();
    let z = signed_zone(&mut s, KeyScheme::KskZsk);
    let keys = z.dnssec.as_ref().unwrap().keys.clone();
    let roles: Vec<KeyRole> = keys.iter().map(|k| k.role).collect();
    assert_eq!(roles, [KeyRole::Ksk, KeyRole::Zsk]);
    // A view's zone (no private keys) written back keeps the keys.
    let Object::Zone(view) = Object::Zone(z.clone()).redacted() else {
        unreachable!()
    };
    assert!(
        view.dnssec
            .as_ref()
            .unwrap()
            .keys
            .iter()
            .all(|k| k.private_key.is_empty())
    );
    let mut update = view.clone();
    update.default_ttl = 600;
    let mut ops = [Op::Update(Object::Zone(update))];
    fill_keys(&mut ops, new_key);
    let [op] = ops;
    let Written::Upserted(o) = s.apply(op).unwrap().what else {
        unreachable!()
    };
    let Object::Zone(after) = *o else {
        unreachable!()
    };
    assert_eq!(after.default_ttl, 600);
    assert_eq!(
        after.dnssec.unwrap().keys,
        keys,
        "the stored keys, not new ones"
    );
    // Keys a client sends are not taken either.
    let mut forged = z.clone();
    forged.dnssec.as_mut().unwrap().keys = vec![
        new_key(SigningAlgorithm::EcdsaP256Sha256, KeyRole::Ksk).unwrap(),
        new_key(SigningAlgorithm::EcdsaP256Sha256, KeyRole::Zsk).unwrap(),
    ];
    let Written::Upserted(o) = s.apply(Op::Update(Object::Zone(forged))).unwrap().what else {
        unreachable!()
    };
    let Object::Zone(after) = *o else {
        unreachable!()
    };
    assert_eq!(after.dnssec.unwrap().keys, keys);
}

#[test]
fn a_signed_zone_cannot_change_algorithm_nor_stop_signing_in_one_step() {
    let mut s = CatalogState::default();
    let z = signed_zone(&mut s, KeyScheme::Csk);
    let mut other = z.clone();
    other.dnssec.as_mut().unwrap().algorithm = SigningAlgorithm::Ed25519;
    let err = s.apply(Op::Update(Object::Zone(other))).unwrap_err();
    assert!(err.to_string().contains("dnssec.algorithm"), "{err}");
    let mut scheme = z.clone();
    scheme.dnssec.as_mut().unwrap().scheme = KeyScheme::KskZsk;
    let err = s.apply(Op::Update(Object::Zone(scheme))).unwrap_err();
    assert!(err.to_string().contains("dnssec.scheme"), "{err}");
    let mut off = z.clone();
    off.dnssec = None;
    let err = s.apply(Op::Update(Object::Zone(off.clone()))).unwrap_err();
    assert!(err.to_string().contains("first set dnssec.unsign"), "{err}");
    let mut unsign = z.clone();
    unsign.dnssec.as_mut().unwrap().unsign = true;
    s.apply(Op::Update(Object::Zone(unsign))).unwrap();
    s.apply(Op::Update(Object::Zone(off))).unwrap();
}

#[test]
fn a_signed_zone_without_keys_or_with_bad_settings_is_refused() {
    let mut s = CatalogState::default();
    let mut z = zone();
    z.dnssec = Some(ZoneSigning::default());
    let err = s.apply(Op::Create(Object::Zone(z.clone()))).unwrap_err();
    assert!(err.to_string().contains("dnssec.keys"), "{err}");
    let settings = z.dnssec.as_mut().unwrap();
    settings.signature_validity = 60;
    settings.keys = vec![new_key(SigningAlgorithm::EcdsaP256Sha256, KeyRole::Zsk).unwrap()];
    let err = s.apply(Op::Create(Object::Zone(z.clone()))).unwrap_err();
    assert!(
        err.to_string().contains("dnssec.signatureValidity"),
        "{err}"
    );
    assert!(
        err.to_string().contains("must hold one active csk key"),
        "{err}"
    );
    // A private key that is not the public key's.
    let settings = z.dnssec.as_mut().unwrap();
    settings.signature_validity = DEFAULT_SIGNATURE_VALIDITY;
    let mut a = new_key(SigningAlgorithm::EcdsaP256Sha256, KeyRole::Csk).unwrap();
    let b = new_key(SigningAlgorithm::EcdsaP256Sha256, KeyRole::Csk).unwrap();
    a.private_key = b.private_key;
    settings.keys = vec![a];
    let err = s.apply(Op::Create(Object::Zone(z))).unwrap_err();
    assert!(err.to_string().contains("dnssec.keys[0]"), "{err}");
}

fn patch(target: ObjectRef, fields: serde_json::Value) -> Op {
    let serde_json::Value::Object(fields) = fields else {
        unreachable!()
    };
    Op::Patch { target, fields }
}

fn member_of(s: &CatalogState, m: MemberId) -> Member {
    s.catalog.members.get(&m).unwrap().clone()
}

#[test]
fn a_patch_changes_only_its_fields_against_the_object_as_it_stands() {
    let (mut s, _, _, _, m, _) = populated();
    let r = ObjectRef::Member(m);
    s.apply(patch(r, serde_json::json!({"weight": 7}))).unwrap();
    s.apply(patch(r, serde_json::json!({"priority": 3})))
        .unwrap();
    let member = member_of(&s, m);
    assert_eq!((member.weight, member.priority), (7, 3));
    assert_eq!(member.name, "web-1");
    // null resets a field to its default.
    s.apply(patch(r, serde_json::json!({"region": "eu"})))
        .unwrap();
    s.apply(patch(r, serde_json::json!({"region": null})))
        .unwrap();
    assert_eq!(member_of(&s, m).region, None);
}

#[test]
fn a_bad_patch_names_the_field_and_changes_nothing() {
    let (mut s, _, _, _, m, _) = populated();
    let before = s.clone();
    let r = ObjectRef::Member(m);
    let err = s
        .apply(patch(r, serde_json::json!({"weight": "heavy"})))
        .unwrap_err();
    assert!(err.to_string().contains("weight"), "{err}");
    let err = s
        .apply(patch(r, serde_json::json!({"id": 99})))
        .unwrap_err();
    assert!(err.to_string().starts_with("id:"), "{err}");
    let missing = ObjectRef::Member(MemberId(999));
    let err = s
        .apply(patch(missing, serde_json::json!({"weight": 1})))
        .unwrap_err();
    assert_eq!(err, CatalogError::NotFound(missing));
    assert_eq!(s, before);
}

#[test]
fn every_object_carries_the_version_of_its_last_change() {
    let (mut s, z, c, p, m, r) = populated();
    let revision = |s: &CatalogState, x| s.revision(x).unwrap();
    assert_eq!(revision(&s, ObjectRef::Zone(z)), 1);
    assert_eq!(revision(&s, ObjectRef::Check(c)), 2);
    assert_eq!(revision(&s, ObjectRef::Pool(p)), 3);
    assert_eq!(revision(&s, ObjectRef::Member(m)), 4);
    assert_eq!(revision(&s, ObjectRef::Record(r)), 5);
    assert_eq!(s.catalog_version, 5);
    let change = s
        .apply(patch(
            ObjectRef::Member(m),
            serde_json::json!({"weight": 2}),
        ))
        .unwrap();
    assert_eq!(change.version, 6);
    assert_eq!(revision(&s, ObjectRef::Member(m)), 6);
    assert_eq!(revision(&s, ObjectRef::Pool(p)), 3, "others keep theirs");
    s.apply(Op::Delete(ObjectRef::Member(m))).unwrap();
    assert_eq!(s.revision(ObjectRef::Member(m)), None);
    assert_eq!(s.catalog_version, 7);
    // Revisions survive a round trip through JSON (snapshots, backups).
    let back: CatalogState = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
    assert_eq!(back.revisions, s.revisions);
    assert_eq!(back.catalog_version, 7);
}

#[test]
fn a_stale_precondition_is_refused_naming_the_current_revision_and_nothing_changes() {
    let (mut s, _, _, p, m, _) = populated();
    let r = ObjectRef::Member(m);
    s.apply(patch(r, serde_json::json!({"weight": 2}))).unwrap(); // revision 6
    let before = s.clone();
    let stale = [
        patch(r, serde_json::json!({"weight": 9})).guarded(Some(4)),
        Op::Update(Object::Member(member_of(&s, m))).guarded(Some(4)),
        Op::Delete(r).guarded(Some(4)),
    ];
    for op in stale {
        let err = s.apply(op).unwrap_err();
        assert_eq!(
            err,
            CatalogError::Stale {
                what: r,
                expected: 4,
                current: 6
            }
        );
        assert!(err.to_string().contains("revision 6"), "{err}");
        assert_eq!(s, before);
    }
    // A create has no revision to expect.
    let create = Op::Create(Object::Pool(Pool::new(PoolId(0), "other"))).guarded(Some(1));
    assert!(
        s.apply(create)
            .unwrap_err()
            .to_string()
            .starts_with("revision:")
    );
    // The current revision goes through, and moves it.
    s.apply(patch(r, serde_json::json!({"weight": 9})).guarded(Some(6)))
        .unwrap();
    assert_eq!(member_of(&s, m).weight, 9);
    s.apply(Op::Delete(r).guarded(Some(7))).unwrap();
    assert!(!s.exists(r));
    assert!(s.exists(ObjectRef::Pool(p)));
}

#[test]
fn what_changed_since_a_version_names_the_objects_written_after_it() {
    let (mut s, _, _, p, m, _) = populated();
    s.apply(patch(
        ObjectRef::Member(m),
        serde_json::json!({"weight": 2}),
    ))
    .unwrap();
    s.apply(patch(
        ObjectRef::Pool(p),
        serde_json::json!({"minHealthy": 1}),
    ))
    .unwrap();
    let text = s.changed_since(5, 10);
    assert_eq!(text, "member 4 (revision 6), pool 3 (revision 7)");
    assert_eq!(s.changed_since(6, 1), "pool 3 (revision 7)");
    assert!(s.changed_since(5, 1).ends_with("and 1 more"));
}

proptest::proptest! {
    /// Patches of different fields, in any interleaving, all survive:
    /// each field ends at the last value written to it.
    #[test]
    fn interleaved_patches_of_different_fields_all_survive(
        writes in proptest::collection::vec((proptest::bool::ANY, 1u32..1000), 1..60)
    ) {
        let (mut s, _, _, _, m, _) = populated();
        let r = ObjectRef::Member(m);
        let (mut weight, mut priority) = (member_of(&s, m).weight, member_of(&s, m).priority);
        for (is_weight, value) in writes {
            let fields = if is_weight {
                weight = value;
                serde_json::json!({"weight": value})
            } else {
                priority = value;
                serde_json::json!({"priority": value})
            };
            s.apply(patch(r, fields)).unwrap();
        }
        let member = member_of(&s, m);
        proptest::prop_assert_eq!((member.weight, member.priority), (weight, priority));
    }
}

mod audit_history {
    use super::*;
    use gslb_aggregator::core::audit::{self, Attribution, AuditRecord};

    /// Apply `op` to `s`, returning its audit record (as the core makes it).
    fn recorded(s: &mut CatalogState, op: Op) -> Option<AuditRecord> {
        let before = s.clone();
        let change = s.apply(op).ok()?;
        let version = change.version;
        Some(AuditRecord::accepted(
            Attribution::internal("test"),
            0,
            &before,
            &[change],
            version,
        ))
    }

    #[test]
    fn a_diff_names_each_changed_field_by_its_path() {
        let (mut s, z, _, _, m, _) = populated();
        let r = recorded(
            &mut s,
            patch(
                ObjectRef::Member(m),
                serde_json::json!({"weight": 5, "region": "eu"}),
            ),
        )
        .unwrap();
        let fields: Vec<String> =
            audit::diff(r.changes[0].before.as_ref(), r.changes[0].after.as_ref())
                .into_iter()
                .map(|f| format!("{}: {:?} -> {:?}", f.field, f.before, f.after))
                .collect();
        assert_eq!(
            fields,
            [
                r#"region: None -> Some(String("eu"))"#,
                "weight: Some(Number(100)) -> Some(Number(5))"
            ]
        );
        let r = recorded(&mut s, patch(ObjectRef::Zone(z), serde_json::json!({"soa": {"mname": "ns1.example.com", "rname": "hostmaster.example.com", "refresh": 7200, "retry": 600, "expire": 604800, "negativeTtl": 300}}))).unwrap();
        let fields: Vec<String> =
            audit::diff(r.changes[0].before.as_ref(), r.changes[0].after.as_ref())
                .into_iter()
                .map(|f| f.field)
                .collect();
        assert_eq!(fields, ["soa.refresh"]);
        // A create lists every field it set; a delete every field it had.
        let r = recorded(&mut s, Op::Delete(ObjectRef::Member(m))).unwrap();
        let fields = audit::diff(r.changes[0].before.as_ref(), None);
        assert!(
            fields
                .iter()
                .any(|f| f.field == "name" && f.after.is_none())
        );
    }

    #[test]
    fn net_changes_fold_each_object_and_drop_what_ended_as_it_began() {
        let (mut s, _, _, p, m, _) = populated();
        let mut records = Vec::new();
        records.extend(recorded(
            &mut s,
            patch(ObjectRef::Member(m), serde_json::json!({"weight": 5})),
        ));
        records.extend(recorded(
            &mut s,
            patch(ObjectRef::Member(m), serde_json::json!({"weight": 100})),
        ));
        records.extend(recorded(
            &mut s,
            patch(ObjectRef::Pool(p), serde_json::json!({"minHealthy": 2})),
        ));
        let spare = Member::new(MemberId(0), p, "spare", "192.0.2.9".parse().unwrap(), 80);
        records.extend(recorded(&mut s, Op::Create(Object::Member(spare))));
        let spare = ObjectRef::Member(MemberId(s.last_id));
        records.extend(recorded(&mut s, Op::Delete(spare)));
        let net = audit::net(&records);
        assert_eq!(net.len(), 1, "only the pool ended changed: {net:?}");
        assert_eq!(net[0].object, ObjectRef::Pool(p));
    }

    #[test]
    fn a_deleted_secret_cannot_be_restored_from_history() {
        let (mut s, _, _, _, _, _) = populated();
        let key = TsigKey {
            id: TsigKeyId(0),
            name: DnsName::parse("xfr.key").unwrap(),
            algorithm: Default::default(),
            secret: Secret(vec![7; 32]),
        };
        let mut records = Vec::new();
        records.extend(recorded(&mut s, Op::Create(Object::TsigKey(key))));
        let before = s.clone();
        let id = ObjectRef::TsigKey(TsigKeyId(s.last_id));
        records.push(recorded(&mut s, Op::Delete(id)).unwrap());
        let net = audit::net(&records[1..]);
        let err = audit::rollback_ops(&s, &net).unwrap_err();
        assert!(err.contains("secret is not kept in history"), "{err}");
        // No image in the log holds the secret.
        let text = serde_json::to_string(&records).unwrap();
        assert!(!text.contains("BwcHBwcH"), "{text}");
        drop(before);
    }

    #[derive(Debug, Clone)]
    enum Step {
        Weight(usize, u32),
        Rename(usize),
        Add(u8),
        Remove(usize),
        MinHealthy(u32),
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            (0..8usize, 0..1000u32).prop_map(|(i, w)| Step::Weight(i, w)),
            (0..8usize).prop_map(Step::Rename),
            (1..250u8).prop_map(Step::Add),
            (0..8usize).prop_map(Step::Remove),
            (1..4u32).prop_map(Step::MinHealthy),
        ]
    }

    proptest::proptest! {
        /// Any sequence of writes, rolled back from its audit records,
        /// gives the catalog it started from, exactly (ids included).
        #[test]
        fn a_rollback_restores_the_catalog_exactly(steps in proptest::collection::vec(step(), 1..40)) {
            let (mut s, _, _, p, _, _) = populated();
            let start = s.catalog.clone();
            let mut records = Vec::new();
            for (n, step) in steps.into_iter().enumerate() {
                let members: Vec<MemberId> = s.catalog.members.keys().copied().collect();
                let pick = |i: usize| members.get(i % members.len().max(1)).copied();
                let op = match step {
                    Step::Weight(i, w) => pick(i).map(|m| patch(ObjectRef::Member(m), serde_json::json!({"weight": w}))),
                    Step::Rename(i) => pick(i).map(|m| patch(ObjectRef::Member(m), serde_json::json!({"name": format!("renamed-{n}")}))),
                    Step::Add(last) => Some(Op::Create(Object::Member(Member::new(
                        MemberId(0), p, format!("add-{n}"), format!("192.0.2.{last}").parse().unwrap(), 80)))),
                    Step::Remove(i) => pick(i).map(|m| Op::Delete(ObjectRef::Member(m))),
                    Step::MinHealthy(n) => Some(patch(ObjectRef::Pool(p), serde_json::json!({"minHealthy": n}))),
                };
                // Refused writes (a name or address taken) leave no change.
                records.extend(op.and_then(|op| recorded(&mut s, op)));
            }
            let ops = audit::rollback_ops(&s, &audit::net(&records)).unwrap();
            s.apply_all(ops).unwrap();
            proptest::prop_assert_eq!(s.catalog, start);
        }
    }
}

mod scopes {
    use super::*;
    use gslb_aggregator::core::scope::Scope;

    fn scope() -> Scope {
        Scope::new("team", &["Example.COM.".into()], &["web".into()])
    }

    #[test]
    fn a_scope_sees_its_zone_records_pool_members_and_their_check_only() {
        let (mut s, z, c, p, m, r) = populated();
        let other = pool_named(&mut s, "db");
        let ObjectRef::Member(theirs) = created(&mut s, member_at(other, "db-1", "192.0.2.9"))
        else {
            unreachable!()
        };
        let scope = scope();
        for seen in [
            ObjectRef::Zone(z),
            ObjectRef::Record(r),
            ObjectRef::Pool(p),
            ObjectRef::Member(m),
            ObjectRef::Check(c),
        ] {
            assert!(scope.sees(&s.catalog, &seen), "{seen:?}");
        }
        for hidden in [ObjectRef::Pool(other), ObjectRef::Member(theirs)] {
            assert!(!scope.sees(&s.catalog, &hidden), "{hidden:?}");
        }
        let restricted = scope.restrict(&s.catalog);
        assert_eq!(restricted.pools.len(), 1);
        assert_eq!(restricted.members.len(), 1);
        assert_eq!(restricted.checks.len(), 1);
        assert_eq!(restricted.records.len(), 1);
        // A check is seen, never written.
        let check = s.object(ObjectRef::Check(c)).unwrap();
        assert!(!scope.writes(&s.catalog, &check));
    }

    proptest::proptest! {
        /// Any sequence of member moves among pools in and out of scope:
        /// a move is permitted exactly when both its pools are in scope.
        #[test]
        fn a_member_move_is_permitted_only_between_pools_in_scope(
            moves in proptest::collection::vec(0usize..4, 1..30)
        ) {
            let (mut s, _, _, web, m, _) = populated();
            let pools = [web, pool_named(&mut s, "db"), pool_named(&mut s, "cache"), web];
            let scope = scope();
            for to in moves {
                let from = member_of(&s, m).pool;
                let op = patch(ObjectRef::Member(m), serde_json::json!({"pool": pools[to].0}));
                let mut trial = s.clone();
                let change = trial.apply(op).unwrap();
                let permitted = scope.permits(&s, &trial, &[change]).is_ok();
                proptest::prop_assert_eq!(permitted, from == web && pools[to] == web);
                s = trial;
            }
        }
    }
}
