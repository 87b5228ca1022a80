//! The state root's own commands: `backup` (through the running daemon, or offline holding the
//! root's lock), `restore` and `confirm-upgrade`. Each says its outcome in one line and its exit
//! code (6: a newer build's root, refused).

use std::process::ExitCode;

/// `backup`: through the daemon when `url` names it; else offline, holding the root's lock (a
/// daemon holding it is named, and asked for by `--url`).
pub fn backup(home: &std::path::Path, url: Option<&str>) -> ExitCode {
    if let Some(base) = url {
        let Some(rt) = crate::tokio_runtime() else {
            return ExitCode::FAILURE;
        };
        let (line, exit) = rt.block_on(argus_supervisor_lib::cli::backup_online(base, home));
        println!("{line}");
        return ExitCode::from(exit as u8);
    }
    // A backup reads a state root `serve` made; it never makes one (an empty archive of a
    // mistyped path would read as a backup taken).
    let marked = home
        .join(argus_supervisor_lib::store::version::MARK)
        .is_file()
        || home.join("campaigns").is_dir();
    if !marked {
        let why = if home.exists() {
            "is not a state root (no campaigns/ and no store-version.json)"
        } else {
            "does not exist"
        };
        eprintln!(
            "backup: not taken: {} {why}; name serve's state root with --home or ARGUS_SUPERVISOR_HOME",
            home.display()
        );
        return ExitCode::FAILURE;
    }
    if let Err(e) = argus_supervisor_lib::store::version::check(home) {
        eprintln!("backup: not taken: {e}");
        return ExitCode::from(6);
    }
    let store = match argus_supervisor_lib::store::Store::open(home) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("backup: not taken: {e}");
            return ExitCode::FAILURE;
        }
    };
    let _lock = match store.lock() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("backup: not taken offline: {e}; back up through the running daemon with --url (ARGUS_SUPERVISOR_URL)");
            return ExitCode::from(2);
        }
    };
    match argus_supervisor_lib::store::backup::take(home, &crate::build().tool()) {
        Ok((archive, m)) => {
            println!(
                "backup: done; {} files in {}",
                m.files.len(),
                archive.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("backup: not taken: {e}");
            ExitCode::FAILURE
        }
    }
}

pub fn restore(from: &std::path::Path, home: &std::path::Path, replace: bool) -> ExitCode {
    use argus_supervisor_lib::store::backup::{self, BackupError};
    match backup::restore(from, home, replace) {
        Ok(m) => {
            println!(
                "restore: done; {} files of store schema {} (taken at {} by {}) in {}; start serve: every lease is confirmed with the remote before it is used",
                m.files.len(),
                m.schema_version,
                argus_supervisor_lib::time::rfc3339(m.taken_at),
                m.written_by,
                home.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("restore: refused: {e}");
            ExitCode::from(match e {
                BackupError::Newer { .. } => 6,
                BackupError::Io { .. } => 1,
                _ => 2,
            })
        }
    }
}

pub fn confirm_upgrade(home: &std::path::Path) -> ExitCode {
    use argus_supervisor_lib::store::version;
    match version::drop_kept(home, u64::MAX) {
        Ok(gone) if gone.is_empty() => {
            println!(
                "confirm-upgrade: no upgrade copy is kept in {}",
                home.display()
            );
            ExitCode::SUCCESS
        }
        Ok(gone) => {
            for g in &gone {
                println!("removed {}", g.display());
            }
            println!(
                "confirm-upgrade: {} kept upgrade copy(ies) removed; a rollback now needs a backup",
                gone.len()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "confirm-upgrade: cannot remove the kept copies in {}: {e}",
                home.display()
            );
            ExitCode::FAILURE
        }
    }
}
