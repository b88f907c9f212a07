//! JSON written byte for byte as Curator's Jackson writes it: compact, fields in the order
//! given, nulls written out, control characters as `\b \t \n \f \r` or `\u00XX` with
//! uppercase hex, `/` and non-ASCII left as they are. serde_json's writer differs (lowercase
//! hex), and a Curator peer comparing node bytes would see a change that is not one.

use serde_json::Value;

/// Appends `s` as a JSON string.
pub(crate) fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{0C}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => {
                const HEX: &[u8; 16] = b"0123456789ABCDEF";
                let b = c as u32 as usize;
                out.push_str("\\u00");
                out.push(HEX[b >> 4] as char);
                out.push(HEX[b & 0xF] as char);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends any JSON value, compact, object keys in the map's order.
pub(crate) fn value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(out, k);
                out.push(':');
                value(out, item);
            }
            out.push('}');
        }
    }
}

/// An object written field by field, in the order of the calls.
pub(crate) struct Object<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Object<'a> {
    pub(crate) fn begin(out: &'a mut String) -> Self {
        out.push('{');
        Object { out, first: true }
    }

    fn key(&mut self, k: &str) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        string(self.out, k);
        self.out.push(':');
        self.out
    }

    pub(crate) fn str(&mut self, k: &str, v: Option<&str>) {
        match v {
            Some(s) => string(self.key(k), s),
            None => self.key(k).push_str("null"),
        }
    }

    pub(crate) fn num(&mut self, k: &str, v: Option<i64>) {
        match v {
            Some(n) => self.key(k).push_str(&n.to_string()),
            None => self.key(k).push_str("null"),
        }
    }

    pub(crate) fn bool(&mut self, k: &str, v: bool) {
        self.key(k).push_str(if v { "true" } else { "false" });
    }

    /// A value already written as JSON (`null` when absent).
    pub(crate) fn raw(&mut self, k: &str, json: Option<&str>) {
        let out = self.key(k);
        out.push_str(json.unwrap_or("null"));
    }

    pub(crate) fn end(self) {
        self.out.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_jackson_does() {
        let mut out = String::new();
        string(&mut out, "a\"b\\c/d\u{1F}\t\n\r\u{08}\u{0C}é\u{7F}");
        assert_eq!(out, "\"a\\\"b\\\\c/d\\u001F\\t\\n\\r\\b\\fé\u{7F}\"");
    }

    #[test]
    fn objects_keep_the_order_written_and_write_nulls() {
        let mut out = String::new();
        let mut o = Object::begin(&mut out);
        o.str("name", Some("api"));
        o.num("sslPort", None);
        o.raw("payload", None);
        o.bool("enabled", true);
        o.end();
        assert_eq!(
            out,
            r#"{"name":"api","sslPort":null,"payload":null,"enabled":true}"#
        );
    }

    #[test]
    fn values_are_compact() {
        let v: Value =
            serde_json::from_str(r#"{ "@class" : "java.util.HashMap", "k" : [1, "x", null] }"#)
                .unwrap();
        let mut out = String::new();
        value(&mut out, &v);
        assert_eq!(out, r#"{"@class":"java.util.HashMap","k":[1,"x",null]}"#);
    }
}
