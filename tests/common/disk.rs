//! A small real disk for the full-disk tests and the soak bench: a tmpfs
//! mounted for the test (root with CAP_SYS_ADMIN), and a file that fills it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted at a directory until dropped.
pub struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts `size` (`8m`, `512m`) at `at`, made if missing; why not.
    pub fn mount(at: &Path, size: &str) -> Result<Tmpfs, String> {
        std::fs::create_dir_all(at).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(at)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        match out.status.success() {
            true => Ok(Tmpfs(at.to_path_buf())),
            false => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily if something still holds a file there (a supervisor
        // keeping an end, after a failed test): never leave a mount.
        let ok = Command::new("umount").arg(&self.0).status().is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// Fills the disk under `dir` with the file `name`, to the last byte.
pub fn fill(dir: &Path, name: &str) -> PathBuf {
    use std::io::Write as _;
    let path = dir.join(name);
    let mut file = std::fs::File::create(&path).expect("a file to fill the disk with");
    for size in [1 << 20, 4096, 1] {
        let block = vec![0u8; size];
        while file.write_all(&block).is_ok() {}
    }
    path
}
