//! The accept loop: HTTP/1 connections served by hyper with a header read timeout, which
//! `axum::serve` does not set (it gives hyper no timer, so a client that sends its request
//! head a byte at a time, or opens a connection and sends nothing, holds it forever).
//! The timeout covers the whole head of each request and the idle time before it on a
//! kept-alive connection. Accept errors never end the loop: at the process's limit on open
//! files it waits a moment and tries again, while the timeout frees connections.

use std::future::Future;
use std::io;
use std::time::{Duration, Instant};

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// How long to wait after an accept error other than a failed handshake.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// At most one line on stderr per this long about accept errors.
const ACCEPT_LOG_EVERY: Duration = Duration::from_secs(10);

/// Errors of one connection that the next accept does not share.
fn connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

/// Serve `router` on `listener` until `shutdown` completes; then stop accepting, let each
/// connection finish the request it is answering, and return when all are closed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) {
    let (stop_tx, stop_rx) = watch::channel(false);
    // Each connection holds a receiver; `closed` resolves when the last one is gone.
    let (open_tx, open_rx) = watch::channel(());
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(header_timeout);
    let mut last_log: Option<Instant> = None;
    let mut refused = 0u64;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => break,
            r = listener.accept() => r,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) if connection_error(&e) => continue,
            Err(e) => {
                // EMFILE, ENFILE, ENOBUFS, ENOMEM: wait for connections to close.
                refused += 1;
                if last_log.is_none_or(|t| t.elapsed() >= ACCEPT_LOG_EVERY) {
                    tracing::warn!(
                        "cannot accept connections ({e}; {refused} times so far): waiting for open ones to close"
                    );
                    last_log = Some(Instant::now());
                }
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let conn = builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(router.clone()));
        let (mut stop, open) = (stop_rx.clone(), open_rx.clone());
        tokio::spawn(async move {
            let _open = open;
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = stop.wait_for(|s| *s) => conn.as_mut().graceful_shutdown(),
            }
            let _ = conn.await;
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(open_rx);
    open_tx.closed().await;
}
