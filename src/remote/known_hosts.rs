//! Strict host-key verification against known_hosts (docs/design.md §8): a known
//! key passes; an unknown host or a changed key is a typed error carrying
//! the fingerprint; trusting is an explicit user action that never replaces
//! a key already recorded.
//!
//! Matching is russh's (`known_host_keys_path`: exact and hashed host
//! names, `[host]:port` for other ports). It has no wildcards,
//! `@cert-authority` or `@revoked`, so entries of those kinds that would
//! have matched are named in the error instead of being silently ignored,
//! and a key listed `@revoked` is refused here.

use std::path::{Path, PathBuf};

use russh::keys::known_hosts::known_host_keys_path;
use russh::keys::{Algorithm, HashAlg, PublicKey};

use super::error::RemoteError;
use super::target::glob;

/// `ED25519 SHA256:…`: the key's type and its SHA-256 fingerprint, as
/// `ssh-keygen -l` shows them.
pub fn describe(key: &PublicKey) -> String {
    format!("{} {}", key_type(key), fingerprint(key))
}

pub fn fingerprint(key: &PublicKey) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

fn key_type(key: &PublicKey) -> String {
    match key.algorithm() {
        Algorithm::Ed25519 => "ED25519".into(),
        Algorithm::Rsa { .. } => "RSA".into(),
        Algorithm::Ecdsa { .. } => "ECDSA".into(),
        other => other.as_str().to_ascii_uppercase(),
    }
}

/// The host field of an entry: `host` on port 22, else `[host]:port`.
fn entry_name(host: &str, port: u16) -> String {
    if port == 22 {
        host.to_string()
    } else {
        format!("[{host}]:{port}")
    }
}

/// Checks `key` for `host:port` against each file in turn.
pub fn verify(files: &[PathBuf], host: &str, port: u16, key: &PublicKey, name: &str) -> Result<(), RemoteError> {
    let entry = entry_name(host, port);
    let mut notes = Vec::new();
    for file in files {
        if let Some(line) = revoked_line(file, key) {
            return Err(RemoteError::HostKeyRevoked {
                entry,
                key: describe(key),
                file: file.display().to_string(),
                line,
            });
        }
        let recorded = known_host_keys_path(host, port, file)
            .map_err(|e| RemoteError::Other(format!("cannot read {}: {e}", file.display())))?;
        let mut other_types = Vec::new();
        for (line, known) in &recorded {
            if known == key {
                return Ok(());
            }
            let line = file_line(file, *line);
            if known.algorithm() == key.algorithm() {
                return Err(RemoteError::HostKeyChanged {
                    entry,
                    key: describe(key),
                    file: file.display().to_string(),
                    line,
                });
            }
            other_types.push(format!(
                "{} line {line} holds a {} key",
                file.display(),
                key_type(known)
            ));
        }
        notes.extend(other_types);
        notes.extend(unmatched_kinds(file, host, &entry));
    }
    Err(RemoteError::HostKeyUnknown {
        name: name.to_string(),
        entry,
        key: describe(key),
        notes: if notes.is_empty() {
            String::new()
        } else {
            format!("; note: {}", notes.join("; "))
        },
    })
}

/// Appends `key` for `host:port` to `file`, unless known_hosts already holds
/// a key of that type for the host: a changed key is refused, a known one is
/// left alone (returns false).
pub fn trust(file: &Path, host: &str, port: u16, key: &PublicKey) -> Result<bool, RemoteError> {
    match verify(&[file.to_path_buf()], host, port, key, "") {
        Ok(()) => return Ok(false),
        Err(RemoteError::HostKeyUnknown { .. }) => {}
        Err(other) => return Err(other),
    }
    if let Some(dir) = file.parent()
        && !dir.exists()
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| RemoteError::Other(format!("cannot create {}: {e}", dir.display())))?;
    }
    let openssh = key
        .to_openssh()
        .map_err(|e| RemoteError::Other(format!("cannot encode the host key: {e}")))?;
    // One line, as OpenSSH writes it (unhashed, so the user can read it),
    // after a newline if the file's last line lacks one.
    let existing = std::fs::read(file).unwrap_or_default();
    let mut line = String::new();
    if existing.last().is_some_and(|b| *b != b'\n') {
        line.push('\n');
    }
    line.push_str(&format!("{} {}\n", entry_name(host, port), openssh.trim()));
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(file)?;
        f.write_all(line.as_bytes())?;
        f.sync_all()
    };
    write().map_err(|e| RemoteError::Other(format!("cannot write {}: {e}", file.display())))?;
    Ok(true)
}

/// russh numbers known_hosts lines without counting comment lines; the
/// line a person finds in the file is this one.
fn file_line(file: &Path, russh_line: usize) -> usize {
    let Ok(text) = std::fs::read_to_string(file) else {
        return russh_line;
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#'))
        .nth(russh_line.saturating_sub(1))
        .map(|(i, _)| i + 1)
        .unwrap_or(russh_line)
}

/// The line of a `@revoked` entry listing exactly this key, if any.
fn revoked_line(file: &Path, key: &PublicKey) -> Option<usize> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().enumerate().find_map(|(i, line)| {
        let mut fields = line.split_whitespace();
        (fields.next() == Some("@revoked")).then_some(())?;
        let _hosts = fields.next()?;
        let _type = fields.next()?;
        let revoked = russh::keys::parse_public_key_base64(fields.next()?).ok()?;
        (revoked == *key).then_some(i + 1)
    })
}

/// Entries that OpenSSH might have used for this host but russh does not
/// match: wildcard or negated patterns, and `@cert-authority` lines.
fn unmatched_kinds(file: &Path, host: &str, entry: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut fields = line.split_whitespace();
        let Some(first) = fields.next() else { continue };
        let (marker, patterns) = if first.starts_with('@') {
            (Some(first), fields.next().unwrap_or(""))
        } else {
            (None, first)
        };
        let applies = patterns.split(',').any(|p| {
            let p = p.strip_prefix('!').unwrap_or(p).to_ascii_lowercase();
            (p.contains(['*', '?']) || marker.is_some())
                && (glob(p.as_bytes(), host.to_ascii_lowercase().as_bytes())
                    || glob(p.as_bytes(), entry.to_ascii_lowercase().as_bytes()))
        });
        if !applies {
            continue;
        }
        match marker {
            Some("@cert-authority") => notes.push(format!(
                "{} line {} is a @cert-authority entry for this host, which agents does not support",
                file.display(),
                i + 1
            )),
            Some(_) => {}
            None => notes.push(format!(
                "{} line {} is a wildcard or negated pattern, which agents does not match",
                file.display(),
                i + 1
            )),
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    // Two real ed25519 public keys (generated once with ssh-keygen for these tests).
    const KEY_A: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIA0Qy9CrfEO0G7F8oyJ4Qstd4NhEJIMcUKRnaNhM933P";
    const KEY_B: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIBNdHtuSBObmyVMcQw2YPgu09QFdtNsFGmFqrZ23PZac";

    fn key(b64: &str) -> PublicKey {
        russh::keys::parse_public_key_base64(b64).unwrap()
    }

    fn file_with(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known_hosts");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn a_known_key_passes_and_a_changed_one_is_refused_with_its_line() {
        let (_d, path) = file_with(&format!("# c\n[127.0.0.1]:2222 ssh-ed25519 {KEY_A}\n"));
        verify(std::slice::from_ref(&path), "127.0.0.1", 2222, &key(KEY_A), "h").unwrap();
        match verify(std::slice::from_ref(&path), "127.0.0.1", 2222, &key(KEY_B), "h") {
            Err(RemoteError::HostKeyChanged { line, key, .. }) => {
                assert_eq!(line, 2);
                assert!(key.starts_with("ED25519 SHA256:"), "{key}");
            }
            other => panic!("{other:?}"),
        }
        // Trust never replaces it.
        assert!(matches!(
            trust(&path, "127.0.0.1", 2222, &key(KEY_B)),
            Err(RemoteError::HostKeyChanged { .. })
        ));
    }

    #[test]
    fn an_unknown_host_is_refused_with_its_fingerprint_until_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ssh/known_hosts");
        let err = verify(std::slice::from_ref(&path), "10.1.1.1", 22, &key(KEY_A), "gpu").unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&fingerprint(&key(KEY_A))), "{text}");
        assert!(text.contains("agents hosts trust gpu"), "{text}");
        assert!(trust(&path, "10.1.1.1", 22, &key(KEY_A)).unwrap());
        assert!(!trust(&path, "10.1.1.1", 22, &key(KEY_A)).unwrap(), "already known");
        verify(&[path], "10.1.1.1", 22, &key(KEY_A), "gpu").unwrap();
    }

    #[test]
    fn unsupported_entries_are_named_and_revoked_keys_refused() {
        let (_d, path) = file_with(&format!(
            "*.lab ssh-ed25519 {KEY_B}\n@cert-authority *.lab ssh-ed25519 {KEY_B}\n"
        ));
        let text = verify(&[path], "gpu.lab", 22, &key(KEY_A), "g")
            .unwrap_err()
            .to_string();
        assert!(text.contains("line 1 is a wildcard"), "{text}");
        assert!(text.contains("line 2 is a @cert-authority"), "{text}");

        let (_d, path) = file_with(&format!(
            "@revoked * ssh-ed25519 {KEY_A}\ngpu.lab ssh-ed25519 {KEY_A}\n"
        ));
        assert!(matches!(
            verify(&[path], "gpu.lab", 22, &key(KEY_A), "g"),
            Err(RemoteError::HostKeyRevoked { line: 1, .. })
        ));
    }
}
