//! The aggregator's TLS material, reloaded when its files change: a
//! server config that requires client certificates from the named CA (gRPC),
//! one without client authentication (REST, for browsers and curl), and the
//! client config this node uses towards its peers.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use gslb_proto::link::tls;
use gslb_shared::config::LinkTls;
use rustls::ServerConfig;
use rustls::server::WebPkiClientVerifier;

use super::watch::Stamp;

/// Where the certificate, its key and the CA are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// This node's certificate chain (PEM).
    pub cert: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
    /// The CA that signs every component's certificate (PEM).
    pub ca: PathBuf,
}

/// Server configs, rebuilt when a file's modification time or size changes.
pub struct ReloadingTls {
    files: TlsFiles,
    loaded: Mutex<Loaded>,
}

struct Loaded {
    stamp: Stamp,
    mutual: Arc<ServerConfig>,
    server_only: Arc<ServerConfig>,
}

impl ReloadingTls {
    /// Load the files; an error names the file and what is wrong.
    pub fn load(files: TlsFiles) -> anyhow::Result<ReloadingTls> {
        let stamp = stamp(&files);
        let (mutual, server_only) = build(&files)?;
        Ok(ReloadingTls {
            files,
            loaded: Mutex::new(Loaded {
                stamp,
                mutual,
                server_only,
            }),
        })
    }

    /// The files.
    pub fn files(&self) -> &TlsFiles {
        &self.files
    }

    /// The configs for a connection accepted now: (gRPC with client
    /// certificates, REST without). Changed files are loaded first; if they
    /// do not load (half-replaced, key not matching), the previous configs
    /// stay and the error is logged once per change.
    pub fn current(&self) -> (Arc<ServerConfig>, Arc<ServerConfig>) {
        let now = stamp(&self.files);
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if now != loaded.stamp {
            loaded.stamp = now;
            match build(&self.files) {
                Ok((mutual, server_only)) => {
                    loaded.mutual = mutual;
                    loaded.server_only = server_only;
                    tracing::info!(cert = %self.files.cert.display(), "TLS certificate, key and CA reloaded");
                }
                Err(e) => tracing::error!(
                    error = format!("{e:#}"),
                    "TLS files changed but do not load; still using the previous ones"
                ),
            }
        }
        (loaded.mutual.clone(), loaded.server_only.clone())
    }
}

impl TlsFiles {
    /// The same files as a client's link settings: this node presents its
    /// own certificate to its peers and trusts the same CA.
    pub fn as_link(&self) -> LinkTls {
        LinkTls {
            identity: Some((self.cert.clone(), self.key.clone())),
            ca: Some(self.ca.clone()),
        }
    }
}

fn stamp(files: &TlsFiles) -> Stamp {
    super::watch::stamp(&[&files.cert, &files.key, &files.ca])
}

fn build(files: &TlsFiles) -> anyhow::Result<(Arc<ServerConfig>, Arc<ServerConfig>)> {
    let chain = tls::read_chain(&files.cert)?;
    let key = tls::read_key(&files.key)?;
    let roots = tls::read_roots(&files.ca)?;
    let verifier = WebPkiClientVerifier::builder(Arc::new(roots))
        .build()
        .context("tls-ca: building the client verifier")?;
    let mut mutual = ServerConfig::builder()
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain.clone(), key.clone_key())
        .with_context(|| format!("tls-key {} does not match tls-cert", files.key.display()))?;
    mutual.alpn_protocols = vec![b"h2".to_vec()];
    let mut server_only = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .with_context(|| format!("tls-key {} does not match tls-cert", files.key.display()))?;
    server_only.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok((Arc::new(mutual), Arc::new(server_only)))
}
