//! RFC 4752's last step: once the Kerberos context is established, the server offers its
//! security layers in 4 wrapped bytes and the client answers with its choice, wrapped too.
//! ZooKeeper only ever needs "no security layer" (it protects nothing after SASL).

use crate::SaslError;

/// The bit of the layer mask that means "no security layer".
const NO_LAYER: u8 = 0x01;

/// The client's answer to the server's unwrapped offer: "no security layer", a maximum
/// message size of 0 (RFC 4752 §3.1: 0 when no layer is chosen), and no authorization id, so
/// the server authorizes the authenticated principal itself.
pub(crate) fn answer(offer: &[u8]) -> Result<[u8; 4], SaslError> {
    let [layers, ..] = offer else {
        return Err(protocol(
            "the server's security-layer offer is empty (RFC 4752 wants 4 bytes)",
        ));
    };
    if offer.len() != 4 {
        return Err(protocol(format!(
            "the server's security-layer offer has {} bytes, not 4",
            offer.len()
        )));
    }
    if layers & NO_LAYER == 0 {
        return Err(protocol(format!(
            "the server requires a SASL security layer (offer mask {layers:#04x}); \
             ZooKeeper clients use none"
        )));
    }
    Ok([NO_LAYER, 0, 0, 0])
}

/// A server message that breaks GSSAPI's security-layer negotiation.
pub(super) fn protocol(what: impl Into<String>) -> SaslError {
    SaslError::Protocol {
        mechanism: "GSSAPI",
        what: what.into().into_boxed_str(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offer_that_includes_no_layer_gets_no_layer_and_size_zero() {
        // What ZooKeeper's (Java's) GSSAPI server offers: every layer, 64 KiB buffers.
        assert_eq!(answer(&[0x07, 0x01, 0x00, 0x00]), Ok([0x01, 0, 0, 0]));
        assert_eq!(answer(&[0x01, 0x00, 0x00, 0x00]), Ok([0x01, 0, 0, 0]));
    }

    #[test]
    fn an_offer_without_no_layer_is_refused() {
        let e = answer(&[0x06, 0x01, 0x00, 0x00]).unwrap_err();
        assert!(
            e.to_string().contains("requires a SASL security layer"),
            "{e}"
        );
    }

    #[test]
    fn malformed_offers_are_errors_not_panics() {
        assert!(answer(&[]).is_err());
        assert!(answer(&[0x01]).is_err());
        assert!(answer(&[0x01, 0, 0, 0, 0]).is_err());
    }
}
