//! A session's connection loop, sending each response in one write.
//!
//! pgwire's own loop (`pgwire::tokio::process_socket`) flushes the socket
//! after ParseComplete, BindComplete, CommandComplete and ReadyForQuery
//! alike: a prepared statement's Bind/Execute/Sync answer took three
//! `sendto`s, each waking the client, which read a part and slept again
//! (measured: 16 `sendto`s per pgbench simple-update transaction of five
//! statements). PostgreSQL buffers its output until the client waits for
//! it, and so does this loop:
//!
//! - The socket is wrapped in [`Batched`], whose `poll_flush` only reaches
//!   the socket when the loop has *released* it; otherwise the bytes stay
//!   in its buffer (at most [`PENDING_BYTES_MAX`]; past that, a write goes
//!   through first, so a large result streams as before).
//! - After processing a message, the loop releases and flushes unless the
//!   message is one a client sends *ahead* of waiting ([`holds_response`]:
//!   Parse, Bind, Describe, Execute, Close, CopyData). The protocol says a
//!   client waits for a response only after Sync, Flush, a simple Query,
//!   the startup and authentication messages, CopyDone and CopyFail — and
//!   each of those is followed by a flush, so nothing a client waits for
//!   is withheld: no lost wake-up. (A client that sends Execute and waits
//!   without a Sync or Flush breaks the protocol; PostgreSQL would not
//!   answer it either.)
//! - Everything else is pgwire's own loop: TLS negotiation (refused: no
//!   acceptor), the startup timeout, Terminate, cancel requests, the error
//!   handler, FATAL errors ending the session.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use pgwire::api::ErrorHandler;
use pgwire::api::{ClientInfo, PgWireConnectionState, PgWireServerHandlers};
use pgwire::messages::PgWireFrontendMessage;
use pgwire::tokio::server::{negotiate_tls, process_error, process_message};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_util::codec::{Framed, FramedParts};

/// Bytes a response may hold back before writes go through to the socket
/// (guessed: a few dozen rows of a result; an OLTP answer is < 1 KiB).
pub const PENDING_BYTES_MAX: usize = 64 * 1024;

/// pgwire's limit for a connection to finish its startup (its value).
const STARTUP_TIMEOUT_MS: u64 = 60_000;

/// Whether a client sends `msg` ahead of waiting for anything (the
/// extended protocol's statement messages, COPY's data): its response can
/// wait for the next message that is not.
pub fn holds_response(msg: &PgWireFrontendMessage) -> bool {
    matches!(
        msg,
        PgWireFrontendMessage::Parse(_)
            | PgWireFrontendMessage::Bind(_)
            | PgWireFrontendMessage::Describe(_)
            | PgWireFrontendMessage::Execute(_)
            | PgWireFrontendMessage::Close(_)
            | PgWireFrontendMessage::CopyData(_)
    )
}

/// A stream whose flushes are deferred until released (module doc).
pub struct Batched<IO> {
    io: IO,
    /// Bytes written and not yet sent; `pending[sent..]` is still to send.
    pending: Vec<u8>,
    sent: usize,
    /// Set by the loop before a flush that must reach the socket; cleared
    /// when that flush completes.
    released: bool,
}

impl<IO: AsyncWrite + Unpin> Batched<IO> {
    pub fn new(io: IO) -> Batched<IO> {
        Batched {
            io,
            pending: Vec::new(),
            sent: 0,
            released: false,
        }
    }

    /// The next flush sends everything written so far.
    pub fn release(&mut self) {
        self.released = true;
    }

    /// Bytes written and not yet sent.
    pub fn pending(&self) -> usize {
        self.pending.len() - self.sent
    }

    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.pending.len() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.pending[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.pending.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Batched<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Batched<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.pending() >= PENDING_BYTES_MAX {
            ready!(this.poll_send(cx))?;
        }
        this.pending.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.released {
            return Poll::Ready(Ok(()));
        }
        ready!(this.poll_send(cx))?;
        ready!(Pin::new(&mut this.io).poll_flush(cx))?;
        this.released = false;
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_send(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

/// Serves one connection with `handlers` until the client leaves: pgwire's
/// `process_socket` with the response batching of the module doc.
pub async fn process_socket<H: PgWireServerHandlers>(
    socket: TcpStream,
    handlers: H,
) -> io::Result<()> {
    let startup_timeout = tokio::time::sleep(Duration::from_millis(STARTUP_TIMEOUT_MS));
    tokio::pin!(startup_timeout);
    let negotiated = tokio::select! {
        _ = &mut startup_timeout => return Ok(()),
        s = negotiate_tls(socket, None) => s?,
    };
    // `None`: a direct TLS handshake, which needs an acceptor.
    let Some(negotiated) = negotiated else {
        return Ok(());
    };
    let old = negotiated.into_parts();
    let mut parts = FramedParts::new(Batched::new(old.io), old.codec);
    parts.read_buf = old.read_buf;
    parts.write_buf = old.write_buf;
    let mut socket = Framed::from_parts(parts);

    let startup_handler = handlers.startup_handler();
    let simple_query_handler = handlers.simple_query_handler();
    let extended_query_handler = handlers.extended_query_handler();
    let copy_handler = handlers.copy_handler();
    let cancel_handler = handlers.cancel_handler();
    let error_handler = handlers.error_handler();
    loop {
        let starting = matches!(
            socket.state(),
            PgWireConnectionState::AwaitingStartup
                | PgWireConnectionState::AuthenticationInProgress
        );
        let msg = if starting {
            tokio::select! {
                _ = &mut startup_timeout => None,
                msg = socket.next() => msg,
            }
        } else {
            socket.next().await
        };
        let Some(Ok(msg)) = msg else {
            break;
        };
        // Terminate: the client is leaving (and may wait for the close).
        if matches!(msg, PgWireFrontendMessage::Terminate(_)) {
            break;
        }
        let is_extended_query = match socket.state() {
            PgWireConnectionState::CopyInProgress(extended) => extended,
            _ => msg.is_extended_query(),
        };
        let is_cancel_request = matches!(msg, PgWireFrontendMessage::CancelRequest(_));
        let holds = holds_response(&msg);
        let mut fatal = false;
        if let Err(mut e) = process_message(
            msg,
            &mut socket,
            startup_handler.clone(),
            simple_query_handler.clone(),
            extended_query_handler.clone(),
            copy_handler.clone(),
            cancel_handler.clone(),
        )
        .await
        {
            error_handler.on_error(&socket, &mut e);
            fatal = e.is_fatal();
            process_error(&mut socket, e, is_extended_query).await?;
        }
        if is_cancel_request {
            break;
        }
        // The client waits now, or the session ends with a FATAL error.
        if fatal || !holds {
            socket.get_mut().release();
            socket.flush().await?;
        }
        if fatal {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::{Arc, Mutex};

    /// A socket that records each write as one segment.
    #[derive(Clone, Default)]
    struct Segments(Arc<Mutex<Vec<Vec<u8>>>>);

    impl AsyncWrite for Segments {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            // At most 1000 bytes per write, as a socket may take.
            let n = buf.len().min(1000);
            self.0.lock().unwrap().push(buf[..n].to_vec());
            Poll::Ready(Ok(n))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn writes_wait_for_a_released_flush_and_then_go_out_together() {
        use tokio::io::AsyncWriteExt;
        let sock = Segments::default();
        let mut b = Batched::new(sock.clone());
        block_on(async {
            b.write_all(b"1").await.unwrap();
            b.flush().await.unwrap();
            b.write_all(b"2").await.unwrap();
            b.flush().await.unwrap();
            assert!(
                sock.0.lock().unwrap().is_empty(),
                "nothing sent before a release"
            );
            assert_eq!(b.pending(), 2);
            b.release();
            b.flush().await.unwrap();
            assert_eq!(*sock.0.lock().unwrap(), vec![b"12".to_vec()]);
            assert_eq!(b.pending(), 0);
            // The release was used up: the next flush holds again.
            b.write_all(b"3").await.unwrap();
            b.flush().await.unwrap();
            assert_eq!(sock.0.lock().unwrap().len(), 1);
            // Shutting down sends what is left.
            b.shutdown().await.unwrap();
            assert_eq!(sock.0.lock().unwrap().last().unwrap(), b"3");
        });
    }

    #[test]
    fn a_large_response_streams_past_the_bound() {
        use tokio::io::AsyncWriteExt;
        let sock = Segments::default();
        let mut b = Batched::new(sock.clone());
        let chunk = vec![7u8; 10_000];
        block_on(async {
            for _ in 0..20 {
                b.write_all(&chunk).await.unwrap();
                b.flush().await.unwrap();
                assert!(b.pending() <= PENDING_BYTES_MAX + chunk.len());
            }
            let sent: usize = sock.0.lock().unwrap().iter().map(Vec::len).sum();
            assert!(sent >= 20 * chunk.len() - PENDING_BYTES_MAX - chunk.len());
            b.release();
            b.flush().await.unwrap();
            let sent: usize = sock.0.lock().unwrap().iter().map(Vec::len).sum();
            assert_eq!(sent, 20 * chunk.len());
        });
    }
}
