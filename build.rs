//! `--version` names the commit it was built from (`unknown` outside a Git checkout); §25's report
//! also names the branch, the base it forked from (`git merge-base` with `ARGUS_BASE_REF`, else
//! `origin/main`) and the files changed since (`git diff --name-status`, kept in OUT_DIR).
use std::path::Path;

fn git(args: &[&str]) -> Option<String> {
    std::process::Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=ARGUS_GIT_COMMIT={commit}");
    let branch = git(&["rev-parse", "--abbrev-ref", "HEAD"]).unwrap_or_default();
    println!("cargo:rustc-env=ARGUS_GIT_BRANCH={branch}");
    let base_ref = std::env::var("ARGUS_BASE_REF").unwrap_or_else(|_| "origin/main".into());
    let base = git(&["merge-base", "HEAD", &base_ref]);
    let short = base
        .as_deref()
        .and_then(|b| git(&["rev-parse", "--short=12", b]))
        .unwrap_or_default();
    println!("cargo:rustc-env=ARGUS_GIT_BASE={short}");
    println!("cargo:rustc-env=ARGUS_GIT_BASE_REF={base_ref}");
    let files = base
        .as_deref()
        .and_then(|b| git(&["diff", "--name-status", b, "HEAD"]))
        .unwrap_or_default();
    let out = std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into());
    if let Err(e) = std::fs::write(Path::new(&out).join("git-files.txt"), files) {
        println!("cargo:warning=cannot keep the files changed: {e}");
    }
    println!("cargo:rerun-if-env-changed=ARGUS_BASE_REF");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
    // Watched only where it exists: a path that does not would rebuild every time.
    for p in [".git/refs/remotes", ".git/packed-refs"] {
        if Path::new(p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}
