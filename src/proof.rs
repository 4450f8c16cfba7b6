//! Proof that a request comes from inside a run (issue #34, docs/design.md
//! §2): a run's id is printed by `agents ls`, so naming it proves nothing.
//! Each run's environment also carries [`PROOF_VAR`], an HMAC of its id
//! under a key only this daemon's state directory holds. A hook, a mail's
//! sender, the `by` of a cancel and the parent of a run started from inside
//! a run are taken as that run's only with its proof; otherwise a hook is
//! refused and the rest are the user's.
//!
//! The proof is never stored in the database nor printed: it is computed
//! again from the key whenever it is checked, in constant time.

use std::io::{Read, Write};
use std::path::Path;

use ring::hmac;

/// The variable of a run's environment that carries its proof.
pub const PROOF_VAR: &str = "AGENTS_RUN_PROOF";

/// The run this process says it runs in (`AGENTS_RUN_ID`) and the proof
/// its environment carries, for a request to name as its sender.
pub fn claim() -> (Option<String>, Option<String>) {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    (var("AGENTS_RUN_ID"), var(PROOF_VAR))
}

/// Bytes of the key (SHA-256's block is 64; its output 32 is enough).
const KEY_LEN: usize = 32;

pub struct Proofs {
    key: hmac::Key,
}

impl Proofs {
    /// The key at `path`, made (owner-only, never through a link) when
    /// there is none or it is not one: runs started under a key that is
    /// gone can no longer prove themselves, which only costs their hooks.
    pub fn open(path: &Path) -> Result<Proofs, String> {
        let refused = |why: String| format!("cannot use {}: {why}", path.display());
        let bytes = match read_key(path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => make_key(path).map_err(|e| refused(e.to_string()))?,
            Err(e) => return Err(refused(e)),
        };
        Ok(Proofs::with_key(&bytes))
    }

    /// The key a daemon made, never a new one: for the demo, which writes
    /// its agents' first mail for them.
    pub fn read(path: &Path) -> Result<Proofs, String> {
        match read_key(path) {
            Ok(Some(bytes)) => Ok(Proofs::with_key(&bytes)),
            Ok(None) => Err(format!("cannot use {}: there is no key", path.display())),
            Err(e) => Err(format!("cannot use {}: {e}", path.display())),
        }
    }

    fn with_key(bytes: &[u8]) -> Proofs {
        Proofs {
            key: hmac::Key::new(hmac::HMAC_SHA256, bytes),
        }
    }

    /// The proof of `run`, for its environment.
    pub fn mint(&self, run: &str) -> String {
        crate::text::hex(hmac::sign(&self.key, run.as_bytes()).as_ref())
    }

    /// Whether `proof` is `run`'s.
    pub fn holds(&self, run: &str, proof: &str) -> bool {
        crate::text::unhex(proof).is_some_and(|tag| hmac::verify(&self.key, run.as_bytes(), &tag).is_ok())
    }

    /// `claimed` when `proof` proves it; else none (the user's).
    pub fn vouch(&self, claimed: Option<String>, proof: Option<&str>) -> Option<String> {
        claimed.filter(|run| proof.is_some_and(|p| self.holds(run, p)))
    }

    /// A start's parent: the run it names, else the run its environment
    /// proves it comes from.
    pub fn parent_of(&self, named: Option<&String>, env: &[(String, String)]) -> Option<String> {
        named.cloned().or_else(|| self.of_env(env))
    }

    /// The run an environment proves it comes from (`AGENTS_RUN_ID` and
    /// its proof), if any.
    pub fn of_env(&self, env: &[(String, String)]) -> Option<String> {
        let var = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let claimed = var("AGENTS_RUN_ID").filter(|r| !r.is_empty())?;
        self.holds(claimed, var(PROOF_VAR)?).then(|| claimed.to_string())
    }
}

/// The key, if a regular file of the right size holds it.
fn read_key(path: &Path) -> Result<Option<Vec<u8>>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path);
    let mut file = match file {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Err("it is a symbolic link; remove it".into());
        }
        Err(e) => return Err(e.to_string()),
    };
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("it is not a regular file; remove it".into());
    }
    let mut bytes = Vec::with_capacity(KEY_LEN);
    Read::by_ref(&mut file)
        .take(KEY_LEN as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    Ok((bytes.len() == KEY_LEN).then_some(bytes))
}

/// A new random key in a new file beside the old one, renamed over it.
fn make_key(path: &Path) -> std::io::Result<Vec<u8>> {
    use ring::rand::SecureRandom;
    use std::os::unix::fs::OpenOptionsExt;
    let mut bytes = vec![0u8; KEY_LEN];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| std::io::Error::other("no randomness from the system"))?;
    let fresh = path.with_extension(format!("new.{}", std::process::id()));
    let _ = std::fs::remove_file(&fresh);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(&fresh)?;
    file.write_all(&bytes)?;
    file.sync_all()?;
    std::fs::rename(&fresh, path)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_holds_for_its_run_only_and_across_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run-proof.key");
        let proofs = Proofs::open(&path).unwrap();
        let proof = proofs.mint("01RUNA");
        assert!(proofs.holds("01RUNA", &proof));
        assert!(!proofs.holds("01RUNB", &proof));
        assert!(!proofs.holds("01RUNA", &proof[..proof.len() - 2]));
        assert!(!proofs.holds("01RUNA", "not hex"));
        assert!(Proofs::open(&path).unwrap().holds("01RUNA", &proof));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn a_key_made_anew_refuses_the_old_proofs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run-proof.key");
        let old = Proofs::open(&path).unwrap().mint("01RUNA");
        std::fs::write(&path, b"short").unwrap();
        let proofs = Proofs::open(&path).unwrap();
        assert!(!proofs.holds("01RUNA", &old));
        assert_eq!(std::fs::read(&path).unwrap().len(), KEY_LEN);
    }

    #[test]
    fn a_link_in_the_keys_place_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run-proof.key");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &path).unwrap();
        let e = Proofs::open(&path).err().unwrap();
        assert!(e.contains("symbolic link"), "{e}");
    }

    #[test]
    fn an_environment_proves_only_the_run_it_carries_the_proof_of() {
        let dir = tempfile::tempdir().unwrap();
        let proofs = Proofs::open(&dir.path().join("k")).unwrap();
        let env = |run: &str, proof: String| vec![("AGENTS_RUN_ID".into(), run.into()), (PROOF_VAR.into(), proof)];
        assert_eq!(proofs.of_env(&env("A", proofs.mint("A"))), Some("A".into()));
        assert_eq!(proofs.of_env(&env("B", proofs.mint("A"))), None);
        assert_eq!(proofs.of_env(&[("AGENTS_RUN_ID".into(), "A".into())]), None);
        assert_eq!(
            proofs.vouch(Some("A".into()), Some(&proofs.mint("A"))),
            Some("A".into())
        );
        assert_eq!(proofs.vouch(Some("A".into()), None), None);
    }
}
