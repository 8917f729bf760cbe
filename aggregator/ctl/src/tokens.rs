//! `gslbctl tokens create|list|revoke`: edit a tokens file in place (the
//! aggregator reloads it). A new token is printed once; the file keeps
//! only its hash.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;

use super::table::render;
use super::{CtlError, Output};
use gslb_proto::link::tokens::{TokenEntry, TokenFile, TokenRole, TokenScope};

/// Token actions.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum TokensAction {
    /// Add a token and print it (once).
    Create {
        /// The tokens file (the aggregator's --tokens-file).
        #[arg(long)]
        file: PathBuf,
        /// A name for it (unique).
        #[arg(long)]
        name: String,
        /// read, operate (manual health, pausing decisions), write (catalog
        /// objects) or admin (TSIG keys, notifiers, DNSSEC, cluster).
        #[arg(long)]
        role: TokenRole,
        /// Limit it to this zone (by apex) and its record sets; repeat for
        /// more. With --pool as well: those zones and those pools.
        #[arg(long = "zone")]
        zones: Vec<String>,
        /// Limit it to this pool (by name) and its members; repeat for more.
        #[arg(long = "pool")]
        pools: Vec<String>,
        /// Lifetime, e.g. `90d`; unset never expires.
        #[arg(long)]
        expires: Option<String>,
    },
    /// The tokens (never their secrets).
    List {
        /// The tokens file.
        #[arg(long)]
        file: PathBuf,
    },
    /// Remove a token by id or name; it stops working at the next call.
    Revoke {
        /// The tokens file.
        #[arg(long)]
        file: PathBuf,
        /// Its id or name.
        token: String,
    },
}

/// Run a token action; the text to print.
pub fn run(action: TokensAction, out: Output) -> Result<String, CtlError> {
    let input = |e: anyhow::Error| CtlError::Input(format!("{e:#}"));
    let now = SystemTime::now();
    match action {
        TokensAction::Create {
            file,
            name,
            role,
            zones,
            pools,
            expires,
        } => {
            let ttl = expires
                .map(|e| {
                    humantime::parse_duration(&e)
                        .ok()
                        .filter(|d| *d >= Duration::from_secs(1))
                        .ok_or_else(|| {
                            CtlError::Input(format!("expires: {e:?} is not a duration like 90d"))
                        })
                })
                .transpose()?;
            let mut tokens = TokenFile::load(&file).map_err(input)?;
            let (token, entry) = tokens
                .create(&name, role, TokenScope { zones, pools }, ttl, now)
                .map_err(CtlError::Input)?;
            tokens.save(&file).map_err(input)?;
            Ok(match out {
                Output::Json => format!(
                    "{}\n",
                    json!({"id": entry.id, "name": entry.name, "role": entry.role,
                           "scope": entry.scope, "expires": entry.expires.map(time), "token": token})
                ),
                Output::Table => format!(
                    "{token}\ntoken {} ({}, role {}, scope {}) created; it is shown only now\n",
                    entry.id, entry.name, entry.role, entry.scope
                ),
            })
        }
        TokensAction::List { file } => {
            let tokens = TokenFile::load(&file).map_err(input)?;
            Ok(list(&tokens.tokens, now, out))
        }
        TokensAction::Revoke { file, token } => {
            let mut tokens = TokenFile::load(&file).map_err(input)?;
            let gone = tokens.revoke(&token).map_err(CtlError::Input)?;
            tokens.save(&file).map_err(input)?;
            Ok(format!("revoked token {} ({})\n", gone.id, gone.name))
        }
    }
}

fn time(secs: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(secs)).to_string()
}

fn list(tokens: &[TokenEntry], now: SystemTime, out: Output) -> String {
    if out == Output::Json {
        let items: Vec<_> = tokens
            .iter()
            .map(|t| {
                json!({"id": t.id, "name": t.name, "role": t.role, "scope": t.scope, "created": time(t.created),
                       "expires": t.expires.map(time), "expired": t.expired(now)})
            })
            .collect();
        return format!("{}\n", serde_json::Value::Array(items));
    }
    let rows: Vec<Vec<String>> = tokens
        .iter()
        .map(|t| {
            vec![
                t.id.clone(),
                t.name.clone(),
                t.role.to_string(),
                t.scope.to_string(),
                crate::time::at_secs(t.created),
                t.expires
                    .map_or_else(|| "never".to_owned(), crate::time::at_secs),
                if t.expired(now) { "expired" } else { "valid" }.to_owned(),
            ]
        })
        .collect();
    render(
        &["ID", "NAME", "ROLE", "SCOPE", "CREATED", "EXPIRES", "STATE"],
        &rows,
    )
}
