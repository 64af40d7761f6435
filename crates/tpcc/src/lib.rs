//! TPC-C on Maestro (work in progress).
