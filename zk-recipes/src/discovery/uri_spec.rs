//! Curator's `UriSpec`: a template such as `{scheme}://{address}:{port}` kept with a service
//! instance, so that every client renders the instance's URI the same way.

use std::collections::HashMap;

use super::{instance::ServiceInstance, InstanceError};

/// One piece of a [`UriSpec`]: literal text, or the name of a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriPart {
    /// The literal text, or the variable's name.
    pub value: String,
    /// Whether `value` names a variable.
    pub variable: bool,
}

/// A URI template in Curator's syntax: `{name}` is a variable, everything else literal.
///
/// Built-in variables: `scheme` (`https` when the instance has an SSL port, else `http`),
/// `name`, `id`, `address`, `port`, `ssl-port`, `registration-time-utc`, `service-type`, and
/// `[` / `]` for literal braces. Variables given to [`render`](Self::render) override them;
/// unknown ones render as nothing.
///
/// ```
/// use zk_recipes::{ServiceInstance, UriSpec};
///
/// let spec = UriSpec::parse("{scheme}://{address}:{port}").unwrap();
/// let api = ServiceInstance::builder("api")
///     .id("7f1c")
///     .address("10.0.0.5")
///     .port(8080)
///     .build();
/// assert_eq!(spec.render(&api, &Default::default()), "http://10.0.0.5:8080");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriSpec {
    parts: Vec<UriPart>,
}

impl UriSpec {
    /// Parses a template. Literals are kept as written, variable names trimmed; `{}` adds
    /// nothing; a nested or unmatched brace is an error, as in Curator.
    pub fn parse(template: &str) -> Result<Self, InstanceError> {
        let mut parts = Vec::new();
        let mut current = String::new();
        let mut in_variable = false;
        for c in template.chars() {
            match (c, in_variable) {
                ('{', false) | ('}', true) => {
                    let text = std::mem::take(&mut current);
                    let value = if in_variable {
                        text.trim().to_owned()
                    } else {
                        text
                    };
                    if !value.is_empty() {
                        parts.push(UriPart {
                            value,
                            variable: in_variable,
                        });
                    }
                    in_variable = !in_variable;
                }
                ('{', true) | ('}', false) => {
                    return Err(InstanceError::UriSpec(format!(
                        "unbalanced '{c}' in {template:?}"
                    )))
                }
                (c, _) => current.push(c),
            }
        }
        if in_variable {
            return Err(InstanceError::UriSpec(format!(
                "unclosed '{{' in {template:?}"
            )));
        }
        if !current.is_empty() {
            parts.push(UriPart {
                value: current,
                variable: false,
            });
        }
        Ok(UriSpec { parts })
    }

    /// A template from its parts, as read from an instance's JSON.
    pub fn from_parts(parts: Vec<UriPart>) -> Self {
        UriSpec { parts }
    }

    /// The template's parts, in order.
    pub fn parts(&self) -> &[UriPart] {
        &self.parts
    }

    /// The URI for `instance`, with `variables` overriding the built-ins.
    pub fn render(
        &self,
        instance: &ServiceInstance,
        variables: &HashMap<String, String>,
    ) -> String {
        let mut out = String::new();
        for part in &self.parts {
            if !part.variable {
                out.push_str(&part.value);
            } else if let Some(v) = variables.get(&part.value) {
                out.push_str(v);
            } else {
                builtin(&mut out, instance, &part.value);
            }
        }
        out
    }
}

fn builtin(out: &mut String, instance: &ServiceInstance, name: &str) {
    let number = |n: Option<u16>| n.map(|n| n.to_string()).unwrap_or_default();
    match name {
        "scheme" => out.push_str(match instance.ssl_port() {
            Some(_) => "https",
            None => "http",
        }),
        "name" => out.push_str(instance.name()),
        "id" => out.push_str(instance.id()),
        "address" => out.push_str(instance.address().unwrap_or("")),
        "port" => out.push_str(&number(instance.port())),
        "ssl-port" => out.push_str(&number(instance.ssl_port())),
        "registration-time-utc" => out.push_str(&instance.registration_time_utc().to_string()),
        "service-type" => out.push_str(&instance.service_type().as_str().to_lowercase()),
        "[" => out.push('{'),
        "]" => out.push('}'),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lits(spec: &UriSpec) -> Vec<(&str, bool)> {
        spec.parts()
            .iter()
            .map(|p| (p.value.as_str(), p.variable))
            .collect()
    }

    #[test]
    fn parses_as_curator_does() {
        let spec = UriSpec::parse("{scheme}://{ address }:{port}{} /x").unwrap();
        assert_eq!(
            lits(&spec),
            [
                ("scheme", true),
                ("://", false),
                ("address", true),
                (":", false),
                ("port", true),
                (" /x", false)
            ]
        );
        assert!(UriSpec::parse("{a{b}}").is_err());
        assert!(UriSpec::parse("a}").is_err());
        assert!(UriSpec::parse("{a").is_err());
    }

    #[test]
    fn renders_built_ins_and_overrides() {
        let spec = UriSpec::parse("{scheme}://{address}:{ssl-port}/{[}x{]}{who}").unwrap();
        let i = ServiceInstance::builder("api").ssl_port(443).build();
        assert_eq!(spec.render(&i, &HashMap::new()), "https://:443/{x}");
        let vars = HashMap::from([("who".to_owned(), "me".to_owned())]);
        assert_eq!(spec.render(&i, &vars), "https://:443/{x}me");
        let t = UriSpec::parse("{service-type}").unwrap();
        assert_eq!(t.render(&i, &HashMap::new()), "dynamic");
    }
}
