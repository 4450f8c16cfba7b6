//! JSON-RPC 2.0 messages as carried in control frames.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

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

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Response {
    pub jsonrpc: String,
    pub id: u64,
    /// The answer as it is on the wire: written once by who answers, read
    /// once by who knows its type (a list of thousands of runs is not
    /// built as a `Value` on either side).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Box<RawValue>>,
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

impl PartialEq for Response {
    fn eq(&self, other: &Response) -> bool {
        let raw = |r: &Response| r.result.as_ref().map(|v| v.get().to_string());
        (self.jsonrpc == other.jsonrpc && self.id == other.id && self.error == other.error) && raw(self) == raw(other)
    }
}

/// Every field a control message may have, borrowed from its bytes: a
/// message is read once, whichever it is.
#[derive(Deserialize)]
struct Envelope<'a> {
    jsonrpc: String,
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<ErrorObject>,
}

/// Any control message: a request or notification (has `method`) or a response.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request(Request),
    Response(Response),
}

impl Message {
    pub fn parse(bytes: &[u8]) -> Result<Message, serde_json::Error> {
        let Envelope {
            jsonrpc,
            id,
            method,
            params,
            result,
            error,
        } = serde_json::from_slice(bytes)?;
        if let Some(method) = method {
            let params = match params {
                Some(raw) => serde_json::from_str(raw.get())?,
                None => Value::Null,
            };
            return Ok(Message::Request(Request {
                jsonrpc,
                id,
                method,
                params,
            }));
        }
        let id = id.ok_or_else(|| <serde_json::Error as serde::de::Error>::missing_field("id"))?;
        Ok(Message::Response(Response {
            jsonrpc,
            id,
            result: result.map(RawValue::to_owned),
            error,
        }))
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
    /// An answer already written as JSON.
    pub fn ok(id: u64, result: Box<RawValue>) -> Response {
        Response {
            jsonrpc: "2.0".into(),
            id,
            result: Some(result),
            error: None,
        }
    }

    /// An answer, written as JSON here.
    pub fn answer(id: u64, result: &impl Serialize) -> Result<Response, serde_json::Error> {
        Ok(Response::ok(id, serde_json::value::to_raw_value(result)?))
    }

    /// The answer read as `T` (null when there is none).
    pub fn result_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.result.as_ref().map_or("null", |r| r.get()))
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
