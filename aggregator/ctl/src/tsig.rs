//! `gslbctl tsig`: TSIG keys that secondaries sign zone transfers with.
//! The secret is printed once, by `create`; nothing shows it again.

use gslb_proto::pb;
use gslb_shared::Secret;

use crate::table;
use crate::{Client, CtlError, Output};

/// TSIG key actions.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum TsigAction {
    /// Create a key (HMAC-SHA256). Without `--secret` the aggregator
    /// generates 32 random bytes; the secret is printed this once.
    Create {
        /// The key's name, the same on the secondary (e.g.
        /// transfer.example.com).
        name: String,
        /// A secret to use instead (base64, 16 to 64 bytes), e.g. one a
        /// secondary already has.
        #[arg(long)]
        secret: Option<String>,
    },
    /// List keys (names only).
    List,
    /// Delete a key by name (refused while a zone names it).
    Delete {
        /// The key's name.
        name: String,
    },
}

/// Run a TSIG key action.
pub async fn run(c: &mut Client, action: TsigAction, out: Output) -> Result<String, CtlError> {
    match action {
        TsigAction::Create { name, secret } => {
            let secret = match secret {
                Some(text) => {
                    Secret::from_base64(&text)
                        .map_err(|e| CtlError::Input(format!("--secret {e}")))?
                        .0
                }
                None => Vec::new(),
            };
            let key = c
                .create_tsig_key(pb::TsigKey {
                    id: 0,
                    name,
                    algorithm: "hmac-sha256".into(),
                    secret,
                    ..Default::default()
                })
                .await?
                .into_inner();
            let secret = Secret(key.secret).to_base64();
            Ok(match out {
                Output::Json => serde_json::json!({
                    "id": key.id, "name": key.name, "algorithm": key.algorithm, "secret": secret,
                })
                .to_string(),
                Output::Table => format!(
                    "created TSIG key {} ({}, id {})\nsecret: {secret}\n\
                     this is the only time the secret is shown; configure the secondary with it, e.g. for Knot:\n  \
                     key:\n    - id: {}\n      algorithm: hmac-sha256\n      secret: {secret}\n",
                    key.name, key.algorithm, key.id, key.name
                ),
            })
        }
        TsigAction::List => {
            let keys = c
                .list_tsig_keys(pb::ListRequest::default())
                .await?
                .into_inner()
                .keys;
            Ok(match out {
                Output::Json => serde_json::Value::Array(
                    keys.iter()
                        .map(|k| serde_json::json!({"id": k.id, "name": k.name, "algorithm": k.algorithm}))
                        .collect(),
                )
                .to_string(),
                Output::Table => table::render(
                    &["ID", "NAME", "ALGORITHM"],
                    &keys
                        .iter()
                        .map(|k| vec![k.id.to_string(), k.name.clone(), k.algorithm.clone()])
                        .collect::<Vec<_>>(),
                ),
            })
        }
        TsigAction::Delete { name } => {
            let wanted = name.trim_end_matches('.').to_ascii_lowercase();
            let keys = c
                .list_tsig_keys(pb::ListRequest::default())
                .await?
                .into_inner()
                .keys;
            let key = keys
                .iter()
                .find(|k| k.name == wanted)
                .ok_or_else(|| CtlError::Input(format!("no TSIG key is named {name}")))?;
            c.delete_tsig_key(pb::IdRequest {
                id: key.id,
                ..Default::default()
            })
            .await?;
            Ok(format!("deleted TSIG key {} (id {})\n", key.name, key.id))
        }
    }
}
