fn main() {
    for glob in ["GOMP_*", "omp_*", "maestro_omp_*"] {
        println!("cargo:rustc-link-arg-bin=maestro=-Wl,--export-dynamic-symbol={glob}");
    }
}
