//! Exports the OpenMP runtime the `maestro` binary links (the `maestro-gomp` rlib:
//! `GOMP_*`, `omp_*`, `maestro_omp_*`) in its dynamic symbol table, so that an
//! OpenMP shared object it loads with its GOMP_* references undefined binds to this
//! process's runtime — the one running on the database's scheduler. `maestro bench
//! omp` relies on it (crates/gomp-bench/src/interference.rs) and fails with the
//! loader's message naming the symbol if an export is missing. GNU ld ≥ 2.35 and
//! lld accept globs here.
fn main() {
    for glob in ["GOMP_*", "omp_*", "maestro_omp_*"] {
        println!("cargo:rustc-link-arg-bin=maestro=-Wl,--export-dynamic-symbol={glob}");
    }
}
