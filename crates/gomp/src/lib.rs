//! OpenMP on the Maestro scheduler (work in progress).
