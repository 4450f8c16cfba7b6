//! Typed errors with stable codes, the same on every transport.

use std::fmt;

/// Stable error codes. The strings are a public contract (scripts match on them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    UnknownRun,
    AmbiguousRun,
    BadRequest,
    UnknownMethod,
    NotRunning,
    Conflict,
    DaemonUnavailable,
    /// A daemon holds the socket but does not answer (stopped, stuck).
    DaemonNotAnswering,
    Protocol,
    VersionMismatch,
    Storage,
    Internal,
    /// No transcript session (or run with a transcript) matches.
    UnknownSession,
    /// No host has that name (`agents hosts add` it first).
    UnknownHost,
    /// The host's key is not in known_hosts (`agents hosts trust` accepts it).
    HostKeyUnknown,
    /// The host offered a key other than the one known_hosts holds.
    HostKeyChanged,
    /// No SSH session could be set up: refused, timed out, or the link dropped.
    HostUnreachable,
    /// The host refused every key we hold.
    AuthFailed,
    /// The remote `agents` is missing or cannot serve.
    RemoteUnavailable,
    /// No `[routines.NAME]` in the config has that name.
    UnknownRoutine,
    /// The run's output log was pruned by retention: nothing to read back.
    LogPruned,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownRun => "unknown_run",
            ErrorCode::AmbiguousRun => "ambiguous_run",
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::UnknownMethod => "unknown_method",
            ErrorCode::NotRunning => "not_running",
            ErrorCode::Conflict => "conflict",
            ErrorCode::DaemonUnavailable => "daemon_unavailable",
            ErrorCode::DaemonNotAnswering => "daemon_not_answering",
            ErrorCode::Protocol => "protocol",
            ErrorCode::VersionMismatch => "version_mismatch",
            ErrorCode::Storage => "storage",
            ErrorCode::Internal => "internal",
            ErrorCode::UnknownSession => "unknown_session",
            ErrorCode::UnknownHost => "unknown_host",
            ErrorCode::HostKeyUnknown => "host_key_unknown",
            ErrorCode::HostKeyChanged => "host_key_changed",
            ErrorCode::HostUnreachable => "host_unreachable",
            ErrorCode::AuthFailed => "auth_failed",
            ErrorCode::RemoteUnavailable => "remote_unavailable",
            ErrorCode::UnknownRoutine => "unknown_routine",
            ErrorCode::LogPruned => "log_pruned",
        }
    }

    /// The CLI's exit status for a failure of this class, a public
    /// contract as the code is (README, "Exit codes"): 2 the request
    /// itself, 3 what it names, 4 the state of what it names, 5 the daemon,
    /// 6 a host, 7 the store or a fault of ours.
    pub fn exit_status(self) -> i32 {
        use ErrorCode::*;
        match self {
            BadRequest | UnknownMethod => 2,
            UnknownRun | AmbiguousRun | UnknownSession | UnknownHost | UnknownRoutine => 3,
            NotRunning | Conflict | LogPruned => 4,
            DaemonUnavailable | DaemonNotAnswering | Protocol | VersionMismatch => 5,
            HostKeyUnknown | HostKeyChanged | HostUnreachable | AuthFailed | RemoteUnavailable => 6,
            Storage | Internal => 7,
        }
    }

    pub fn parse(s: &str) -> ErrorCode {
        match s {
            "unknown_run" => ErrorCode::UnknownRun,
            "ambiguous_run" => ErrorCode::AmbiguousRun,
            "bad_request" => ErrorCode::BadRequest,
            "unknown_method" => ErrorCode::UnknownMethod,
            "not_running" => ErrorCode::NotRunning,
            "conflict" => ErrorCode::Conflict,
            "daemon_unavailable" => ErrorCode::DaemonUnavailable,
            "daemon_not_answering" => ErrorCode::DaemonNotAnswering,
            "protocol" => ErrorCode::Protocol,
            "version_mismatch" => ErrorCode::VersionMismatch,
            "storage" => ErrorCode::Storage,
            "unknown_session" => ErrorCode::UnknownSession,
            "unknown_host" => ErrorCode::UnknownHost,
            "host_key_unknown" => ErrorCode::HostKeyUnknown,
            "host_key_changed" => ErrorCode::HostKeyChanged,
            "host_unreachable" => ErrorCode::HostUnreachable,
            "auth_failed" => ErrorCode::AuthFailed,
            "remote_unavailable" => ErrorCode::RemoteUnavailable,
            "unknown_routine" => ErrorCode::UnknownRoutine,
            "log_pruned" => ErrorCode::LogPruned,
            _ => ErrorCode::Internal,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: crate::text::bounded(&message.into(), crate::text::MAX_DIAGNOSTIC),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorCode::BadRequest, message)
    }

    pub fn internal(err: impl fmt::Display) -> ApiError {
        ApiError::new(ErrorCode::Internal, err.to_string())
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}
