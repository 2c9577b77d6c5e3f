//! Files the unit tests write: each in a directory of its own under the system's
//! temporary directory, removed when its guard drops (the test run used to leave its
//! files behind on every machine that ran it).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory removed, with everything in it, when dropped.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    /// A new empty directory, unique to this process and call.
    pub(crate) fn new() -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tinyonnx-test-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        Scratch(dir)
    }

    /// Writes `bytes` to `name` in the directory; its path.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).expect("a temporary file");
        path.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One file in a [`Scratch`] directory of its own, removed when dropped; derefs to its
/// path.
pub(crate) struct TempFile {
    path: String,
    _dir: Scratch,
}

impl TempFile {
    pub(crate) fn new(name: &str, bytes: &[u8]) -> TempFile {
        let dir = Scratch::new();
        TempFile {
            path: dir.write(name, bytes),
            _dir: dir,
        }
    }
}

impl std::ops::Deref for TempFile {
    type Target = str;
    fn deref(&self) -> &str {
        &self.path
    }
}

impl AsRef<Path> for TempFile {
    fn as_ref(&self) -> &Path {
        Path::new(&self.path)
    }
}
