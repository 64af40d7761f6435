//! The C suite (`tests/c/*.c`, listed in `tests/c/README.md`): every program is
//! compiled with `gcc -fopenmp -c`, linked *without* `-fopenmp` (so `-lgomp` is not
//! added) against a private copy of the `libmaestro_gomp.so` cargo built for this
//! test run, checked with `ldd` to load our library and not stock libgomp, and
//! run; each program checks its own results and exits non-zero on failure.
//!
//! Header lines in a program tune its run:
//! - `maestro-test: env KEY=VALUE` sets an environment variable;
//! - `maestro-test: expect-fail TEXT` expects a failing exit with TEXT on stderr;
//! - `maestro-test: also-preload` also builds it against stock libgomp and runs it
//!   with our library in `LD_PRELOAD`.
//! - `maestro-test: also-stock` also builds it against stock libgomp and runs it
//!   there, unchanged (the program's checks hold on libgomp too).
//! - `maestro-test: also-dedicated` also runs it on our library with
//!   `MAESTRO_OMP_THREADS=dedicated` (team members on dedicated threads, the
//!   mode `threadprivate` programs get).
//!
//! Without gcc the test fails with a message (CI installs it); `MAESTRO_OMP_CC`
//! names another compiler driver.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(120);

/// The directory holding the `libmaestro_gomp.so` built for this run. Cargo builds
/// the library's cdylib together with the rlib this test links, into the
/// `target/<profile>/deps/` directory the test executable runs from (`cargo test`
/// does not copy it up to `target/<profile>/`, where `cargo build` puts it, so
/// that copy may be stale; it is only the fallback).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("test executable directory");
    let candidates = [deps, deps.parent().unwrap_or(deps)];
    for dir in candidates {
        if dir.join("libmaestro_gomp.so").exists() {
            return dir.to_path_buf();
        }
    }
    panic!(
        "libmaestro_gomp.so is in neither {} nor its parent: build the cdylib \
         (cargo build -p maestro-gomp) first",
        deps.display()
    );
}

fn compiler() -> String {
    let cc = std::env::var("MAESTRO_OMP_CC").unwrap_or_else(|_| "gcc".into());
    let ok = Command::new(&cc)
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "the C OpenMP suite needs `{cc}` with -fopenmp support (install gcc, or set MAESTRO_OMP_CC)"
    );
    cc
}

/// What a program's header asks for.
#[derive(Default)]
struct Spec {
    env: Vec<(String, String)>,
    expect_fail: Option<String>,
    also_preload: bool,
    also_stock: bool,
    also_dedicated: bool,
}

fn spec(source: &str) -> Spec {
    let mut s = Spec::default();
    for line in source.lines() {
        let Some((_, rest)) = line.split_once("maestro-test:") else {
            continue;
        };
        let rest = rest.trim().trim_end_matches("*/").trim();
        if let Some(kv) = rest.strip_prefix("env ") {
            let (k, v) = kv.trim().split_once('=').expect("env KEY=VALUE");
            s.env.push((k.into(), v.into()));
        } else if let Some(text) = rest.strip_prefix("expect-fail ") {
            s.expect_fail = Some(text.trim().into());
        } else if rest == "also-preload" {
            s.also_preload = true;
        } else if rest == "also-stock" {
            s.also_stock = true;
        } else if rest == "also-dedicated" {
            s.also_dedicated = true;
        } else {
            panic!("unknown maestro-test directive: {rest}");
        }
    }
    s
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{what}: cannot run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Runs `bin` with a time limit; returns (success, stdout + stderr).
fn execute(
    bin: &Path,
    env: &[(String, String)],
    preload: Option<&Path>,
) -> Result<(bool, String), String> {
    let out_path = bin.with_extension("out");
    let out = File::create(&out_path).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(bin);
    // `cargo test` puts target/<profile> on LD_LIBRARY_PATH, which the loader
    // searches before the binary's RUNPATH: a stale libmaestro_gomp.so left
    // there by an earlier `cargo build` would shadow the private copy.
    cmd.stdout(out.try_clone().map_err(|e| e.to_string())?)
        .stderr(out)
        .env_remove("LD_LIBRARY_PATH")
        .envs(env.iter().map(|(k, v)| (k, v)));
    if let Some(lib) = preload {
        cmd.env("LD_PRELOAD", lib);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{} timed out after {TIMEOUT:?}", bin.display()));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let text = fs::read_to_string(&out_path).unwrap_or_default();
    Ok((status.success(), text))
}

/// Checks with `ldd` that `bin` loads our runtime and not stock libgomp.
fn check_linkage(bin: &Path) -> Result<(), String> {
    let out = Command::new("ldd")
        .arg(bin)
        .output()
        .map_err(|e| format!("cannot run ldd: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !text.contains("libmaestro_gomp.so") {
        return Err(format!(
            "{} does not load libmaestro_gomp.so:\n{text}",
            bin.display()
        ));
    }
    if text.contains("libgomp") {
        return Err(format!("{} loads stock libgomp:\n{text}", bin.display()));
    }
    Ok(())
}

fn test_program(cc: &str, src: &Path, lib: &Path, out_dir: &Path) -> Result<(), String> {
    let name = src.file_stem().unwrap().to_string_lossy().to_string();
    let spec = spec(&fs::read_to_string(src).map_err(|e| e.to_string())?);
    let obj = out_dir.join(format!("{name}.o"));
    let bin = out_dir.join(&name);
    run(
        Command::new(cc)
            .args(["-fopenmp", "-O2", "-Wall", "-c"])
            .arg(src)
            .arg("-o")
            .arg(&obj),
        &format!("compiling {name}"),
    )?;
    run(
        Command::new(cc)
            .arg(&obj)
            .arg("-o")
            .arg(&bin)
            .arg(format!("-L{}", lib.display()))
            .arg("-lmaestro_gomp")
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-lm"),
        &format!("linking {name}"),
    )?;
    check_linkage(&bin)?;
    let mut runs = vec![(bin.clone(), None, false, false)];
    if spec.also_dedicated {
        runs.push((bin.clone(), None, false, true));
    }
    if spec.also_preload || spec.also_stock {
        let stock = out_dir.join(format!("{name}-stock"));
        run(
            Command::new(cc)
                .args(["-fopenmp", "-O2"])
                .arg(src)
                .arg("-o")
                .arg(&stock)
                .arg("-lm"),
            &format!("building {name} against stock libgomp"),
        )?;
        if spec.also_preload {
            runs.push((
                stock.clone(),
                Some(lib.join("libmaestro_gomp.so")),
                false,
                false,
            ));
        }
        if spec.also_stock {
            runs.push((stock, None, true, false));
        }
    }
    for (bin, preload, stock, dedicated) in runs {
        let mut env = spec.env.clone();
        if dedicated {
            env.push(("MAESTRO_OMP_THREADS".into(), "dedicated".into()));
        }
        let (ok, text) = execute(&bin, &env, preload.as_deref())?;
        let label = if dedicated {
            format!("{name} (MAESTRO_OMP_THREADS=dedicated)")
        } else if preload.is_some() {
            format!("{name} (preloaded)")
        } else if stock {
            format!("{name} (stock libgomp)")
        } else {
            name.clone()
        };
        match (&spec.expect_fail, ok) {
            (None, true) => {}
            (None, false) => return Err(format!("{label} failed:\n{text}")),
            (Some(want), false) if text.contains(want.as_str()) => {}
            (Some(want), _) => {
                return Err(format!(
                    "{label} should fail with \"{want}\", got ok={ok}:\n{text}"
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn c_openmp_suite_runs_on_maestro_gomp() {
    let cc = compiler();
    let built = lib_dir();
    let c_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    // Per process: several cargo invocations may share the target directory.
    let out_dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("c_suite-{}", std::process::id()));
    fs::create_dir_all(&out_dir).unwrap();
    // Link against a private copy: a concurrent `cargo build` may rewrite the
    // library in target/ while the suite runs.
    let lib = out_dir.join("lib");
    fs::create_dir_all(&lib).unwrap();
    fs::copy(
        built.join("libmaestro_gomp.so"),
        lib.join("libmaestro_gomp.so"),
    )
    .unwrap();
    let mut sources: Vec<PathBuf> = fs::read_dir(&c_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    sources.sort();
    assert!(
        sources.len() >= 15,
        "the suite went missing from {}",
        c_dir.display()
    );
    let mut failures = Vec::new();
    for src in &sources {
        let started = Instant::now();
        match test_program(&cc, src, &lib, &out_dir) {
            Ok(()) => eprintln!("ok   {} ({:?})", src.display(), started.elapsed()),
            Err(e) => {
                eprintln!("FAIL {}", src.display());
                failures.push(e);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} C programs failed (binaries kept in {}):\n\n{}",
        failures.len(),
        sources.len(),
        out_dir.display(),
        failures.join("\n\n")
    );
    let _ = fs::remove_dir_all(&out_dir);
}

#[test]
fn headers_parse() {
    let s = spec(
        "/* maestro-test: env A=1\n * maestro-test: expect-fail boom bang\n maestro-test: also-preload\n maestro-test: also-stock\n * maestro-test: also-dedicated */",
    );
    assert_eq!(s.env, vec![("A".to_string(), "1".to_string())]);
    assert_eq!(s.expect_fail.as_deref(), Some("boom bang"));
    assert!(s.also_preload);
    assert!(s.also_stock);
    assert!(s.also_dedicated);
}
