//! A gRPC service behind an admission check: the check sees each request
//! first and lets it through or answers with a status. The cluster's leader
//! gate and the security guard are both admission checks.

use std::convert::Infallible;
use std::task::{Context, Poll};

use tonic::Status;
use tonic::body::Body;
use tonic::codegen::{BoxFuture, Service as TowerService, http};
use tonic::server::NamedService;

use crate::core::audit::Attribution;

/// Decides whether a request reaches the service.
pub trait Admission: Clone + Send + 'static {
    /// `Ok` lets `request` through, naming who it comes from when the
    /// admission knows (for the audit records of the writes it makes); an
    /// error is the answer instead.
    fn admit(&self, request: &http::Request<Body>) -> BoxFuture<Option<Attribution>, Status>;
}

/// `inner` behind `admission`.
#[derive(Debug, Clone)]
pub struct Gated<S, A> {
    inner: S,
    admission: A,
}

impl<S, A> Gated<S, A> {
    /// Put `inner` behind `admission`.
    pub fn new(inner: S, admission: A) -> Self {
        Self { inner, admission }
    }
}

impl<S: NamedService, A> NamedService for Gated<S, A> {
    const NAME: &'static str = S::NAME;
}

impl<S, A> TowerService<http::Request<Body>> for Gated<S, A>
where
    S: TowerService<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    A: Admission,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        // This call takes the service poll_ready prepared; a fresh clone
        // stays for the next one (the usual tower pattern).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let admitted = self.admission.admit(&request);
        Box::pin(async move {
            match admitted.await {
                Ok(Some(by)) => crate::api::caller::scoped(by, inner.call(request)).await,
                Ok(None) => inner.call(request).await,
                Err(status) => Ok(status.into_http()),
            }
        })
    }
}
