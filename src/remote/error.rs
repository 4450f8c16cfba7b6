//! What can go wrong reaching a host, each with a stable code.

use crate::api::{ApiError, ErrorCode};

#[derive(Debug, Clone, thiserror::Error)]
pub enum RemoteError {
    #[error("no host named '{0}'; add it with `agents hosts add {0} user@host`")]
    UnknownHost(String),
    #[error(
        "the host key of {entry} is not known ({key}); if that fingerprint is right, accept it with `agents hosts trust {name}`{notes}"
    )]
    HostKeyUnknown {
        name: String,
        entry: String,
        key: String,
        /// known_hosts entries of a kind we do not match (wildcards,
        /// `@cert-authority`), said plainly.
        notes: String,
    },
    #[error(
        "HOST KEY CHANGED for {entry}: it offers {key}, but {file} line {line} holds another key; not connecting (if the change is expected, remove the old entry with `ssh-keygen -R '{entry}'` and trust again)"
    )]
    HostKeyChanged {
        entry: String,
        key: String,
        file: String,
        line: usize,
    },
    #[error("the host key of {entry} ({key}) is marked @revoked in {file} line {line}; not connecting")]
    HostKeyRevoked {
        entry: String,
        key: String,
        file: String,
        line: usize,
    },
    #[error("host {name} ({address}) is unreachable: {why}")]
    Unreachable { name: String, address: String, why: String },
    #[error("{address} refused every key offered ({tried})")]
    AuthFailed { address: String, tried: String },
    #[error("the remote agents on {name} cannot serve: {why}")]
    RemoteUnavailable { name: String, why: String },
    #[error("the remote agents on {name} is incompatible: {why}")]
    Incompatible { name: String, why: String },
    #[error("{0}")]
    Other(String),
}

impl RemoteError {
    pub fn code(&self) -> ErrorCode {
        match self {
            RemoteError::UnknownHost(_) => ErrorCode::UnknownHost,
            RemoteError::HostKeyUnknown { .. } => ErrorCode::HostKeyUnknown,
            RemoteError::HostKeyChanged { .. } | RemoteError::HostKeyRevoked { .. } => ErrorCode::HostKeyChanged,
            RemoteError::Unreachable { .. } => ErrorCode::HostUnreachable,
            RemoteError::AuthFailed { .. } => ErrorCode::AuthFailed,
            RemoteError::RemoteUnavailable { .. } => ErrorCode::RemoteUnavailable,
            RemoteError::Incompatible { .. } => ErrorCode::VersionMismatch,
            RemoteError::Other(_) => ErrorCode::Internal,
        }
    }
}

impl From<RemoteError> for ApiError {
    fn from(e: RemoteError) -> ApiError {
        ApiError::new(e.code(), e.to_string())
    }
}
