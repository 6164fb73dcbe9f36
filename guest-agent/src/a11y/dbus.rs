//! D-Bus calls to accessible objects, each bounded by a timeout.
//!
//! Plain method calls on the zbus connection rather than generated proxies:
//! no proxy object, no property cache and no signal match per object (the
//! prototype measured the cost of those), and the reply is decoded straight
//! into the types the walker needs.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use std::fmt;
use std::time::Duration;
use zbus::zvariant::{self, OwnedObjectPath, OwnedValue, Signature, Type};

pub const IFACE_ACCESSIBLE: &str = "org.a11y.atspi.Accessible";
pub const IFACE_ACTION: &str = "org.a11y.atspi.Action";
pub const IFACE_COMPONENT: &str = "org.a11y.atspi.Component";
pub const IFACE_IMAGE: &str = "org.a11y.atspi.Image";
pub const IFACE_SELECTION: &str = "org.a11y.atspi.Selection";
pub const IFACE_TABLE: &str = "org.a11y.atspi.Table";
pub const IFACE_TEXT: &str = "org.a11y.atspi.Text";
pub const IFACE_VALUE: &str = "org.a11y.atspi.Value";
pub const IFACE_PROPERTIES: &str = "org.freedesktop.DBus.Properties";

/// The path AT-SPI uses for "no object" in object references.
pub const NULL_PATH: &str = "/org/a11y/atspi/null";

/// How one call failed.
#[derive(Debug)]
pub enum CallError {
    /// No reply within the call timeout.
    Timeout,
    /// No reply before the walk's deadline (shorter than the call timeout).
    Deadline,
    /// An error reply, a closed connection or an undecodable reply.
    Failed(zbus::Error),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Timeout => f.write_str("no reply in time"),
            CallError::Deadline => f.write_str("no reply before the deadline"),
            CallError::Failed(e) => write!(f, "{e}"),
        }
    }
}

impl From<zbus::Error> for CallError {
    fn from(e: zbus::Error) -> Self {
        CallError::Failed(e)
    }
}

impl From<zvariant::Error> for CallError {
    fn from(e: zvariant::Error) -> Self {
        CallError::Failed(e.into())
    }
}

/// An accessible object: bus name and object path (AT-SPI's `(so)`).
pub type ObjRef = (String, OwnedObjectPath);

/// One connection to the AT-SPI bus.
#[derive(Clone, Debug)]
pub struct Bus {
    pub conn: zbus::Connection,
}

impl Bus {
    /// Calls `iface.method(body)` on `dest` at `path` and decodes the reply,
    /// giving up after `timeout`.
    pub async fn call<B, R>(
        &self,
        dest: &str,
        path: &str,
        iface: &str,
        method: &str,
        body: &B,
        timeout: Duration,
    ) -> Result<R, CallError>
    where
        B: serde::Serialize + zvariant::DynamicType,
        R: for<'d> Deserialize<'d> + zvariant::Type,
    {
        let call = self
            .conn
            .call_method(Some(dest), path, Some(iface), method, body);
        let msg = tokio::time::timeout(timeout, call)
            .await
            .map_err(|_| CallError::Timeout)??;
        Ok(msg.body().deserialize::<R>()?)
    }
}

/// An `a{ss}` reply with its entries in wire order (libatspi inserts them
/// into its hash table in that order, which decides OSWorld's attribute
/// order; a `HashMap` would lose it).
#[derive(Debug, Default)]
pub struct OrderedDict(pub Vec<(String, String)>);

impl Type for OrderedDict {
    const SIGNATURE: &'static Signature = &Signature::static_dict(&Signature::Str, &Signature::Str);
}

impl<'de> Deserialize<'de> for OrderedDict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedDict;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a{ss}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedDict, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some(entry) = map.next_entry::<String, String>()? {
                    out.push(entry);
                }
                Ok(OrderedDict(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A number property of a `GetAll` reply as f64 (AT-SPI declares the Value
/// properties as doubles; be lenient with integers).
pub fn number(props: &std::collections::HashMap<String, OwnedValue>, key: &str) -> Option<f64> {
    let v = props.get(key)?;
    if let Ok(x) = f64::try_from(v) {
        return Some(x);
    }
    if let Ok(x) = i32::try_from(v) {
        return Some(f64::from(x));
    }
    u32::try_from(v).ok().map(f64::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::ser::{Serialize, SerializeMap, Serializer};
    use zbus::zvariant::serialized::{Context, Format};
    use zbus::zvariant::{to_bytes, LE};

    /// An `a{ss}` written in the given order, as an application sends it.
    struct Wire(Vec<(&'static str, &'static str)>);

    impl Type for Wire {
        const SIGNATURE: &'static Signature = OrderedDict::SIGNATURE;
    }

    impl Serialize for Wire {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_map(Some(self.0.len()))?;
            for (k, v) in &self.0 {
                m.serialize_entry(k, v)?;
            }
            m.end()
        }
    }

    #[test]
    fn ordered_dict_keeps_wire_order() {
        let pairs = vec![("toolkit", "gtk"), ("z", "2"), ("a", "1"), ("z", "3")];
        let bytes = to_bytes(Context::new(Format::DBus, LE, 0), &Wire(pairs.clone())).unwrap();
        let (d, _): (OrderedDict, _) = bytes.deserialize().unwrap();
        let want: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(d.0, want);
    }
}
