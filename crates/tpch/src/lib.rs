//! TPC-H on Maestro (see issue 3).
