//! Device tokens of the web view (`agents web tokens add|ls|rm`): one per
//! browser or phone, each shown once when it is made and kept only as its
//! SHA-256, in `web-tokens.json` of the state directory (owner only). A web
//! view served by the daemon (`[web] listen`) accepts these alone; one
//! started by hand accepts them beside the fresh token it prints. A token
//! removed is refused from the next request on: the file is read again
//! whenever it changed.

use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::api::{ApiError, ErrorCode};
use crate::paths::Paths;

/// A device's token as it is kept: its name and hash, never the token.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Device {
    pub name: String,
    /// SHA-256 of the token, as hex.
    pub hash: String,
    pub created_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Kept {
    devices: Vec<Device>,
}

/// Where the devices' hashes are kept.
fn file(paths: &Paths) -> PathBuf {
    paths.home.join("web-tokens.json")
}

/// The devices, as kept; none when the file is missing.
pub fn list(paths: &Paths) -> Result<Vec<Device>, ApiError> {
    read(&file(paths)).map(|kept| kept.devices)
}

fn read(path: &Path) -> Result<Kept, ApiError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            ApiError::new(
                ErrorCode::Storage,
                format!(
                    "{} is not a list of web tokens ({e}); remove it to start over",
                    path.display()
                ),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Kept::default()),
        Err(e) => Err(ApiError::new(
            ErrorCode::Storage,
            format!("cannot read {}: {e}", path.display()),
        )),
    }
}

/// Makes a token for the device `name`, keeps its hash, and returns the
/// token (shown this once).
pub fn add(paths: &Paths, name: &str) -> Result<String, ApiError> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || name.len() > 64 || !name.chars().all(plain) {
        return Err(ApiError::bad_request(format!(
            "a device's name is letters, digits, '-', '_' or '.', at most 64: {name:?}"
        )));
    }
    let path = file(paths);
    let mut kept = read(&path)?;
    if kept.devices.iter().any(|d| d.name == name) {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("a web token named {name} exists: remove it first (agents web tokens rm {name})"),
        ));
    }
    let token = super::fresh_token().map_err(|e| ApiError::internal(e.to_string()))?;
    kept.devices.push(Device {
        name: name.to_string(),
        hash: hash(&token),
        created_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    });
    write(&path, &kept)?;
    Ok(token)
}

/// Removes the device `name`'s token.
pub fn remove(paths: &Paths, name: &str) -> Result<(), ApiError> {
    let path = file(paths);
    let mut kept = read(&path)?;
    let before = kept.devices.len();
    kept.devices.retain(|d| d.name != name);
    if kept.devices.len() == before {
        return Err(ApiError::bad_request(format!(
            "no web token named {name} (agents web tokens ls)"
        )));
    }
    write(&path, &kept)
}

/// Written whole, owner only, then moved into place.
fn write(path: &Path, kept: &Kept) -> Result<(), ApiError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let failed = |e: std::io::Error| ApiError::new(ErrorCode::Storage, format!("cannot write {}: {e}", path.display()));
    let next = path.with_extension("json.next");
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&next)
        .map_err(failed)?;
    let bytes = serde_json::to_vec_pretty(kept).map_err(|e| ApiError::internal(e.to_string()))?;
    out.write_all(&bytes).and_then(|()| out.sync_all()).map_err(failed)?;
    std::fs::rename(&next, path).map_err(failed)
}

fn hash(token: &str) -> String {
    crate::text::hex(&Sha256::digest(token.as_bytes()))
}

/// The devices' hashes as a web view checks them, read again whenever the
/// file changed (each write is a new file moved into place: a new inode).
pub struct Accepted {
    path: PathBuf,
    seen: Mutex<(Option<Stamp>, Vec<String>)>,
}

/// What tells one revision of the file from another.
type Stamp = (u64, i64, i64);

fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.ino(), meta.mtime(), meta.mtime_nsec()))
}

impl Accepted {
    pub fn new(paths: &Paths) -> Accepted {
        Accepted {
            path: file(paths),
            seen: Mutex::new((None, Vec::new())),
        }
    }

    /// Whether `token` is a device's.
    pub fn admits(&self, token: &str) -> bool {
        let stamp = stamp(&self.path);
        let mut seen = self.seen.lock();
        if seen.0 != stamp || stamp.is_none() {
            // Unreadable: no device is admitted until it is right again.
            let hashes = read(&self.path)
                .map(|kept| kept.devices.into_iter().map(|d| d.hash).collect())
                .unwrap_or_default();
            *seen = (stamp, hashes);
        }
        let given = hash(token);
        // Every hash compared, each in time that depends on its length only.
        seen.1.iter().fold(false, |found, kept| {
            super::guard::same(given.as_bytes(), kept.as_bytes()) | found
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_token_is_kept_as_its_hash_and_refused_once_removed() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::at(dir.path().to_path_buf());
        let accepted = Accepted::new(&paths);
        let token = add(&paths, "phone").unwrap();
        let kept = std::fs::read_to_string(file(&paths)).unwrap();
        assert!(!kept.contains(&token) && kept.contains(&hash(&token)), "{kept}");
        assert!(accepted.admits(&token));
        assert!(!accepted.admits("not-it"));
        assert_eq!(add(&paths, "phone").unwrap_err().code, ErrorCode::Conflict);
        assert_eq!(add(&paths, "my phone").unwrap_err().code, ErrorCode::BadRequest);
        let laptop = add(&paths, "laptop").unwrap();
        let names: Vec<String> = list(&paths).unwrap().into_iter().map(|d| d.name).collect();
        assert_eq!(names, ["phone", "laptop"]);
        remove(&paths, "phone").unwrap();
        assert!(!accepted.admits(&token), "removed: refused from the next request");
        assert!(accepted.admits(&laptop));
        assert_eq!(remove(&paths, "phone").unwrap_err().code, ErrorCode::BadRequest);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file(&paths)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
