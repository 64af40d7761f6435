//! `COPY t FROM STDIN`: the server answers CopyInResponse, collects the
//! client's CopyData, and on CopyDone appends the rows as one new version of
//! the table in the session's transaction (or one of its own); a bad row
//! fails the whole COPY (22P04) and nothing is inserted. COPY from a file on
//! the server runs as any other statement ([`maestro_sql::Store::execute`]).

use std::fmt::Debug;
use std::sync::{Arc, PoisonError};

use async_trait::async_trait;
use futures::{Sink, SinkExt, stream};
use maestro_sql::store::{CopyFrom, copy_from};
use pgwire::api::ClientInfo;
use pgwire::api::copy::CopyHandler;
use pgwire::api::results::{CopyResponse, Response, Tag};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::PgWireBackendMessage;
use pgwire::messages::copy::{CopyData, CopyDone, CopyFail};

use crate::errors::{self, error, sql_error, user_error};
use crate::txn::{self, TxnSlot};
use crate::{Answer, Session, on_session_thread, written_tag};

/// A COPY FROM STDIN in progress: what to copy, and the data so far.
pub struct PendingCopy {
    copy: CopyFrom,
    data: Vec<u8>,
}

impl Session {
    /// `COPY …`: from STDIN, starts the copy-in; from a file, runs it.
    pub(crate) async fn copy(&self, text: &str) -> Result<Response, Box<ErrorInfo>> {
        let stmt = maestro_sql::parse(text).map_err(|e| sql_error(&e, None))?;
        let copy = match copy_from(&stmt) {
            Some(Ok(c)) => c,
            Some(Err(e)) => return Err(sql_error(&e, None)),
            None => {
                return Err(error(
                    errors::FEATURE_NOT_SUPPORTED,
                    "unsupported: this form of COPY",
                ));
            }
        };
        let engine = Arc::clone(&self.engine);
        let slot = Arc::clone(&self.txn);
        if copy.file.is_some() {
            let sql = text.to_string();
            let answer = on_session_thread(move || {
                let mut slot = txn::lock(&slot);
                let token = maestro_scheduler::CancelToken::new();
                engine
                    .execute(&sql, &[], token, &mut slot)
                    .map_err(|e| sql_error(&e, None))
            })?;
            return match answer {
                Answer::Written(w) => Ok(Response::Execution(written_tag(w))),
                _ => Err(error(errors::INTERNAL_ERROR, "COPY returned rows")),
            };
        }
        // The table must exist before the client sends its data.
        let table = copy.table.clone();
        let columns = on_session_thread(move || {
            let mut slot = txn::lock(&slot);
            let view = match &mut *slot {
                TxnSlot::Open(t, _) => engine.store().view(t),
                _ => {
                    let mut t = engine.store().begin().map_err(|e| sql_error(&e, None))?;
                    engine.store().view(&mut t)
                }
            };
            view.entry(&table)
                .map(|(_, e)| e.columns.len())
                .map_err(|e| sql_error(&e, None))
        })?;
        let columns = if copy.columns.is_empty() {
            columns
        } else {
            copy.columns.len()
        };
        *self.copy.lock().unwrap_or_else(PoisonError::into_inner) = Some(PendingCopy {
            copy,
            data: Vec::new(),
        });
        Ok(Response::CopyIn(CopyResponse::new(
            0,
            columns,
            stream::empty(),
        )))
    }

    fn take_copy(&self) -> Option<PendingCopy> {
        self.copy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

#[async_trait]
impl CopyHandler for Session {
    async fn on_copy_data<C>(&self, _client: &mut C, copy_data: CopyData) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        if let Some(p) = self
            .copy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            p.data.extend_from_slice(&copy_data.data);
        }
        Ok(())
    }

    async fn on_copy_done<C>(&self, client: &mut C, _done: CopyDone) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let Some(pending) = self.take_copy() else {
            return Err(user_error(error(
                errors::PROTOCOL_VIOLATION,
                "CopyDone without a COPY FROM STDIN",
            )));
        };
        let engine = Arc::clone(&self.engine);
        let slot = Arc::clone(&self.txn);
        let rows = on_session_thread(move || {
            let mut slot = txn::lock(&slot);
            engine
                .in_transaction(&mut slot, |t| {
                    engine.copy_in(t, &pending.copy, &pending.data)
                })
                .map_err(|e| sql_error(&e, None))
        })
        .map_err(user_error)?;
        let tag = Tag::new("COPY").with_rows(usize::try_from(rows).unwrap_or(usize::MAX));
        client
            .send(PgWireBackendMessage::CommandComplete(tag.into()))
            .await?;
        Ok(())
    }

    async fn on_copy_fail<C>(&self, _client: &mut C, fail: CopyFail) -> PgWireError
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        self.take_copy();
        let mut slot = txn::lock(&self.txn);
        if slot.in_block() {
            *slot = TxnSlot::Failed;
        }
        user_error(error(
            errors::QUERY_CANCELED,
            format!("COPY from stdin failed: {}", fail.message),
        ))
    }
}
