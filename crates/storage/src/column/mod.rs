//! Typed columns and tables (see issue 3).
