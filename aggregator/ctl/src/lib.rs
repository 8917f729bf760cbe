//! `gslbctl`: every admin call as a subcommand over gRPC. `run` returns the
//! text to print, so tests can drive it without a process.

mod backup;
mod certs;
mod cluster;
mod crud;
mod dnssec;
mod explain;
mod history;
mod notifications;
mod query;
mod render;
pub mod table;
pub mod time;
mod tokens;
mod tsig;
mod zonefile;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand, ValueEnum};
use gslb_proto::pb;
use gslb_proto::pb::admin_service_client::AdminServiceClient;
use gslb_shared::*;
use serde_json::{Map, Value};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use gslb_proto::link::Link;
use gslb_shared::config::LinkTls;
use gslb_shared::defaults::{Kind, base, decode, overlay};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Output {
    /// Aligned columns.
    #[default]
    Table,
    /// JSON.
    Json,
}

/// gslbctl: operate a gslb aggregator.
#[derive(Debug, Clone, Parser)]
#[command(name = "gslbctl", version)]
pub struct Cli {
    /// Aggregator gRPC address.
    #[arg(
        long,
        global = true,
        env = "GSLB_SERVER",
        default_value = "http://127.0.0.1:7000"
    )]
    pub server: String,
    /// Output format.
    #[arg(long, short, global = true, value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// Show times in the system's time zone (`TZ`, else /etc/localtime)
    /// instead of UTC; both in RFC 3339.
    #[arg(long, global = true)]
    pub local: bool,
    /// Read from the node reached, even a follower (may be behind the
    /// leader); reads are otherwise answered by the leader, linearizably.
    #[arg(long, global = true)]
    pub stale: bool,
    /// Admin bearer token (see `gslbctl tokens create`).
    #[arg(long, global = true, env = "GSLB_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// CA that signed the aggregator's certificate, for https:// servers.
    #[arg(long, global = true, env = "GSLB_CA")]
    pub ca: Option<PathBuf>,
    /// Client certificate (role operator) for https:// servers.
    #[arg(long, global = true, env = "GSLB_CERT")]
    pub cert: Option<PathBuf>,
    /// Private key of --cert.
    #[arg(long, global = true, env = "GSLB_KEY")]
    pub key: Option<PathBuf>,
    /// Give up on a call (connecting included) after this long, e.g.
    /// `30s`, `5m`.
    #[arg(long, global = true, env = "GSLB_TIMEOUT", default_value = "30s")]
    pub timeout: humantime::Duration,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Zones.
    Zones(Crud),
    /// Record sets.
    Records(Crud),
    /// Pools (`status ID` shows eligibility and member health).
    Pools(Crud),
    /// Members of pools.
    Members(Crud),
    /// Health checks.
    Checks(Crud),
    /// Probe agents.
    Agents,
    /// DNS edges and their applied versions.
    Edges,
    /// Every pool's eligibility, healthy members, protection and fail-open,
    /// then the health engine's settings and state.
    Status,
    /// The health engine: startup gate, quarantine settings, quarantined
    /// locations.
    Engine,
    /// Pause or resume health decisions, for every pool or one pool (the
    /// operator's brake during a network incident): health is held as it
    /// is, results are still taken in. Without an action, shows the hold.
    Decisions {
        /// pause or resume.
        #[command(subcommand)]
        action: Option<DecisionsAction>,
    },
    /// A member's health log.
    Logs {
        /// Member id.
        member: u64,
        /// Most entries.
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
    /// Walk selection for a name.
    Explain {
        /// Name, e.g. www.example.com.
        name: String,
        /// A or AAAA.
        #[arg(long = "type", default_value = "A")]
        rtype: String,
        /// Client region (or address).
        #[arg(long, default_value = "")]
        client: String,
        /// Client address: its subnet for sticky steering, and its country,
        /// continent, subdivision and AS from the aggregator's --geo-mmdb files.
        #[arg(long, conflicts_with = "client")]
        client_ip: Option<std::net::IpAddr>,
    },
    /// Make the catalog match a declarative file; prints the plan.
    Apply {
        /// TOML or JSON document.
        #[arg(short, long)]
        file: PathBuf,
        /// Only plan and validate.
        #[arg(long)]
        dry_run: bool,
        /// Delete what the document leaves out (without it, a plan that
        /// deletes anything is refused).
        #[arg(long)]
        prune: bool,
        /// Refuse unless the catalog is still at this version: the one a
        /// `--dry-run` printed, so nothing changed between plan and apply.
        #[arg(long)]
        expect_version: Option<u64>,
    },
    /// Set (or clear) a member's health; only for pools whose check is `none`.
    Health {
        /// Member id.
        member: u64,
        /// up, down or clear.
        state: String,
    },
    /// Ephemeral members: register, heartbeat, deregister.
    Ephemeral {
        /// Action.
        #[command(subcommand)]
        action: EphemeralAction,
    },
    /// An aggregator cluster: status, join, remove.
    Cluster {
        /// Action.
        #[command(subcommand)]
        action: cluster::ClusterAction,
    },
    /// Make a development CA and certificates for components (local files).
    Certs(certs::CertsArgs),
    /// Zone files in and out (RFC 1035 master files).
    Zone {
        /// Action.
        #[command(subcommand)]
        action: zonefile::ZoneAction,
    },
    /// DNSSEC: sign a zone, its keys and DS, turning signing off.
    Dnssec {
        /// Action.
        #[command(subcommand)]
        action: dnssec::DnssecAction,
    },
    /// The audit log, newest first: who changed what (field by field),
    /// from where and when, refused writes included.
    Audit(history::AuditArgs),
    /// The catalog's versions: who made each and what it changed.
    History(history::AuditArgs),
    /// What changed in the catalog between two versions, field by field.
    Diff {
        /// The earlier version.
        from: u64,
        /// The later one (default: the current).
        to: Option<u64>,
    },
    /// Take the catalog back to an earlier version: prints the plan, and
    /// applies it (one write, audited) unless --dry-run. Catalog objects
    /// only: health, TSIG secrets and zone keys stay as they are.
    Rollback {
        /// The version to go back to (gslbctl history).
        version: u64,
        /// Only plan.
        #[arg(long)]
        dry_run: bool,
        /// Refuse unless the catalog is still at this version (the one
        /// --dry-run printed).
        #[arg(long)]
        expect_version: Option<u64>,
    },
    /// Notification targets (webhook, Slack, PagerDuty) and their deliveries.
    Notifications {
        /// Action.
        #[command(subcommand)]
        action: notifications::NotificationsAction,
    },
    /// TSIG keys for zone transfers to secondaries.
    Tsig {
        /// Action.
        #[command(subcommand)]
        action: tsig::TsigAction,
    },
    /// Admin tokens in a tokens file (local; the aggregator reloads it).
    Tokens {
        /// Action.
        #[command(subcommand)]
        action: tokens::TokensAction,
    },
    /// Write a consistent backup of the aggregator's state to a file.
    Backup {
        /// Where to write it (owner-only).
        #[arg(long)]
        out: PathBuf,
    },
    /// Ask a DNS server (a gslb edge) one question, as a client in
    /// `--subnet` would (EDNS Client Subnet); needs no aggregator.
    Query {
        /// Name, e.g. www.example.test.
        name: String,
        /// Record type.
        #[arg(long = "type", default_value = "A")]
        rtype: String,
        /// The DNS server, IP:PORT.
        #[arg(long = "dns", default_value = "127.0.0.1:53")]
        dns: std::net::SocketAddr,
        /// Client subnet to send, ADDRESS/PREFIX (e.g. 192.0.2.0/24).
        #[arg(long)]
        subnet: Option<String>,
        /// Ask over TCP (UDP otherwise, TCP again when truncated).
        #[arg(long)]
        tcp: bool,
        /// Only the records' data, one per line, sorted.
        #[arg(long)]
        short: bool,
    },
    /// Let every edge take this aggregator's catalog even when it is older
    /// than theirs or empty (after a restore, or an empty start on purpose).
    ResetEdges {
        /// The aggregator's current version, as `gslbctl status` or the
        /// refusing edge's /status/config shows it: confirms which catalog.
        #[arg(long)]
        confirm_version: u64,
    },
    /// Print a shell completion script.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
}

/// Pausing and resuming health decisions.
#[derive(Debug, Clone, Subcommand)]
pub enum DecisionsAction {
    /// Hold every member's health as it is (or only `--pool`'s members).
    Pause {
        /// Only this pool (id).
        #[arg(long)]
        pool: Option<u64>,
    },
    /// Let the engine decide again, at once, from the evidence it holds
    /// (every pool's global hold, or only `--pool`'s own hold).
    Resume {
        /// Only this pool (id).
        #[arg(long)]
        pool: Option<u64>,
    },
}

/// Create, read, update, delete (and status) of one kind.
#[derive(Debug, Clone, clap::Args)]
pub struct Crud {
    /// The action.
    #[command(subcommand)]
    pub action: Action,
}

/// Actions on one kind.
#[derive(Debug, Clone, Subcommand)]
pub enum Action {
    /// List (members need --pool; records take --zone).
    List {
        /// Pool id (members).
        #[arg(long)]
        pool: Option<u64>,
        /// Zone id (records).
        #[arg(long)]
        zone: Option<u64>,
    },
    /// Show one.
    Get {
        /// Id.
        id: u64,
    },
    /// Create from a TOML or JSON file (fields over the documented defaults).
    Create {
        /// File.
        #[arg(short, long)]
        file: PathBuf,
        /// Pool id (members).
        #[arg(long)]
        pool: Option<u64>,
    },
    /// Change the fields a TOML or JSON file names.
    Update {
        /// Id.
        id: u64,
        /// File.
        #[arg(short, long)]
        file: PathBuf,
        /// Refuse unless the object is still at this revision (as `get`
        /// shows it); nothing is written then.
        #[arg(long)]
        if_revision: Option<u64>,
    },
    /// Delete.
    Delete {
        /// Id.
        id: u64,
        /// Refuse unless the object is still at this revision.
        #[arg(long)]
        if_revision: Option<u64>,
    },
    /// Health status (members and pools).
    Status {
        /// Id.
        id: u64,
    },
}

/// Ephemeral member actions.
#[derive(Debug, Clone, Subcommand)]
pub enum EphemeralAction {
    /// Register from a file (needs an `ephemeral` policy).
    Register {
        /// Pool id.
        #[arg(long)]
        pool: u64,
        /// File.
        #[arg(short, long)]
        file: PathBuf,
    },
    /// Send a heartbeat.
    Heartbeat {
        /// Member id.
        id: u64,
    },
    /// Remove.
    Deregister {
        /// Member id.
        id: u64,
    },
}

/// A gslbctl failure, printed as `gslbctl: <message>`.
#[derive(Debug, thiserror::Error)]
pub enum CtlError {
    /// The server refused or failed the call.
    #[error("{}", server_message(.0))]
    Server(#[from] tonic::Status),
    /// The server could not be reached.
    #[error("cannot reach {server}: {error}")]
    Connect {
        /// Address.
        server: String,
        /// Why.
        error: String,
    },
    /// Local input is wrong.
    #[error("{0}")]
    Input(String),
}

/// A refusal's message; for a failed connection (tonic says only
/// "transport error") the causes too, e.g. the TLS alert.
fn server_message(status: &tonic::Status) -> String {
    match std::error::Error::source(status) {
        Some(source) => format!(
            "{}: {}",
            status.message(),
            gslb_shared::telemetry::error_chain(source)
        ),
        None => status.message().to_owned(),
    }
}

fn read_document(path: &Path) -> Result<String, CtlError> {
    std::fs::read_to_string(path).map_err(|e| CtlError::Input(format!("{}: {e}", path.display())))
}

fn read_object(path: &Path) -> Result<Map<String, Value>, CtlError> {
    let text = read_document(path)?;
    let value: Value = if text.trim_start().starts_with('{') {
        serde_json::from_str(&text)
            .map_err(|e| CtlError::Input(format!("{}: {e}", path.display())))?
    } else {
        toml::from_str(&text).map_err(|e| CtlError::Input(format!("{}: {e}", path.display())))?
    };
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(CtlError::Input(format!(
            "{}: must hold one object",
            path.display()
        ))),
    }
}

fn object<T: serde::de::DeserializeOwned>(
    base_value: Value,
    patch: Map<String, Value>,
    id: u64,
) -> Result<T, CtlError> {
    decode("", overlay(base_value, patch, id)).map_err(|e| CtlError::Input(e.to_string()))
}

/// Run a command; the text to print.
pub async fn run(cli: Cli) -> Result<String, CtlError> {
    time::set_zone(if cli.local {
        time::Zone::Local
    } else {
        time::Zone::Utc
    });
    if let Command::Completions { shell } = cli.command {
        let mut out = Vec::new();
        clap_complete::generate(
            shell,
            &mut <Cli as clap::CommandFactory>::command(),
            "gslbctl",
            &mut out,
        );
        return Ok(String::from_utf8_lossy(&out).into_owned());
    }
    match cli.command {
        Command::Certs(args) => return certs::run(&args),
        Command::Tokens { action } => return tokens::run(action, cli.output),
        Command::Query {
            name,
            rtype,
            dns,
            subnet,
            tcp,
            short,
        } => {
            let q = query::Question {
                name,
                rtype,
                server: dns,
                subnet,
                tcp,
                timeout: cli.timeout.into(),
            };
            // Blocking sockets, bounded by --timeout: off the runtime.
            return tokio::task::spawn_blocking(move || query::run(&q, short))
                .await
                .map_err(|e| CtlError::Input(format!("query: {e}")))?;
        }
        _ => {}
    }
    let mut server = cli.server.clone();
    let mut hops = 0;
    loop {
        match run_on(&server, cli.clone()).await {
            // A follower named the leader: the call did nothing there.
            Err(CtlError::Server(status)) if hops < MAX_HOPS => match leader_hint(&status) {
                Some(leader) => {
                    let scheme = server.split_once("://").map_or("http", |(s, _)| s);
                    server = format!("{scheme}://{leader}");
                    hops += 1;
                }
                None => return Err(CtlError::Server(status)),
            },
            other => return other,
        }
    }
}

/// Leader hints followed before giving up (a leader may move once more
/// while the call is under way).
const MAX_HOPS: usize = 3;

/// The leader a follower's refusal names.
fn leader_hint(status: &tonic::Status) -> Option<String> {
    if status.code() != tonic::Code::Unavailable {
        return None;
    }
    let leader = status.metadata().get(gslb_proto::metadata::LEADER)?;
    leader.to_str().ok().map(str::to_owned)
}

/// What every call carries: `gslb-stale` when the reader accepts a stale
/// answer, and the bearer token.
#[derive(Debug, Clone)]
pub struct CallMeta {
    stale: bool,
    link: Link,
}

impl tonic::service::Interceptor for CallMeta {
    fn call(&mut self, mut r: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if self.stale {
            r.metadata_mut().insert(
                gslb_proto::metadata::STALE,
                tonic::metadata::MetadataValue::from_static("1"),
            );
        }
        self.link.authorize(&mut r);
        Ok(r)
    }
}

/// The admin client gslbctl uses.
pub type Client = AdminServiceClient<InterceptedService<Channel, CallMeta>>;

impl Cli {
    /// The TLS files and token given on the command line.
    fn link(&self) -> Link {
        let tls = (self.ca.is_some() || self.cert.is_some()).then(|| LinkTls {
            identity: self.cert.clone().zip(self.key.clone()),
            ca: self.ca.clone(),
        });
        Link {
            tls,
            token: self.token.clone(),
        }
    }
}

/// A channel to `server`.
pub(crate) async fn channel(
    link: &Link,
    server: &str,
    deadline: std::time::Duration,
) -> Result<Channel, CtlError> {
    let connect = |error: String| CtlError::Connect {
        server: server.to_owned(),
        error,
    };
    link.endpoint(server, deadline.min(std::time::Duration::from_secs(10)))
        .map_err(|e| connect(e.to_string()))?
        // Every call ends by then (tonic answers DEADLINE_EXCEEDED).
        .timeout(deadline)
        .connect()
        .await
        .map_err(|e| connect(gslb_shared::telemetry::error_chain(&e)))
}

async fn run_on(server: &str, cli: Cli) -> Result<String, CtlError> {
    if cli.cert.is_some() != cli.key.is_some() {
        return Err(CtlError::Input("--cert and --key go together".into()));
    }
    if server.starts_with("https://") && cli.ca.is_none() {
        return Err(CtlError::Input(
            "an https:// server needs --ca (GSLB_CA): the CA of its certificate".into(),
        ));
    }
    let link = cli.link();
    let channel = channel(&link, server, *cli.timeout).await?;
    let out = cli.output;
    let meta = CallMeta {
        stale: cli.stale,
        link,
    };
    if let Command::Cluster { action } = cli.command {
        return cluster::run(channel, action, meta, out).await;
    }
    let mut c = AdminServiceClient::with_interceptor(channel, meta)
        .max_decoding_message_size(gslb_proto::MAX_MESSAGE)
        .max_encoding_message_size(gslb_proto::MAX_MESSAGE);
    match cli.command {
        Command::Zones(args) => crud::run::<Zone>(&mut c, args.action, out).await,
        Command::Zone { action } => zonefile::run(&mut c, action, out).await,
        Command::Tsig { action } => tsig::run(&mut c, action, out).await,
        Command::Notifications { action } => notifications::run(&mut c, action, out).await,
        Command::Audit(args) => history::audit(&mut c, args, false, out).await,
        Command::History(args) => history::audit(&mut c, args, true, out).await,
        Command::Diff { from, to } => history::diff(&mut c, from, to, out).await,
        Command::Rollback {
            version,
            dry_run,
            expect_version,
        } => history::rollback(&mut c, version, dry_run, expect_version, out).await,
        Command::Dnssec { action } => dnssec::run(&mut c, action, out).await,
        Command::Records(args) => crud::run::<RecordSet>(&mut c, args.action, out).await,
        Command::Pools(args) => crud::run::<Pool>(&mut c, args.action, out).await,
        Command::Members(args) => crud::run::<Member>(&mut c, args.action, out).await,
        Command::Checks(args) => crud::run::<Check>(&mut c, args.action, out).await,
        Command::Agents => Ok(render::agents(
            &c.list_agents(pb::ListRequest::default())
                .await?
                .into_inner(),
            out,
        )),
        Command::Backup { out } => backup::take(&mut c, &out).await,
        Command::ResetEdges { confirm_version } => {
            backup::reset_edges(&mut c, confirm_version).await
        }
        Command::Edges => Ok(render::edges(
            &c.list_edges(pb::ListRequest::default()).await?.into_inner(),
            out,
        )),
        Command::Status => {
            let pools = c
                .list_pools(pb::ListRequest::default())
                .await?
                .into_inner()
                .pools;
            let mut statuses = Vec::new();
            for p in &pools {
                let status = c
                    .get_pool_status(pb::IdRequest {
                        id: p.id,
                        ..Default::default()
                    })
                    .await?
                    .into_inner();
                statuses.push((p.name.clone(), view_of(&status)?));
            }
            let mut text = render::overview(&statuses, out);
            if out != Output::Json {
                // The JSON output stays the list of pools it always was;
                // `gslbctl engine -o json` gives the engine.
                let engine = c.get_engine(pb::ListRequest::default()).await?.into_inner();
                text.push('\n');
                text.push_str(&render::engine(&engine, out));
            }
            Ok(text)
        }
        Command::Engine => Ok(render::engine(
            &c.get_engine(pb::ListRequest::default()).await?.into_inner(),
            out,
        )),
        Command::Decisions { action } => {
            let engine = match action {
                None => c.get_engine(pb::ListRequest::default()).await?,
                Some(DecisionsAction::Pause { pool }) | Some(DecisionsAction::Resume { pool }) => {
                    let paused = matches!(action, Some(DecisionsAction::Pause { .. }));
                    c.set_decisions(pb::SetDecisionsRequest {
                        pool_id: pool.unwrap_or(0),
                        paused,
                    })
                    .await?
                }
            };
            Ok(render::decisions(&engine.into_inner(), out))
        }
        Command::Logs { member, limit } => {
            let log = c
                .get_health_log(pb::HealthLogRequest {
                    member_id: member,
                    limit,
                })
                .await?
                .into_inner();
            Ok(render::log(&log, out))
        }
        Command::Explain {
            name,
            rtype,
            client,
            client_ip,
        } => {
            let client = client_ip.map_or(client, |ip| ip.to_string());
            let r#type = match rtype.to_ascii_uppercase().as_str() {
                "A" => pb::RecordType::A,
                "AAAA" => pb::RecordType::Aaaa,
                other => {
                    return Err(CtlError::Input(format!(
                        "--type {other}: must be A or AAAA"
                    )));
                }
            } as i32;
            let r = c
                .explain(pb::ExplainRequest {
                    name,
                    r#type,
                    client,
                })
                .await?
                .into_inner();
            Ok(render::explain(&r, out))
        }
        Command::Apply {
            file,
            dry_run,
            prune,
            expect_version,
        } => {
            let document = read_document(&file)?;
            let r = c
                .apply_config(pb::ApplyConfigRequest {
                    document,
                    dry_run,
                    prune,
                    expect_version,
                })
                .await?
                .into_inner();
            Ok(render::plan(&r, out))
        }
        Command::Health { member, state } => {
            let health = match state.as_str() {
                "up" => pb::Health::Up,
                "down" => pb::Health::Down,
                "clear" => pb::Health::Unspecified,
                other => {
                    return Err(CtlError::Input(format!(
                        "{other}: must be up, down or clear"
                    )));
                }
            } as i32;
            let s = c
                .set_manual_health(pb::ManualHealthRequest {
                    member_id: member,
                    health,
                })
                .await?
                .into_inner();
            Ok(render::member_status(&view_of(&s)?, out))
        }
        Command::Ephemeral { action } => ephemeral(&mut c, action, out).await,
        Command::Completions { .. }
        | Command::Cluster { .. }
        | Command::Certs(_)
        | Command::Tokens { .. }
        | Command::Query { .. } => Ok(String::new()),
    }
}

fn converted<P: Clone, D: TryFrom<P, Error = gslb_shared::validate::ValidationError>>(
    items: &[P],
) -> Result<Vec<D>, CtlError> {
    items
        .iter()
        .cloned()
        .map(|p| D::try_from(p).map_err(|e| CtlError::Input(format!("server sent {e}"))))
        .collect()
}

/// A status message as its view (the server's answer is checked like any
/// peer input).
fn view_of<'a, P, V: TryFrom<&'a P, Error = gslb_shared::validate::ValidationError>>(
    p: &'a P,
) -> Result<V, CtlError> {
    V::try_from(p).map_err(|e| CtlError::Input(format!("server sent {e}")))
}

fn deleted(kind: &str, r: pb::DeleteResponse) -> String {
    format!("deleted {kind} {} (version {})\n", r.id, r.version)
}

fn no_status(kind: &str) -> CtlError {
    CtlError::Input(format!("{kind} have no status; try members or pools"))
}

pub(crate) async fn member_rows(
    c: &mut Client,
    members: Vec<pb::Member>,
) -> Result<Vec<(Member, gslb_shared::status::MemberStatusView)>, CtlError> {
    let mut rows = Vec::new();
    let single = members.len() == 1;
    for m in converted::<_, Member>(&members)? {
        let status = match c
            .get_member_status(pb::IdRequest {
                id: m.id.0,
                ..Default::default()
            })
            .await
        {
            Ok(status) => status.into_inner(),
            // Deleted since the list was read (an ephemeral member expiring):
            // it is no longer a row of the list.
            Err(status) if status.code() == tonic::Code::NotFound && !single => continue,
            Err(status) => return Err(status.into()),
        };
        rows.push((m, view_of(&status)?));
    }
    Ok(rows)
}

async fn ephemeral(
    c: &mut Client,
    action: EphemeralAction,
    out: Output,
) -> Result<String, CtlError> {
    match action {
        EphemeralAction::Register { pool, file } => {
            let mut patch = read_object(&file)?;
            patch.insert("pool".into(), pool.into());
            let m: Member = object(base(Kind::Member), patch, 0)?;
            let created = c
                .register_ephemeral(pb::Member::from(&m))
                .await?
                .into_inner();
            Ok(render::members(&member_rows(c, vec![created]).await?, out))
        }
        EphemeralAction::Heartbeat { id } => {
            let r = c
                .heartbeat(pb::IdRequest {
                    id,
                    ..Default::default()
                })
                .await?
                .into_inner();
            Ok(format!(
                "member {} {}\n",
                r.member_id,
                render::health_word(r.health)
            ))
        }
        EphemeralAction::Deregister { id } => Ok(deleted(
            "member",
            c.deregister_ephemeral(pb::IdRequest {
                id,
                ..Default::default()
            })
            .await?
            .into_inner(),
        )),
    }
}
