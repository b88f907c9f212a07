//! A service instance as curator-x-discovery 5.4 keeps it in `basePath/name/id`: its JSON,
//! written byte for byte as Curator's `JsonInstanceSerializer` writes it and read as it reads.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::{jackson, uri_spec::UriPart, InstanceError, UriSpec};

/// How an instance's znode lives (Curator's `ServiceType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[non_exhaustive]
pub enum ServiceType {
    /// An EPHEMERAL znode named by the id: gone with the session (the default).
    #[default]
    Dynamic,
    /// An EPHEMERAL_SEQUENTIAL znode: the id plus ten digits.
    DynamicSequential,
    /// A PERSISTENT znode.
    Static,
    /// A PERSISTENT znode.
    Permanent,
}

impl ServiceType {
    /// The name in the JSON (`DYNAMIC`...).
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceType::Dynamic => "DYNAMIC",
            ServiceType::DynamicSequential => "DYNAMIC_SEQUENTIAL",
            ServiceType::Static => "STATIC",
            ServiceType::Permanent => "PERMANENT",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        // Java's Enum.valueOf: exact, upper case.
        [
            ServiceType::Dynamic,
            ServiceType::DynamicSequential,
            ServiceType::Static,
            ServiceType::Permanent,
        ]
        .into_iter()
        .find(|t| t.as_str() == s)
    }

    /// Whether the znode goes with the session that made it.
    pub fn is_ephemeral(self) -> bool {
        matches!(self, ServiceType::Dynamic | ServiceType::DynamicSequential)
    }
}

/// One registered instance of a service: what `ServiceDiscovery` writes and reads.
///
/// ```
/// use zk_recipes::{ServiceInstance, UriSpec};
///
/// let api = ServiceInstance::builder("api")
///     .id("7f1c2a9e-3b4d-4e5f-8a6b-0c1d2e3f4a5b")
///     .address("10.0.0.5")
///     .port(8080)
///     .registration_time_utc(1700000000000)
///     .build();
/// let json = api.to_json();
/// assert!(json.starts_with(r#"{"name":"api","id":"7f1c2a9e-3b4d-4e5f-8a6b-0c1d2e3f4a5b""#));
/// assert_eq!(ServiceInstance::from_json(json.as_bytes()).unwrap(), api);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceInstance {
    name: String,
    id: String,
    address: Option<String>,
    port: Option<u16>,
    ssl_port: Option<u16>,
    payload: Option<String>,
    registration_time_utc: i64,
    service_type: ServiceType,
    uri_spec: Option<UriSpec>,
    enabled: Option<bool>,
}

impl ServiceInstance {
    /// An instance of service `name`, with a fresh uuid as its id, registered now, DYNAMIC.
    pub fn builder(name: impl Into<String>) -> ServiceInstanceBuilder {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        ServiceInstanceBuilder(ServiceInstance {
            name: name.into(),
            id: crate::plumbing::protected::new_protected_id(),
            address: None,
            port: None,
            ssl_port: None,
            payload: None,
            registration_time_utc: now,
            service_type: ServiceType::Dynamic,
            uri_spec: None,
            enabled: None,
        })
    }

    /// The service's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The instance's id (its znode's name, but for DYNAMIC_SEQUENTIAL's suffix).
    pub fn id(&self) -> &str {
        &self.id
    }
    /// The address it serves on.
    pub fn address(&self) -> Option<&str> {
        self.address.as_deref()
    }
    /// The plain port.
    pub fn port(&self) -> Option<u16> {
        self.port
    }
    /// The TLS port.
    pub fn ssl_port(&self) -> Option<u16> {
        self.ssl_port
    }
    /// The payload, as compact JSON text (a Java peer's includes its `@class`).
    pub fn payload_json(&self) -> Option<&str> {
        self.payload.as_deref()
    }
    /// When it registered, in milliseconds since the epoch.
    pub fn registration_time_utc(&self) -> i64 {
        self.registration_time_utc
    }
    /// How its znode lives.
    pub fn service_type(&self) -> ServiceType {
        self.service_type
    }
    /// Its URI template.
    pub fn uri_spec(&self) -> Option<&UriSpec> {
        self.uri_spec.as_ref()
    }
    /// Whether it takes traffic (absent from Curator's default JSON: enabled).
    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    /// The JSON Curator 5.4's default `JsonInstanceSerializer` writes: its fields in its
    /// order, nulls written out, `enabled` only when it was set explicitly.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(256);
        let mut o = jackson::Object::begin(&mut out);
        o.str("name", Some(&self.name));
        o.str("id", Some(&self.id));
        o.str("address", self.address.as_deref());
        o.num("port", self.port.map(i64::from));
        o.num("sslPort", self.ssl_port.map(i64::from));
        o.raw("payload", self.payload.as_deref());
        o.num("registrationTimeUTC", Some(self.registration_time_utc));
        o.str("serviceType", Some(self.service_type.as_str()));
        let spec = self.uri_spec.as_ref().map(uri_spec_json);
        o.raw("uriSpec", spec.as_deref());
        if let Some(enabled) = self.enabled {
            o.bool("enabled", enabled);
        }
        o.end();
        out
    }

    /// Reads an instance as Curator does: unknown fields ignored, absent ones defaulted
    /// (empty name and id, time 0, DYNAMIC, enabled); a service type that is not one of
    /// Curator's upper-case names, or a field of the wrong kind, is an error.
    pub fn from_json(bytes: &[u8]) -> Result<Self, InstanceError> {
        let value: Value = serde_json::from_slice(bytes)?;
        let Value::Object(map) = value else {
            return Err(InstanceError::Field("the instance is not a JSON object"));
        };
        let service_type = match map.get("serviceType") {
            None | Some(Value::Null) => ServiceType::Dynamic,
            Some(Value::String(s)) => {
                ServiceType::parse(s).ok_or_else(|| InstanceError::ServiceType(s.clone()))?
            }
            Some(_) => return Err(InstanceError::Field("serviceType")),
        };
        Ok(ServiceInstance {
            name: opt_str(&map, "name")?.unwrap_or_default(),
            id: opt_str(&map, "id")?.unwrap_or_default(),
            address: opt_str(&map, "address")?,
            port: opt_port(&map, "port")?,
            ssl_port: opt_port(&map, "sslPort")?,
            payload: match map.get("payload") {
                None | Some(Value::Null) => None,
                Some(v) => {
                    let mut s = String::new();
                    jackson::value(&mut s, v);
                    Some(s)
                }
            },
            registration_time_utc: match map.get("registrationTimeUTC") {
                None | Some(Value::Null) => 0,
                Some(v) => v
                    .as_i64()
                    .ok_or(InstanceError::Field("registrationTimeUTC"))?,
            },
            service_type,
            uri_spec: read_uri_spec(map.get("uriSpec"))?,
            enabled: match map.get("enabled") {
                None | Some(Value::Null) => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => return Err(InstanceError::Field("enabled")),
            },
        })
    }
}

fn opt_str(map: &Map<String, Value>, key: &'static str) -> Result<Option<String>, InstanceError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(InstanceError::Field(key)),
    }
}

fn opt_port(map: &Map<String, Value>, key: &'static str) -> Result<Option<u16>, InstanceError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .map(Some)
            .ok_or(InstanceError::Field(key)),
    }
}

fn uri_spec_json(spec: &UriSpec) -> String {
    let mut out = String::from("{\"parts\":[");
    for (i, part) in spec.parts().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut o = jackson::Object::begin(&mut out);
        o.str("value", Some(&part.value));
        o.bool("variable", part.variable);
        o.end();
    }
    out.push_str("]}");
    out
}

fn read_uri_spec(v: Option<&Value>) -> Result<Option<UriSpec>, InstanceError> {
    let parts = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(o)) => match o.get("parts") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a.clone(),
            Some(_) => return Err(InstanceError::Field("uriSpec.parts")),
        },
        Some(_) => return Err(InstanceError::Field("uriSpec")),
    };
    let parts = parts
        .iter()
        .map(|p| {
            let value = p.get("value").and_then(Value::as_str);
            let variable = p.get("variable").and_then(Value::as_bool);
            match (value, variable) {
                (Some(value), variable) => Ok(UriPart {
                    value: value.to_owned(),
                    variable: variable.unwrap_or(false),
                }),
                (None, _) => Err(InstanceError::Field("uriSpec.parts.value")),
            }
        })
        .collect::<Result<_, _>>()?;
    Ok(Some(UriSpec::from_parts(parts)))
}

/// Builds a [`ServiceInstance`]; see [`ServiceInstance::builder`].
#[derive(Debug, Clone)]
pub struct ServiceInstanceBuilder(ServiceInstance);

impl ServiceInstanceBuilder {
    /// The id (a fresh uuid unless set).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.0.id = id.into();
        self
    }
    /// The address it serves on.
    pub fn address(mut self, address: impl Into<String>) -> Self {
        self.0.address = Some(address.into());
        self
    }
    /// The plain port.
    pub fn port(mut self, port: u16) -> Self {
        self.0.port = Some(port);
        self
    }
    /// The TLS port (the `scheme` of its URI becomes `https`).
    pub fn ssl_port(mut self, port: u16) -> Self {
        self.0.ssl_port = Some(port);
        self
    }
    /// The payload as JSON text. For a Java peer's `ServiceDiscovery<T>` to read it as its
    /// class, an object carries `"@class":"<Java class name>"`; strings, numbers and booleans
    /// are read bare.
    pub fn payload_json(mut self, json: &str) -> Result<Self, InstanceError> {
        let v: Value = serde_json::from_str(json)?;
        let mut s = String::new();
        jackson::value(&mut s, &v);
        self.0.payload = Some(s);
        Ok(self)
    }
    /// When it registered, in milliseconds since the epoch (now unless set).
    pub fn registration_time_utc(mut self, ms: i64) -> Self {
        self.0.registration_time_utc = ms;
        self
    }
    /// How its znode lives (DYNAMIC unless set).
    pub fn service_type(mut self, t: ServiceType) -> Self {
        self.0.service_type = t;
        self
    }
    /// Its URI template.
    pub fn uri_spec(mut self, spec: UriSpec) -> Self {
        self.0.uri_spec = Some(spec);
        self
    }
    /// Whether it takes traffic; written to the JSON only when set, as Curator's
    /// non-compatible serializer does.
    pub fn enabled(mut self, enabled: bool) -> Self {
        self.0.enabled = Some(enabled);
        self
    }
    /// The instance.
    pub fn build(self) -> ServiceInstance {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes Curator 5.4.0's default writer gave for this instance (catalogue.md, checked
    /// against the installed jar).
    const CURATOR: &str = r#"{"name":"api","id":"7f1c2a9e-3b4d-4e5f-8a6b-0c1d2e3f4a5b","address":"10.0.0.5","port":8080,"sslPort":null,"payload":null,"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://","variable":false},{"value":"address","variable":true},{"value":":","variable":false},{"value":"port","variable":true}]}}"#;

    fn api() -> ServiceInstance {
        ServiceInstance::builder("api")
            .id("7f1c2a9e-3b4d-4e5f-8a6b-0c1d2e3f4a5b")
            .address("10.0.0.5")
            .port(8080)
            .registration_time_utc(1_700_000_000_000)
            .uri_spec(UriSpec::parse("{scheme}://{address}:{port}").unwrap())
            .build()
    }

    #[test]
    fn writes_curators_bytes() {
        assert_eq!(api().to_json(), CURATOR);
    }

    #[test]
    fn reads_curators_bytes_back() {
        let read = ServiceInstance::from_json(CURATOR.as_bytes()).unwrap();
        assert_eq!(read, api());
        assert!(read.is_enabled());
    }

    #[test]
    fn payload_and_enabled_round_trip() {
        let i = ServiceInstance::builder("api")
            .id("x")
            .payload_json(r#"{ "@class": "java.util.HashMap", "zone": "eu\u001f" }"#)
            .unwrap()
            .enabled(false)
            .service_type(ServiceType::Static)
            .registration_time_utc(5)
            .build();
        let json = i.to_json();
        assert_eq!(
            json,
            r#"{"name":"api","id":"x","address":null,"port":null,"sslPort":null,"payload":{"@class":"java.util.HashMap","zone":"eu\u001F"},"registrationTimeUTC":5,"serviceType":"STATIC","uriSpec":null,"enabled":false}"#
        );
        assert_eq!(ServiceInstance::from_json(json.as_bytes()).unwrap(), i);
    }

    #[test]
    fn reads_as_leniently_and_strictly_as_curator() {
        let i = ServiceInstance::from_json(br#"{"extra":1}"#).unwrap();
        assert_eq!((i.name(), i.id(), i.registration_time_utc()), ("", "", 0));
        assert_eq!(i.service_type(), ServiceType::Dynamic);
        assert!(matches!(
            ServiceInstance::from_json(br#"{"serviceType":"dynamic"}"#),
            Err(InstanceError::ServiceType(_))
        ));
        assert!(ServiceInstance::from_json(br#"{"port":70000}"#).is_err());
        assert!(ServiceInstance::from_json(b"{").is_err());
        assert!(ServiceInstance::from_json(b"[]").is_err());
    }
}
