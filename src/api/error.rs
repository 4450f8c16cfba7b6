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
    Protocol,
    VersionMismatch,
    Storage,
    Internal,
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
            ErrorCode::Protocol => "protocol",
            ErrorCode::VersionMismatch => "version_mismatch",
            ErrorCode::Storage => "storage",
            ErrorCode::Internal => "internal",
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
            "protocol" => ErrorCode::Protocol,
            "version_mismatch" => ErrorCode::VersionMismatch,
            "storage" => ErrorCode::Storage,
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
