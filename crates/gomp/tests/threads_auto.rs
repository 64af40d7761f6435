//! `MAESTRO_OMP_THREADS=auto` (the default) through the libgomp ABI: a process
//! without thread-local storage of its own (this test binary's Rust
//! thread-locals belong to the runtime it links) runs members on scheduler
//! workers; once a library with thread-local storage is `dlopen`ed, the next
//! region runs them on dedicated home threads (PROTOCOL.md "threadprivate").
//! Own test binary: the mode is process-wide and, once dedicated, final.

use std::ffi::{CString, c_void};
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use maestro_gomp::abi::omp::omp_get_thread_num;
use maestro_gomp::abi::parallel::{GOMP_barrier, GOMP_parallel};
use maestro_scheduler::sync::current_worker_state;

/// Where member 1 ran: (on a scheduler worker, thread name).
type Seen = Mutex<Option<(bool, String)>>;

unsafe extern "C" fn body(data: *mut c_void) {
    // SAFETY: `region` passes its `Seen`, alive until GOMP_parallel returns.
    let seen = unsafe { &*data.cast::<Seen>() };
    if omp_get_thread_num() == 1 {
        let name = std::thread::current().name().unwrap_or("").to_string();
        *seen.lock().unwrap() = Some((current_worker_state().is_some(), name));
    }
    // Both members at once: member 1 cannot be run inline by the master's join.
    GOMP_barrier();
}

fn region() -> (bool, String) {
    let seen: Seen = Mutex::new(None);
    // SAFETY: `body` takes the block we pass, alive for the call.
    unsafe { GOMP_parallel(body, (&raw const seen).cast_mut().cast(), 2, 0) };
    seen.into_inner().unwrap().expect("member 1 ran")
}

#[test]
fn a_library_with_thread_local_storage_switches_to_dedicated_threads() {
    assert!(
        std::env::var_os("MAESTRO_OMP_THREADS").is_none(),
        "this test checks the default, auto"
    );
    let (on_worker, name) = region();
    assert!(on_worker, "member 1 on a scheduler worker, not on {name:?}");

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("probe.c");
    std::fs::write(
        &src,
        "__thread int probe_tls;\nint *probe(void) { return &probe_tls; }\n",
    )
    .unwrap();
    let lib = dir.join("libprobe.so");
    let cc = std::env::var("MAESTRO_OMP_CC").unwrap_or_else(|_| "gcc".into());
    let status = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O2"])
        .arg(&src)
        .arg("-o")
        .arg(&lib)
        .status()
        .unwrap_or_else(|e| panic!("this test needs `{cc}` to build a shared library: {e}"));
    assert!(status.success(), "building {}", lib.display());
    let path = CString::new(lib.to_str().unwrap()).unwrap();
    // SAFETY: a valid path; the library has no constructors of interest and
    // stays loaded for the rest of the process.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW) };
    assert!(!handle.is_null(), "dlopen {}", lib.display());

    for _ in 0..3 {
        let (on_worker, name) = region();
        assert!(!on_worker, "member 1 on a dedicated thread");
        assert_eq!(name, "maestro-omp-home");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
