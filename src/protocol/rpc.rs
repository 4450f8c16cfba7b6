//! JSON-RPC 2.0 messages as carried in control frames.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// JSON-RPC's own code for application errors; our stable code travels in `data.code`.
pub const APPLICATION_ERROR: i64 = -32000;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Request {
    pub jsonrpc: String,
    /// Absent for notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    pub method: String,
    #[serde(default)]
    pub params: Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Response {
    pub jsonrpc: String,
    pub id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<ErrorData>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ErrorData {
    /// One of the stable codes of `api::ErrorCode`.
    pub code: String,
}

/// Any control message: a request or notification (has `method`) or a response.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request(Request),
    Response(Response),
}

impl Message {
    pub fn parse(bytes: &[u8]) -> Result<Message, serde_json::Error> {
        let value: Value = serde_json::from_slice(bytes)?;
        if value.get("method").is_some() {
            Ok(Message::Request(serde_json::from_value(value)?))
        } else {
            Ok(Message::Response(serde_json::from_value(value)?))
        }
    }
}

impl Request {
    pub fn new(id: u64, method: &str, params: Value) -> Request {
        Request {
            jsonrpc: "2.0".into(),
            id: Some(id),
            method: method.into(),
            params,
        }
    }

    pub fn notification(method: &str, params: Value) -> Request {
        Request {
            jsonrpc: "2.0".into(),
            id: None,
            method: method.into(),
            params,
        }
    }
}

impl Response {
    pub fn ok(id: u64, result: Value) -> Response {
        Response {
            jsonrpc: "2.0".into(),
            id,
            result: Some(result),
            error: None,
        }
    }

    pub fn err(id: u64, code: &str, message: String) -> Response {
        Response {
            jsonrpc: "2.0".into(),
            id,
            result: None,
            error: Some(ErrorObject {
                code: APPLICATION_ERROR,
                message,
                data: Some(ErrorData { code: code.into() }),
            }),
        }
    }
}

/// The notification (or request) a control frame carries, if any.
pub fn notification_of(frame: &super::Frame) -> Option<Request> {
    match frame {
        super::Frame::Control(bytes) => match Message::parse(bytes) {
            Ok(Message::Request(r)) => Some(r),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_responses_are_told_apart() {
        let req = Request::new(1, "runs.list", serde_json::json!({"all": true}));
        let bytes = serde_json::to_vec(&req).unwrap();
        assert_eq!(Message::parse(&bytes).unwrap(), Message::Request(req));

        let resp = Response::err(2, "unknown_run", "no run matches x".into());
        let bytes = serde_json::to_vec(&resp).unwrap();
        assert_eq!(Message::parse(&bytes).unwrap(), Message::Response(resp));

        assert!(Message::parse(b"[1,2").is_err());
        assert!(Message::parse(b"{\"id\":\"x\"}").is_err());
    }
}
