//! Cancel requests. A client that wants to stop its running statement opens
//! a second connection and sends the process id and secret key it got in
//! BackendKeyData at startup; the server cancels that session's statement —
//! its `CancelToken`, which the operators check between morsels — and the
//! statement fails with 57014 while its session goes on.
//!
//! pgwire's own cancel path only drops the query's future, which would leave
//! the statement running on the scheduler; this registry reaches the token.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use maestro_scheduler::CancelToken;
use pgwire::api::cancel::CancelHandler;
use pgwire::messages::cancel::CancelRequest;
use pgwire::messages::startup::SecretKey;

/// The statement a session runs now, if any.
#[derive(Default)]
pub struct Running(Mutex<Option<CancelToken>>);

impl Running {
    /// Makes `token` (the statement starting now: its timeout, its memory
    /// account) this session's cancellable statement until the guard drops.
    pub fn start(self: &Arc<Self>, token: CancelToken) -> RunningGuard {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(token);
        RunningGuard(Arc::clone(self))
    }

    fn cancel(&self) {
        if let Some(t) = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            t.cancel();
        }
    }
}

/// Ends a statement's cancellable time (also when its future is dropped).
pub struct RunningGuard(Arc<Running>);

impl Drop for RunningGuard {
    fn drop(&mut self) {
        *self.0.0.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

type Key = (i32, Vec<u8>);

fn key(pid: i32, secret: &SecretKey) -> Key {
    (pid, secret.to_bytes().to_vec())
}

/// The sessions by (process id, secret key).
#[derive(Default)]
pub struct Sessions(Mutex<HashMap<Key, Arc<Running>>>);

impl Sessions {
    /// Registers a session's statement slot under its BackendKeyData; the
    /// registration ends when the returned value drops (the session ends).
    pub fn register(
        self: &Arc<Self>,
        pid: i32,
        secret: &SecretKey,
        running: Arc<Running>,
    ) -> Registration {
        let k = key(pid, secret);
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(k.clone(), running);
        Registration {
            key: k,
            sessions: Arc::clone(self),
        }
    }

    /// Cancels the statement running on the session, if the key matches one
    /// (else nothing, as PostgreSQL: a wrong key is not an error to anyone).
    pub fn cancel(&self, pid: i32, secret: &SecretKey) {
        let running = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key(pid, secret))
            .cloned();
        if let Some(r) = running {
            r.cancel();
        }
    }
}

/// A session's entry in [`Sessions`], removed when dropped.
pub struct Registration {
    key: Key,
    sessions: Arc<Sessions>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.sessions
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.key);
    }
}

/// pgwire's hook for CancelRequest messages.
pub struct CancelRequests(pub Arc<Sessions>);

#[async_trait]
impl CancelHandler for CancelRequests {
    async fn on_cancel_request(&self, request: CancelRequest) {
        self.0.cancel(request.pid, &request.secret_key);
    }
}

/// `statement_timeout` as SET gives it: milliseconds, or a number with a
/// unit (`ms`, `s`, `min`, `h`, `d`); 0 (or anything else) is no timeout.
pub fn statement_timeout(setting: &str) -> Option<Duration> {
    let s = setting.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let ms = n * match unit.trim() {
        "" | "ms" => 1.0,
        "s" => 1e3,
        "min" => 60e3,
        "h" => 3600e3,
        "d" => 86_400e3,
        _ => return None,
    };
    (ms > 0.0 && ms.is_finite()).then(|| Duration::from_secs_f64(ms / 1e3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_statement_timeouts() {
        assert_eq!(statement_timeout("0"), None);
        assert_eq!(statement_timeout("250"), Some(Duration::from_millis(250)));
        assert_eq!(statement_timeout("5s"), Some(Duration::from_secs(5)));
        assert_eq!(statement_timeout("1 min"), Some(Duration::from_secs(60)));
        assert_eq!(statement_timeout("soon"), None);
    }
}
