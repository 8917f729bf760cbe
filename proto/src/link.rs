//! How every part reaches an aggregator's gRPC listener: agents, edges,
//! peer aggregators and gslbctl dial through [`Link`] (scheme, client TLS
//! read at each connection so a rotated certificate needs no restart,
//! keepalive, bearer token) and long-lived streams come back through one
//! reconnect loop, [`Redial`] (address list, leader hints, backoff with
//! jitter). Who is at either end: the identity a certificate names
//! (`identity`), the development CA that issues them (`pki`) and the
//! admin token file (`tokens`).

use std::time::Duration;

use gslb_shared::config::LinkTls;
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

use crate::pb;
use crate::pb::admin_service_client::AdminServiceClient;
use crate::pb::cluster_service_client::ClusterServiceClient;

pub mod identity;
pub mod pki;
mod redial;
pub mod resolve;
pub mod tls;
pub mod tokens;

pub use redial::{Ended, Redial, Session};
pub use tls::{TlsFileError, client_config, link_config};

/// HTTP/2 pings on an idle link, so a peer that vanished without a FIN
/// (a pulled cable, a dropped NAT entry) is noticed.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
/// How long a ping may go unanswered before the link counts as dead.
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(5);

/// A link's TLS files and token.
#[derive(Debug, Clone, Default)]
pub struct Link {
    /// TLS files; `None` is plain text.
    pub tls: Option<LinkTls>,
    /// Bearer token sent with every call, if any.
    pub token: Option<String>,
}

/// An address or TLS file a connection could not be made with.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LinkError(String);

impl Link {
    /// A link with `tls`'s files, if any are set (an agent's or edge's
    /// settings), and no token.
    pub fn with_tls(tls: &LinkTls) -> Self {
        let set = tls.identity.is_some() || tls.ca.is_some();
        Self {
            tls: set.then(|| tls.clone()),
            token: None,
        }
    }

    /// `https` with TLS, `http` without.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// The URL of `address` (HOST:PORT).
    pub fn url(&self, address: &str) -> String {
        format!("{}://{address}", self.scheme())
    }

    /// An endpoint for `url`, with `timeout` to connect. TLS is used for an
    /// `https://` URL, with this link's files read now.
    pub fn endpoint(&self, url: &str, timeout: Duration) -> Result<Endpoint, LinkError> {
        let mut endpoint = Endpoint::from_shared(url.to_owned())
            .map_err(|e| LinkError(format!("{url:?}: {e}")))?
            .connect_timeout(timeout)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
            .keep_alive_timeout(KEEPALIVE_TIMEOUT);
        if url.starts_with("https://") {
            let config = match &self.tls {
                Some(tls) => link_config(tls)
                    .map_err(|e| LinkError(e.to_string()))?
                    .unwrap_or_default(),
                None => Default::default(),
            };
            endpoint = endpoint
                .tls_config(config)
                .map_err(|e| LinkError(gslb_shared::telemetry::error_chain(&e)))?;
        }
        Ok(endpoint)
    }

    /// A channel to `url`, connected within `timeout`.
    pub async fn connect(&self, url: &str, timeout: Duration) -> Result<Channel, LinkError> {
        self.endpoint(url, timeout)?
            .connect()
            .await
            .map_err(|e| LinkError(gslb_shared::telemetry::error_chain(&e)))
    }

    /// The status the node at gRPC `address` (HOST:PORT) gives of itself
    /// (asked stale, so a follower or a node outside any cluster answers
    /// too), within `timeout` for connecting and again for the call.
    pub async fn own_status(
        &self,
        address: &str,
        timeout: Duration,
    ) -> Result<pb::ClusterStatus, String> {
        let channel = self
            .endpoint(&self.url(address), timeout)
            .map_err(|e| e.to_string())?
            .timeout(timeout)
            .connect()
            .await
            .map_err(|e| gslb_shared::telemetry::error_chain(&e))?;
        let mut ask = tonic::Request::new(pb::ClusterStatusRequest {});
        ask.metadata_mut()
            .insert(crate::metadata::STALE, MetadataValue::from_static("1"));
        self.authorize(&mut ask);
        let status = ClusterServiceClient::new(channel)
            .status(ask)
            .await
            .map_err(|e| e.message().to_owned())?;
        Ok(status.into_inner())
    }

    /// Add the bearer token to `request`.
    pub fn authorize<T>(&self, request: &mut tonic::Request<T>) {
        if let Some(token) = &self.token {
            bear(token, request);
        }
    }
}

/// An admin client whose every call carries a token.
pub type TokenAdminClient = AdminServiceClient<InterceptedService<Channel, Bearer>>;

/// How long [`admin_client`] waits to connect.
const ADMIN_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// An admin client of the plain-text (`--insecure`) `url` with `token`.
pub async fn admin_client(url: &str, token: &str) -> Result<TokenAdminClient, LinkError> {
    let channel = Link::default().connect(url, ADMIN_CONNECT_TIMEOUT).await?;
    Ok(AdminServiceClient::with_interceptor(
        channel,
        Bearer(token.to_owned()),
    ))
}

/// Adds `Authorization: Bearer TOKEN` to every call of a client.
#[derive(Debug, Clone)]
pub struct Bearer(pub String);

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut r: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        bear(&self.0, &mut r);
        Ok(r)
    }
}

fn bear<T>(token: &str, request: &mut tonic::Request<T>) {
    if let Ok(value) = MetadataValue::try_from(format!("Bearer {token}")) {
        request
            .metadata_mut()
            .insert(crate::metadata::AUTHORIZATION, value);
    }
}
