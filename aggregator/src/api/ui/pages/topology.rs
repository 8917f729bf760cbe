//! The topology canvas (seed 000): zones → records → pools (with their
//! check) → members, every member a node whose label and colour follow its
//! live state, every pool with its badges; and the member slide-over.

use std::collections::BTreeSet;

use axum::Extension;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::response::Response;
use gslb_shared::{Catalog, Pool, PoolId, RecordData, RecordSet};

use crate::core::catalog::{CatalogState, ObjectRef};
use maud::{Markup, html};

use super::super::Ui;
use super::super::auth::Caller;
use super::super::live::{self, Frame, MemberLive, PoolLive};
use crate::api::service::off_worker;

/// Above this many members a pool's member list is drawn only when the
/// pool is opened (and search and filters ask the server which pools
/// match): the page never holds 100,000 nodes at once.
pub const LAZY_ABOVE: usize = 2_000;

/// Pools a find returns at most; the rest are counted.
pub const MAX_FOUND_POOLS: usize = 200;

/// Above this many members the pools start collapsed (search opens the
/// ones that match).
pub const COLLAPSE_ABOVE: usize = 200;

/// `GET /ui/`.
pub async fn page(
    State(ui): State<std::sync::Arc<Ui>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    let canvas = canvas(&ui, caller.scope.clone()).await;
    let view = ui.service.view();
    let hold = view.state().hold.clone();
    let regions = regions(view.catalog(), caller.scope.as_deref());
    super::page(
        &caller,
        "Topology",
        "/ui/",
        html! {
            div.toolbar role="search" {
                label for="search" { "Find a member" }
                input #search type="search" placeholder="name or address" autocomplete="off";
                label for="state-filter" { "Show" }
                select #state-filter {
                    option value="" { "every member" }
                    option value="problems" { "only problems" }
                    @for state in ["healthy", "warming", "unhealthy", "disabled", "unknown"] {
                        option value=(state) { (state) }
                    }
                }
                label for="region-filter" { "Region" }
                select #region-filter {
                    option value="" { "every region" }
                    @for region in &regions { option value=(region) { (region) } }
                    option value="-" { "no region" }
                }
                span #shown.small role="status" {}
                button #expand-all type="button" { "Expand all" }
                button #collapse-all type="button" { "Collapse all" }
                span #live role="status" aria-live="polite" { "connecting…" }
            }
            @if caller.scope.is_none() {
                div.incident {
                    "Health decisions: "
                    strong #decisions-state data-paused=(hold.all_since_ms.is_some()) {
                        @match hold.all_since_ms {
                            Some(at) => { "paused for every pool since " time datetime=(super::rfc3339(at)) { (super::rfc3339(at)) } }
                            None => { "on" }
                        }
                    }
                    " "
                    button.operates.danger #decisions-toggle type="button" {
                        @if hold.all_since_ms.is_some() { "Resume decisions for every pool" } @else { "Pause decisions for every pool" }
                    }
                }
            }
            div.bulk-bar {
                button.writes #select-mode type="button" aria-pressed="false" { "Select members" }
                div #bulk role="region" aria-label="Change the selected members" hidden {
                    span #bulk-count { "0 selected" }
                    " "
                    label for="bulk-action" { "Change" }
                    " "
                    select #bulk-action {
                        option value="disable" { "disable" }
                        option value="enable" { "enable" }
                        option value="weight" { "set weight" }
                        option value="delete" { "delete" }
                    }
                    span #bulk-weight-field hidden {
                        " " label for="bulk-weight" { "Weight" } " "
                        input #bulk-weight type="text" inputmode="numeric" autocomplete="off";
                    }
                    " " button #bulk-plan type="button" { "Show plan" }
                    " " button #bulk-clear type="button" { "Clear selection" }
                    p.form-error #bulk-error role="alert" {}
                    div #bulk-result hidden {
                        h2 #bulk-heading {}
                        ul #bulk-lines {}
                        div.field #bulk-typed-field hidden {
                            label #bulk-typed-label for="bulk-typed" {}
                            input #bulk-typed type="text" autocomplete="off";
                        }
                        button.writes.danger #bulk-apply type="button" disabled { "Apply" }
                    }
                }
            }
            p.legend {
                span.state.healthy { "healthy" } " "
                span.state.warming { "warming X/N" } " "
                span.state.unhealthy { "unhealthy" } " "
                span.state.disabled { "disabled" } " "
                span.state.unknown { "unknown" } " "
                span.mark { "w0" } " weight 0 · "
                span.mark { "backup" } " backup member"
            }
            div #topology { (canvas) }
            (slide_over())
        },
    )
}

/// The members' regions a caller limited to `scope` may see, sorted.
fn regions(catalog: &Catalog, scope: Option<&crate::core::scope::Scope>) -> BTreeSet<String> {
    (super::seen(catalog, scope).members.values())
        .filter_map(|m| m.region.as_ref().map(ToString::to_string))
        .collect()
}

/// `GET /ui/topology`: the canvas alone, fetched again when the catalog's
/// shape changes.
pub async fn fragment(
    State(ui): State<std::sync::Arc<Ui>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    super::fragment(canvas(&ui, caller.scope).await)
}

/// The canvas; a caller limited to `scope` sees its zones and pools only.
async fn canvas(ui: &Ui, scope: Option<std::sync::Arc<crate::core::scope::Scope>>) -> Markup {
    let scoped = scope.is_some();
    with_frame(ui, scope, move |catalog, view, frame| {
        html! {
            div.canvas data-generation=(view.catalog_generation()) data-shape=(shape(view.state(), catalog)) data-lazy=(catalog.members.len() > LAZY_ABOVE) {
                (render(catalog, view.state(), frame, scoped, &view.state().hold.pools.keys().copied().collect()))
            }
        }
    })
    .await
}

/// Run `f` off the runtime's workers over the caller's part of the
/// catalog (`scope`'s, or all), the view and the live frame of now.
async fn with_frame<R: Send + 'static>(
    ui: &Ui,
    scope: Option<std::sync::Arc<crate::core::scope::Scope>>,
    f: impl FnOnce(&Catalog, &crate::core::control::View, &Frame) -> R + Send + 'static,
) -> R {
    let (view, status) = ui.service.status_view().await;
    off_worker(move || {
        let briefs = live::briefs(&view, status);
        let frame = live::frame(&view, &briefs);
        let catalog = super::seen(view.catalog(), scope.as_deref());
        f(&catalog, &view, &frame)
    })
    .await
}

/// Pool names, comma-separated.
fn pool_names(catalog: &Catalog, pools: &[PoolId]) -> String {
    pools
        .iter()
        .map(|p| {
            catalog
                .pools
                .get(p)
                .map_or_else(|| format!("pool {}", p.0), |x| x.name.clone())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The pools a record answers from, in order, without repeats.
fn record_pools(record: &RecordSet) -> Vec<PoolId> {
    let mut seen = BTreeSet::new();
    match &record.data {
        RecordData::Dynamic(d) => d
            .geo
            .iter()
            .flat_map(|b| b.pools.iter())
            .chain(d.pools.iter())
            .filter(|p| seen.insert(**p))
            .copied()
            .collect(),
        RecordData::Static(_) => Vec::new(),
    }
}

/// The canvas of `catalog` (only a scope's part of it when `scoped`).
/// `paused`: the pools whose decisions an operator paused one by one.
fn render(
    catalog: &Catalog,
    state: &CatalogState,
    frame: &Frame,
    scoped: bool,
    paused: &BTreeSet<PoolId>,
) -> Markup {
    let collapse = catalog.members.len() > COLLAPSE_ABOVE;
    let lazy = catalog.members.len() > LAZY_ABOVE;
    let mut attached = BTreeSet::new();
    html! {
        @if catalog.zones.is_empty() && scoped {
            p { "No zone is in this token's scope." }
        } @else if catalog.zones.is_empty() {
            p { "No zones yet. Create one on " a href="/ui/objects" { "Objects" } " or " a href="/ui/apply" { "apply a document" } "." }
        }
        @for zone in catalog.zones.values() {
            section.zone aria-label=(format!("zone {}", zone.apex)) {
                h2 { "zone " (zone.apex.to_string()) }
                ul.records {
                    @for record in catalog.records.values().filter(|r| r.zone == zone.id) {
                        li.record {
                            div.record-head {
                                span.rname { (record.name.to_string()) }
                                " " span.rtype { (record.rtype.to_string()) }
                                " " span.ttl { "ttl " (record.ttl) }
                                @match &record.data {
                                    RecordData::Static(rdata) => {
                                        " " span.static { "static: " (rdata.iter().map(|r| serde_json::to_string(r).unwrap_or_default()).collect::<Vec<_>>().join(", ")) }
                                    }
                                    RecordData::Dynamic(d) => {
                                        " " span.steering { (format!("{:?}", d.steering).to_lowercase()) @if d.first_n > 0 { ", first " (d.first_n) } }
                                        @for branch in &d.geo {
                                             "; " span.branch { "geo " (branch.keys().join(",")) " → " (pool_names(catalog, &branch.pools)) }
                                        }
                                         "; " span.branch { @if d.geo.is_empty() { "pools " } @else { "others → " } (pool_names(catalog, &d.pools)) }
                                    }
                                }
                            }
                            @let pools = record_pools(record);
                            @if !pools.is_empty() {
                                ul.pools {
                                    @for id in pools {
                                        @if let Some(pool) = catalog.pools.get(&id) {
                                            @let _ = attached.insert(id);
                                            li { (pool_node(catalog, state, pool, frame, (collapse, lazy), paused)) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        @let loose: Vec<&Pool> = catalog.pools.values().filter(|p| !attached.contains(&p.id)).collect();
        @if !loose.is_empty() {
            section.zone aria-label="pools no record uses" {
                h2 { "pools no record uses" }
                ul.pools {
                    @for pool in loose { li { (pool_node(catalog, state, pool, frame, (collapse, lazy), paused)) } }
                }
            }
        }
    }
}

fn pool_node(
    catalog: &Catalog,
    state: &CatalogState,
    pool: &Pool,
    frame: &Frame,
    (collapse, lazy): (bool, bool),
    paused: &BTreeSet<PoolId>,
) -> Markup {
    let check = pool.check.and_then(|c| catalog.checks.get(&c));
    let badges = frame.pools.get(&pool.id.0);
    let members: Vec<_> = members_of(catalog, state, pool.id).collect();
    let version = pool_version(catalog, state, pool, paused.contains(&pool.id));
    html! {
        details.pool data-pool=(pool.id.0) data-version=(version) open[!collapse] {
            summary {
                span.pname { "pool " (pool.name) }
                " " span.count { (members.len()) @if members.len() == 1 { " member" } @else { " members" } }
                " " span.check {
                    @match check {
                        Some(c) => { "check " (c.name) ": " (c.probe.protocol()) " every " (humantime::format_duration(c.interval)) }
                        None => { "no check" }
                    }
                }
                " " span.badges data-badges=(pool.id.0) { @if let Some(b) = badges { (pool_badges(b)) } }
            }
            div.pool-actions {
                a href=(format!("/ui/pools/{}", pool.id.0)) { "Probe matrix" }
                " "
                button.add-member.writes type="button" data-pool=(pool.id.0) { "Add member" }
                " "
                @let held = paused.contains(&pool.id);
                button.pool-decisions.operates type="button" data-pool=(pool.id.0) data-name=(pool.name) data-paused=(held) {
                    @if held { "Resume decisions" } @else { "Pause decisions" }
                }
            }
            @if lazy {
                ul.members data-lazy="" aria-busy="true" {}
            } @else {
            ul.members {
                @for m in members {
                    @let state = frame.members.get(&m.id.0);
                    li {
                        button type="button" data-member=(m.id.0) data-name=(m.name.to_lowercase())
                            data-address=(m.address.to_string()) data-region=(m.region.as_ref().map_or_else(String::new, ToString::to_string)) class=(format!("member {}", state.map_or("unknown", |s| s.state.word()))) {
                            span.mname { (m.name) }
                            " " span.addr { (m.address.to_string()) ":" (m.port) }
                            @if m.weight == 0 { " " span.mark title="weight 0: never chosen by weighted steering" { "w0" } }
                            @if m.backup { " " span.mark title="backup member: answers only when no primary is healthy" { "backup" } }
                            " " span.label data-label="" { (state.map_or("unknown", |s| s.label.as_str())) }
                            " " span.gate data-gate="" title="warm-up gate closed: passes it must make once it stops failing" { (state.and_then(|s| s.gate.as_deref()).unwrap_or("")) }
                            " " span.score data-score="" { (score_text(state)) }
                        }
                    }
                }
            }
            }
        }
    }
}

/// The members of `pool` that `catalog` holds (a scope's part, or all),
/// through the state's index: the catalog's own lookup reads every member
/// per pool, which at 100,000 members and 1,000 pools is 10^8 steps.
fn members_of<'a>(
    catalog: &'a Catalog,
    state: &'a CatalogState,
    pool: PoolId,
) -> impl Iterator<Item = &'a gslb_shared::Member> + 'a {
    state
        .pool_member_ids(pool)
        .filter_map(|id| catalog.members.get(&id))
}

/// A short hash of what a pool's node draws besides live state: the
/// pool, its check and its members (each by revision, so any edit of one
/// changes it) and whether its decisions are paused. A page redraws a
/// pool whose version moved, and only that pool.
fn pool_version(catalog: &Catalog, state: &CatalogState, pool: &Pool, paused: bool) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    state.revision(ObjectRef::Pool(pool.id)).hash(&mut h);
    pool.check
        .map(|c| state.revision(ObjectRef::Check(c)))
        .hash(&mut h);
    for m in members_of(catalog, state, pool.id) {
        (m.id, state.revision(ObjectRef::Member(m.id))).hash(&mut h);
    }
    paused.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// A short hash of the canvas' shape: zones and records (by revision),
/// the pools' ids and names (records name them), and whether pools start
/// collapsed and draw their members only when opened. When it moves, a page draws the whole canvas again.
fn shape(state: &CatalogState, catalog: &Catalog) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    for z in catalog.zones.keys() {
        (z, state.revision(ObjectRef::Zone(*z))).hash(&mut h);
    }
    for r in catalog.records.keys() {
        (r, state.revision(ObjectRef::Record(*r))).hash(&mut h);
    }
    for p in catalog.pools.values() {
        (p.id, &p.name).hash(&mut h);
    }
    (catalog.members.len() > COLLAPSE_ABOVE).hash(&mut h);
    (catalog.members.len() > LAZY_ABOVE).hash(&mut h);
    format!("{:016x}", h.finish())
}

/// `GET /ui/topology/manifest`: the canvas' shape and each pool's version
/// (a few bytes a pool), for a page to fetch only the pools that changed.
pub async fn manifest(
    State(ui): State<std::sync::Arc<Ui>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    let view = ui.service.view();
    let scope = caller.scope;
    let body = off_worker(move || {
        let catalog = super::seen(view.catalog(), scope.as_deref());
        let state = view.state();
        let paused = &state.hold.pools;
        let pools: serde_json::Map<String, serde_json::Value> = (catalog.pools.values())
            .map(|p| {
                let version = pool_version(&catalog, state, p, paused.contains_key(&p.id));
                (p.id.0.to_string(), serde_json::Value::String(version))
            })
            .collect();
        serde_json::json!({
            "generation": view.catalog_generation(),
            "shape": shape(state, &catalog),
            "pools": pools,
        })
    })
    .await;
    axum::Json(body).into_response()
}

/// `GET /ui/topology/pools/{id}`: one pool's node, as the canvas draws it.
pub async fn pool_fragment(
    State(ui): State<std::sync::Arc<Ui>>,
    Extension(caller): Extension<Caller>,
    axum::extract::Path(id): axum::extract::Path<u64>,
) -> Response {
    let node = with_frame(&ui, caller.scope, move |catalog, view, frame| {
        let pool = catalog.pools.get(&PoolId(id))?;
        let collapse = catalog.members.len() > COLLAPSE_ABOVE;
        let paused = view.state().hold.pools.keys().copied().collect();
        Some(pool_node(
            catalog,
            view.state(),
            pool,
            frame,
            (collapse, false),
            &paused,
        ))
    })
    .await;
    match node {
        Some(node) => super::fragment(node),
        None => (axum::http::StatusCode::NOT_FOUND, "no such pool\n").into_response(),
    }
}

/// `?q=&state=&region=` of a find.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Find {
    #[serde(default)]
    q: String,
    #[serde(default)]
    state: String,
    #[serde(default)]
    region: String,
}

/// `GET /ui/topology/find`: the pools with a member whose name or address
/// holds `q`, in `state` (`problems`: unhealthy, warming or unknown) and
/// `region` (`-`: none), as the page's own filter judges them; at most
/// [`MAX_FOUND_POOLS`], and how many matched.
pub async fn find(
    State(ui): State<std::sync::Arc<Ui>>,
    Extension(caller): Extension<Caller>,
    axum::extract::Query(f): axum::extract::Query<Find>,
) -> Response {
    let body = with_frame(&ui, caller.scope, move |catalog, _, frame| {
        let q = f.q.trim().to_lowercase();
        let mut pools = BTreeSet::new();
        let mut members = 0usize;
        for m in catalog.members.values() {
            let word = frame
                .members
                .get(&m.id.0)
                .map_or("unknown", |s| s.state.word());
            let text = q.is_empty()
                || m.name.to_lowercase().contains(&q)
                || m.address.to_string().contains(&q);
            let state = match f.state.as_str() {
                "" => true,
                "problems" => matches!(word, "unhealthy" | "warming" | "unknown"),
                other => word == other,
            };
            let region = match f.region.as_str() {
                "" => true,
                "-" => m.region.is_none(),
                other => m.region.as_ref().is_some_and(|r| r.as_str() == other),
            };
            if text && state && region {
                members += 1;
                pools.insert(m.pool.0);
            }
        }
        let matched = pools.len();
        serde_json::json!({
            "pools": pools.into_iter().take(MAX_FOUND_POOLS).collect::<Vec<_>>(),
            "matchedPools": matched,
            "matchedMembers": members,
        })
    })
    .await;
    axum::Json(body).into_response()
}

/// A member's score as its node shows it.
fn score_text(state: Option<&MemberLive>) -> String {
    match state.and_then(|s| s.score) {
        Some(s) => format!("score {}.{:02}", s / 100, s % 100),
        None => String::new(),
    }
}

/// A pool's badges (the script renders the same from events).
pub fn pool_badges(p: &PoolLive) -> Markup {
    html! {
        @if p.eligible { span.badge.ok { "eligible" } } @else { span.badge.bad { "not eligible" } }
        @if p.protected { " " span.badge.warn { "protection active" } }
        @if p.fail_open { " " span.badge.warn { "fail-open in force" } }
        @if p.using_backups { " " span.badge.warn { "using backups" } }
        @if p.paused { " " span.badge.warn { "decisions paused" } }
        " " span.tally { (tally(&p.counts)) }
    }
}

/// A pool's members by state, as its summary shows them ("2 healthy · 1
/// unhealthy"); the script writes the same.
fn tally(counts: &[u32; 5]) -> String {
    ["healthy", "warming", "unhealthy", "disabled", "unknown"]
        .iter()
        .zip(counts)
        .filter(|(_, n)| **n > 0)
        .map(|(word, n)| format!("{n} {word}"))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The member editor: every member field, each with its error line.
fn slide_over() -> Markup {
    // Numbers are text fields the script checks: a browser's number field
    // reads "abc" as empty, which must be an error, never the default.
    let text = |name: &str, label: &str, kind: &str| {
        let number = kind == "number";
        html! {
            div.field {
                label for=(format!("f-{name}")) { (label) }
                input id=(format!("f-{name}")) name=(name) type=(if number { "text" } else { kind })
                    inputmode=[number.then_some("numeric")] autocomplete="off" aria-describedby=(format!("e-{name}"));
                span.field-error id=(format!("e-{name}")) data-error-for=(name) role="alert" {}
            }
        }
    };
    let flag = |name: &str, label: &str| {
        html! {
            div.field.check {
                input id=(format!("f-{name}")) name=(name) type="checkbox" aria-describedby=(format!("e-{name}"));
                label for=(format!("f-{name}")) { (label) }
                span.field-error id=(format!("e-{name}")) data-error-for=(name) role="alert" {}
            }
        }
    };
    html! {
        div #slideover role="dialog" aria-modal="true" aria-labelledby="slideover-title" hidden {
            form #member-form novalidate {
                h2 #slideover-title { "Member" }
                p.links { a #member-log href="#" { "Health log" } " · " a #member-matrix href="#" { "Probe matrix" } " · " a #member-history href="#" { "History" } }
                (text("name", "Name", "text"))
                (text("ipAddress", "Address", "text"))
                (text("port", "Port", "number"))
                (text("weight", "Weight", "number"))
                (text("priority", "Priority", "number"))
                (text("region", "Region", "text"))
                (flag("backup", "Backup member"))
                (flag("enabled", "Enabled"))
                (text("warmupThreshold", "Warm-up threshold (cycles; 0 disables the gate)", "number"))
                (flag("rewarmAfterDown", "Warm up again after going down (rewarmAfterDown)"))
                p.form-error #member-error role="alert" {}
                div.actions {
                    button.writes #member-save type="submit" { "Save" }
                    button.writes.danger #member-delete type="button" { "Delete" }
                    button #member-close type="button" { "Close" }
                }
            }
        }
    }
}
