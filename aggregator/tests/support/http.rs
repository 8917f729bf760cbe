//! A plain HTTP/1.1 client (hyper) for the aggregator's HTTP listener.

use http_body_util::BodyExt;

/// GET on the HTTP listener: status and body.
pub async fn http_get(addr: &str, path: &str) -> (u16, String) {
    http_call(addr, "GET", path, None, "").await
}

/// GET with a bearer token.
pub async fn http_get_as(addr: &str, path: &str, token: Option<&str>) -> (u16, String) {
    http_call(addr, "GET", path, token, "").await
}

/// `METHOD path` with an optional bearer token and a JSON body (none when
/// empty): status and body.
pub async fn http_call(
    addr: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &str,
) -> (u16, String) {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(conn);
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("host", addr);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if !body.is_empty() {
        request = request.header("content-type", "application/json");
    }
    let request = request
        .body(http_body_util::Full::new(bytes::Bytes::from(
            body.to_owned(),
        )))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}
