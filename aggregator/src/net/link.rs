//! How this process reaches an aggregator's gRPC listener: the scheme, the
//! client certificate (read at each connection, so rotation needs no
//! restart) and the bearer token for admin calls.

use std::time::Duration;

use gslb_proto::pb::admin_service_client::AdminServiceClient;
use gslb_shared::config::LinkTls;
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

/// A link's TLS files and token.
#[derive(Debug, Clone, Default)]
pub struct PeerLink {
    /// TLS files; `None` is plain text.
    pub tls: Option<LinkTls>,
    /// Bearer token sent with every call, if any.
    pub token: Option<String>,
}

impl PeerLink {
    /// `https` with TLS, `http` without.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// The URL of `address` (HOST:PORT).
    pub fn url(&self, address: &str) -> String {
        format!("{}://{address}", self.scheme())
    }

    /// An endpoint for `url`, with `timeout` to connect.
    pub fn endpoint(&self, url: &str, timeout: Duration) -> Result<Endpoint, String> {
        let mut endpoint = Endpoint::from_shared(url.to_owned())
            .map_err(|e| format!("{url:?}: {e}"))?
            .connect_timeout(timeout)
            .tcp_nodelay(true);
        if let Some(tls) = &self.tls
            && url.starts_with("https://")
        {
            let config = gslb_proto::link::link_config(tls)
                .map_err(|e| e.to_string())?
                .unwrap_or_default();
            endpoint = endpoint
                .tls_config(config)
                .map_err(|e| gslb_shared::telemetry::error_chain(&e))?;
        }
        Ok(endpoint)
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

/// An admin client of the plain-text (`--insecure`) `url` with `token`.
pub async fn admin_client(
    url: &str,
    token: &str,
) -> Result<TokenAdminClient, tonic::transport::Error> {
    let channel = Endpoint::from_shared(url.to_owned())?.connect().await?;
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
            .insert(gslb_proto::metadata::AUTHORIZATION, value);
    }
}
