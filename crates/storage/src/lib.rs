//! Maestro's in-memory storage: typed, dictionary-encoded columns (`column`) and
//! B+-tree indexes with optimistic lock coupling (`index`).

pub mod column;
pub mod heap;
pub mod index;
