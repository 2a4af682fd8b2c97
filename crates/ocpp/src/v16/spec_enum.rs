//! Enumerations whose wire spelling is fixed by the OCPP 1.6 schemas.

/// An enumeration with a fixed set of spec spellings.
pub trait SpecEnum: Copy + 'static {
    /// Every value, in schema order.
    const ALL: &'static [Self];
    /// The spec spelling.
    fn as_str(self) -> &'static str;
    /// The value with exactly this spelling (case-sensitive, as the schemas are).
    fn from_name(name: &str) -> Option<Self>;
}

/// Declares an enum with its spec spellings, `as_str`, `from_name`, `ALL` and `Display`.
macro_rules! spec_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant),+
        }

        impl $name {
            /// Every value, in schema order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The spec spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The value with exactly this spelling.
            pub fn from_name(name: &str) -> Option<$name> {
                match name {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl $crate::v16::SpecEnum for $name {
            const ALL: &'static [$name] = $name::ALL;

            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }

            fn from_name(name: &str) -> Option<$name> {
                $name::from_name(name)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

pub(crate) use spec_enum;
