//! A private temporary directory that is removed when dropped (on success, on error returns
//! and during unwinding alike): a thin name over `tempfile::TempDir` (issue 36 item 5: the
//! well-kept crate replaces our own unique-name loop and `Drop`), keeping the small API the
//! compile driver and its tests use.

use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct TempDir {
    inner: tempfile::TempDir,
}

impl TempDir {
    /// A new empty directory under `std::env::temp_dir()`.
    pub fn new(prefix: &str) -> io::Result<TempDir> {
        TempDir::new_in(std::env::temp_dir(), prefix)
    }

    /// A new empty directory under `parent` whose name starts with `<prefix>-` (tempfile
    /// picks a fresh random suffix and creates it exclusively, so two guards never share a
    /// directory; the directory is private to the user on Unix).
    pub fn new_in(parent: impl AsRef<Path>, prefix: &str) -> io::Result<TempDir> {
        let inner = tempfile::Builder::new()
            .prefix(&format!("{prefix}-"))
            .tempdir_in(parent)?;
        Ok(TempDir { inner })
    }

    pub fn path(&self) -> &Path {
        self.inner.path()
    }

    /// A path for `name` inside the directory (not created).
    pub fn join(&self, name: &str) -> PathBuf {
        self.inner.path().join(name)
    }

    /// Remove the directory now, reporting failures (drop ignores them).
    pub fn close(self) -> io::Result<()> {
        self.inner.close()
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
