//! Maestro's in-memory storage: typed, dictionary-encoded columns (`column`),
//! B+-tree indexes with optimistic lock coupling (`index`), and returning the
//! memory replaced column mains leave behind to the kernel (`heap`).

pub mod column;
pub mod heap;
pub mod index;
