//! Crate-private plumbing for the many records that are plain field lists: one [`Field`]
//! implementation per jute field type, and [`jute_record!`] to declare a record from its fields.
//!
//! Keeping null handling and enum checks here means every record treats them the same way.

use bytes::{Bytes, BytesMut};

use crate::{
    acl::Acl,
    jute::{Reader, Record, WriteJute},
    watch::{AddWatchMode, WatcherType},
    CreateMode, DecodeError, Stat,
};

/// A value that can be a field of a jute record.
pub(crate) trait Field: Sized {
    /// The smallest encoding, used to bound vector counts by the bytes left.
    const MIN_LEN: usize;
    /// Appends the value.
    fn put(&self, buf: &mut BytesMut);
    /// Reads the value; `field` names it in errors (`"Record.field"`).
    fn get(r: &mut Reader, field: &'static str) -> Result<Self, DecodeError>;
}

impl Field for i32 {
    const MIN_LEN: usize = 4;
    fn put(&self, buf: &mut BytesMut) {
        buf.put_jute_int(*self);
    }
    fn get(r: &mut Reader, field: &'static str) -> Result<Self, DecodeError> {
        r.read_i32(field)
    }
}

impl Field for i64 {
    const MIN_LEN: usize = 8;
    fn put(&self, buf: &mut BytesMut) {
        buf.put_jute_long(*self);
    }
    fn get(r: &mut Reader, field: &'static str) -> Result<Self, DecodeError> {
        r.read_i64(field)
    }
}

impl Field for bool {
    const MIN_LEN: usize = 1;
    fn put(&self, buf: &mut BytesMut) {
        buf.put_jute_bool(*self);
    }
    fn get(r: &mut Reader, field: &'static str) -> Result<Self, DecodeError> {
        r.read_bool(field)
    }
}

impl Field for String {
    const MIN_LEN: usize = 4;
    fn put(&self, buf: &mut BytesMut) {
        buf.put_jute_string(Some(self));
    }
    fn get(r: &mut Reader, field: &'static str) -> Result<Self, DecodeError> {
        r.read_string(field)
    }
}

impl Field for Option<String> {
    const MIN_LEN: usize = 4;
    fn put(&self, buf: &mut BytesMut) {
        buf.put_jute_string(self.as_deref());
    }
    fn get(r: &mut Reader, field: &'static str) -> Result<Self, DecodeError> {
        r.read_string_opt(field)
    }
}

impl Field for Bytes {
    const MIN_LEN: usize = 4;
    fn put(&self, buf: &mut BytesMut) {
        buf.put_jute_buffer(Some(self));
    }
    fn get(r: &mut Reader, field: &'static str) -> Result<Self, DecodeError> {
        r.read_buffer(field)
    }
}

impl Field for Option<Bytes> {
    const MIN_LEN: usize = 4;
    fn put(&self, buf: &mut BytesMut) {
        buf.put_jute_buffer(self.as_deref());
    }
    fn get(r: &mut Reader, field: &'static str) -> Result<Self, DecodeError> {
        r.read_buffer_opt(field)
    }
}

/// A non-null vector; the elements share the vector's field name in errors.
impl<T: Field> Field for Vec<T> {
    const MIN_LEN: usize = 4;
    fn put(&self, buf: &mut BytesMut) {
        buf.put_jute_vec(Some(self), |b, v| v.put(b));
    }
    fn get(r: &mut Reader, field: &'static str) -> Result<Self, DecodeError> {
        r.read_vec(field, T::MIN_LEN, |r| T::get(r, field))
    }
}

/// Nested records are written inline; their own field names are used in errors.
macro_rules! nested_record_field {
    ($($ty:ty = $min:expr;)*) => {$(
        impl Field for $ty {
            const MIN_LEN: usize = $min;
            fn put(&self, buf: &mut BytesMut) {
                Record::encode(self, buf);
            }
            fn get(r: &mut Reader, _field: &'static str) -> Result<Self, DecodeError> {
                <$ty as Record>::decode(r)
            }
        }
    )*};
}

nested_record_field! {
    Stat = Stat::LEN;
    Acl = Acl::MIN_LEN;
    crate::response::ClientInfo = 8;
}

/// Reads an `int` that must be one of an enum's codes.
fn get_enum<T>(
    r: &mut Reader,
    field: &'static str,
    from: impl FnOnce(i32) -> Option<T>,
) -> Result<T, DecodeError> {
    let offset = r.position();
    let v = r.read_i32(field)?;
    from(v).ok_or(DecodeError::InvalidValue {
        field,
        offset,
        value: v.into(),
    })
}

impl Field for CreateMode {
    const MIN_LEN: usize = 4;
    fn put(&self, buf: &mut BytesMut) {
        buf.put_jute_int(self.flags());
    }
    fn get(r: &mut Reader, field: &'static str) -> Result<Self, DecodeError> {
        get_enum(r, field, CreateMode::from_flags)
    }
}

impl Field for WatcherType {
    const MIN_LEN: usize = 4;
    fn put(&self, buf: &mut BytesMut) {
        buf.put_jute_int(self.code());
    }
    fn get(r: &mut Reader, field: &'static str) -> Result<Self, DecodeError> {
        get_enum(r, field, WatcherType::from_code)
    }
}

impl Field for AddWatchMode {
    const MIN_LEN: usize = 4;
    fn put(&self, buf: &mut BytesMut) {
        buf.put_jute_int(self.code());
    }
    fn get(r: &mut Reader, field: &'static str) -> Result<Self, DecodeError> {
        get_enum(r, field, AddWatchMode::from_code)
    }
}

/// Declares a record struct whose fields are encoded in order, and its [`Record`] impl.
///
/// Each field carries its jute name, used in errors as `"Struct.juteName"`. A record that
/// holds a secret starts with `manual_debug` and gets its `Debug` written by hand (redacted).
macro_rules! jute_record {
    (
        @derive [$($derive:ident)*]
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                pub $field:ident : $ty:ty = $jute:literal,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive($($derive,)* Clone, Default, PartialEq, Eq, Hash)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $crate::jute::Record for $name {
            fn encode(&self, buf: &mut ::bytes::BytesMut) {
                $( $crate::field::Field::put(&self.$field, buf); )*
            }

            fn decode(r: &mut $crate::jute::Reader) -> Result<Self, $crate::DecodeError> {
                // Struct expressions evaluate their fields in the order written: jute order.
                Ok($name {
                    $( $field: $crate::field::Field::get(
                        r,
                        concat!(stringify!($name), ".", $jute),
                    )?, )*
                })
            }
        }
    };
    (manual_debug $($record:tt)*) => {
        $crate::field::jute_record! { @derive [] $($record)* }
    };
    ($($record:tt)*) => {
        $crate::field::jute_record! { @derive [Debug] $($record)* }
    };
}

pub(crate) use jute_record;

#[cfg(test)]
mod tests {
    use super::*;

    jute_record! {
        /// A record for testing the macro.
        pub struct Probe {
            /// A mode.
            pub mode: CreateMode = "flags",
            /// Some strings.
            pub names: Vec<String> = "names",
        }
    }

    #[test]
    fn invalid_enum_value_names_the_field_and_offset() {
        let b = Bytes::from_static(&[0, 0, 0, 9, 0, 0, 0, 0]);
        assert_eq!(
            Probe::decode_exact(b, "Probe"),
            Err(DecodeError::InvalidValue {
                field: "Probe.flags",
                offset: 0,
                value: 9
            })
        );
    }

    #[test]
    fn null_vector_is_rejected_and_empty_is_kept() {
        let b = Bytes::from_static(&[0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(
            Probe::decode_exact(b, "Probe"),
            Err(DecodeError::UnexpectedNull {
                field: "Probe.names",
                offset: 4
            })
        );
        let b = Bytes::from_static(&[0, 0, 0, 2, 0, 0, 0, 0]);
        let p = Probe::decode_exact(b, "Probe").unwrap();
        assert_eq!(p.mode, CreateMode::PersistentSequential);
        assert!(p.names.is_empty());
    }

    #[test]
    fn null_string_inside_a_vector_is_rejected() {
        let b = Bytes::from_static(&[0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]);
        assert!(matches!(
            Probe::decode_exact(b, "Probe"),
            Err(DecodeError::UnexpectedNull {
                field: "Probe.names",
                offset: 8
            })
        ));
    }
}
