//! What the TLS files look like on disk, cheaply: enough to notice that one was replaced.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::TlsFiles;

/// One entry per configured file; `None` for a file that is missing (mid-rename, say).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Fingerprints(Vec<Option<FileFingerprint>>);

/// The inode catches a rename over the file (how Kubernetes swaps a mounted secret), the
/// change time catches an in-place copy that preserves size and mtime (`cp -p`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileFingerprint {
    device: u64,
    inode: u64,
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Fingerprints {
    pub(crate) fn of(files: &TlsFiles) -> Self {
        Fingerprints(files.paths().map(FileFingerprint::of).collect())
    }

    /// One entry per path, `None` ones included (so that the entries stay in place).
    pub(crate) fn of_paths<'a>(paths: impl IntoIterator<Item = Option<&'a PathBuf>>) -> Self {
        let of = |path: Option<&PathBuf>| path.and_then(|p| FileFingerprint::of(p));
        Fingerprints(paths.into_iter().map(of).collect())
    }
}

impl FileFingerprint {
    fn of(path: &Path) -> Option<Self> {
        let metadata = std::fs::metadata(path).ok()?;
        Some(FileFingerprint {
            device: metadata.dev(),
            inode: metadata.ino(),
            len: metadata.len(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        })
    }
}
