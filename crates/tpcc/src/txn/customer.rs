//! Finding Payment's and Order-Status's customer by id or by last name
//! (clauses 2.5.2.2, 2.6.2.2). Which customers carry a last name, and their
//! `c_first`, never change, so the choice needs no lock; the caller locks the
//! chosen customer afterwards.

use super::{Abort, CustomerSelector, Scratch};
use crate::db::Database;
use crate::error::TpccError;
use crate::table::RowId;

/// `c_first` as a fixed-size sort key: the loader's are 8..=16 ASCII
/// characters, so the zero-padded bytes order like the strings (a longer
/// name would be compared on its first 16 characters only).
pub(crate) fn first_name_key(c_first: &str) -> [u8; 16] {
    let mut key = [0u8; 16];
    let bytes = c_first.as_bytes();
    let n = bytes.len().min(key.len());
    key[..n].copy_from_slice(&bytes[..n]);
    key
}

/// The customer `(c_id, row)` the selector names in district `(w_id, d_id)`.
pub(super) fn select(
    db: &Database,
    scratch: &mut Scratch,
    w_id: u16,
    d_id: u8,
    selector: CustomerSelector,
) -> Result<(u16, RowId), Abort> {
    let not_found = |what: String| TpccError::NotFound {
        table: "customer",
        key: format!("w={w_id} d={d_id} {what}"),
    };
    match selector {
        CustomerSelector::Id(c_id) => {
            let row = db.customer_row(w_id, d_id, c_id)?;
            Ok((c_id, row.ok_or_else(|| not_found(format!("c={c_id}")))?))
        }
        CustomerSelector::LastName(name) => {
            let matches = &mut scratch.customers;
            matches.clear();
            for (c_id, row) in db.customers_by_last_name(w_id, d_id, name)? {
                let first = first_name_key(&super::undo::live(&db.customer, row)?.read().c_first);
                matches.push((first, c_id, row));
            }
            if matches.is_empty() {
                return Err(not_found(format!("last name number {name}")).into());
            }
            // Sorted by c_first (ties by c_id: the index yields c_id order and
            // the sort is stable); the one at position ⌈n/2⌉, 1-based.
            matches.sort_by_key(|m| m.0);
            let (_, c_id, row) = matches[matches.len().div_ceil(2) - 1];
            Ok((c_id, row))
        }
    }
}
