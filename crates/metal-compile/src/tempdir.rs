//! A private temporary directory that is removed when dropped (on success, on error returns
//! and during unwinding alike).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

impl TempDir {
    /// A new empty directory under `std::env::temp_dir()`.
    pub fn new(prefix: &str) -> io::Result<TempDir> {
        TempDir::new_in(std::env::temp_dir(), prefix)
    }

    /// A new empty directory under `parent` named `<prefix>-<pid>-<nanos>-<n>`.
    pub fn new_in(parent: impl AsRef<Path>, prefix: &str) -> io::Result<TempDir> {
        let parent = parent.as_ref();
        let pid = std::process::id();
        for _ in 0..64 {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = parent.join(format!("{prefix}-{pid}-{nanos:09}-{n}"));
            // `create_dir` fails if the name exists, so two guards never share a directory.
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "could not find a free temporary directory name",
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A path for `name` inside the directory (not created).
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Remove the directory now, reporting failures (drop ignores them).
    pub fn close(mut self) -> io::Result<()> {
        let path = std::mem::take(&mut self.path);
        std::fs::remove_dir_all(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_on_drop_with_contents() {
        let dir = TempDir::new("mc-unit").unwrap();
        let p = dir.path().to_path_buf();
        std::fs::create_dir(p.join("sub")).unwrap();
        std::fs::write(p.join("sub/x.air"), b"x").unwrap();
        assert!(p.is_dir());
        drop(dir);
        assert!(!p.exists());
    }

    #[test]
    fn distinct_names_and_close() {
        let a = TempDir::new("mc-unit").unwrap();
        let b = TempDir::new("mc-unit").unwrap();
        assert_ne!(a.path(), b.path());
        let pa = a.path().to_path_buf();
        a.close().unwrap();
        assert!(!pa.exists());
    }

    #[test]
    fn removed_during_unwind() {
        let path = std::sync::Mutex::new(None);
        let r = std::panic::catch_unwind(|| {
            let dir = TempDir::new("mc-unit").unwrap();
            *path.lock().unwrap() = Some(dir.path().to_path_buf());
            panic!("boom");
        });
        assert!(r.is_err());
        let p = path.lock().unwrap().clone().unwrap();
        assert!(!p.exists());
    }
}
