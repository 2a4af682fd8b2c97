use serde_json::{Value, json};

use super::*;
use crate::error::ErrorCode;
use crate::v16::test_support::*;
use crate::v16::{Action, Request};

mod boot {
    use super::*;

    const A: Action = Action::BootNotification;

    fn full() -> Value {
        json!({
            "chargePointVendor": "Acme",
            "chargePointModel": "Wallbox 22",
            "chargePointSerialNumber": "CP-0001",
            "chargeBoxSerialNumber": "CB-0001",
            "firmwareVersion": "1.4.2",
            "iccid": "8931440400012345678",
            "imsi": "262011234567890",
            "meterType": "EM340",
            "meterSerialNumber": "M-99"
        })
    }

    fn boot(r: Request<'_>) -> BootNotificationRequest<'_> {
        match r {
            Request::BootNotification(b) => b,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn minimal_payload_parses() {
        let payload = json!({"chargePointVendor": "Acme", "chargePointModel": "W1"});
        accept(A, &payload, |r| {
            let b = boot(r);
            assert_eq!(
                (&*b.charge_point_vendor, &*b.charge_point_model),
                ("Acme", "W1")
            );
            assert_eq!(b.charge_point_serial_number, None);
            assert_eq!(b.charge_box_serial_number, None);
            assert_eq!((b.firmware_version, b.iccid, b.imsi), (None, None, None));
            assert_eq!((b.meter_type, b.meter_serial_number), (None, None));
        });
    }

    #[test]
    fn full_payload_parses() {
        accept(A, &full(), |r| {
            let b = boot(r);
            assert_eq!(b.charge_point_vendor, "Acme");
            assert_eq!(b.charge_point_model, "Wallbox 22");
            assert_eq!(b.charge_point_serial_number.as_deref(), Some("CP-0001"));
            assert_eq!(b.charge_box_serial_number.as_deref(), Some("CB-0001"));
            assert_eq!(b.firmware_version.as_deref(), Some("1.4.2"));
            assert_eq!(b.iccid.as_deref(), Some("8931440400012345678"));
            assert_eq!(b.imsi.as_deref(), Some("262011234567890"));
            assert_eq!(b.meter_type.as_deref(), Some("EM340"));
            assert_eq!(b.meter_serial_number.as_deref(), Some("M-99"));
        });
    }

    #[test]
    fn required_fields_missing_are_occurrence_violations() {
        check_required(A, &full(), &["/chargePointVendor", "/chargePointModel"]);
    }

    #[test]
    fn wrong_json_types_are_type_violations() {
        let fields = [
            "/chargePointVendor",
            "/chargePointModel",
            "/chargePointSerialNumber",
            "/chargeBoxSerialNumber",
            "/firmwareVersion",
            "/iccid",
            "/imsi",
            "/meterType",
            "/meterSerialNumber",
        ];
        let cases: Vec<(&str, Value)> = fields.iter().map(|f| (*f, json!(1))).collect();
        check_wrong_types(A, &full(), &cases);
    }

    #[test]
    fn string_lengths_follow_the_schema() {
        let limits = [
            ("/chargePointVendor", 20),
            ("/chargePointModel", 20),
            ("/chargePointSerialNumber", 25),
            ("/chargeBoxSerialNumber", 25),
            ("/firmwareVersion", 50),
            ("/iccid", 20),
            ("/imsi", 20),
            ("/meterType", 25),
            ("/meterSerialNumber", 25),
        ];
        check_max_lengths(A, &full(), &limits);
    }

    #[test]
    fn unknown_property_is_a_formation_violation() {
        check_unknown_property(A, &full(), &[""]);
    }

    #[test]
    fn non_object_payload_is_a_formation_violation() {
        check_not_object(A);
    }
}

mod heartbeat {
    use super::*;

    const A: Action = Action::Heartbeat;

    #[test]
    fn empty_object_parses() {
        accept(A, &json!({}), |r| assert_eq!(r, Request::Heartbeat));
    }

    #[test]
    fn any_property_is_a_formation_violation() {
        let v = reject(
            A,
            &json!({"x": 1}),
            ErrorCode::FormationViolation,
            "unknown property",
        );
        assert_eq!(v.description, "unknown property \"x\"");
    }

    #[test]
    fn non_object_payload_is_a_formation_violation() {
        check_not_object(A);
    }
}

mod data_transfer {
    use super::*;

    const A: Action = Action::DataTransfer;

    fn full() -> Value {
        json!({"vendorId": "com.example", "messageId": "GetPrice", "data": "{\"kWh\":12}"})
    }

    #[test]
    fn minimal_payload_parses() {
        accept(A, &json!({"vendorId": "com.example"}), |r| {
            let Request::DataTransfer(d) = r else {
                panic!("{r:?}")
            };
            assert_eq!(d.vendor_id, "com.example");
            assert_eq!((d.message_id, d.data), (None, None));
        });
    }

    #[test]
    fn full_payload_parses() {
        accept(A, &full(), |r| {
            let Request::DataTransfer(d) = r else {
                panic!("{r:?}")
            };
            assert_eq!(d.message_id.as_deref(), Some("GetPrice"));
            assert_eq!(d.data.as_deref(), Some("{\"kWh\":12}"));
        });
    }

    #[test]
    fn vendor_id_is_required() {
        check_required(A, &full(), &["/vendorId"]);
    }

    #[test]
    fn wrong_json_types_are_type_violations() {
        let cases = [
            ("/vendorId", json!(1)),
            ("/messageId", json!(2)),
            ("/data", json!({"kWh": 12})),
            ("/data", json!(null)),
        ];
        check_wrong_types(A, &full(), &cases);
    }

    #[test]
    fn string_lengths_follow_the_schema() {
        check_max_lengths(A, &full(), &[("/vendorId", 255), ("/messageId", 50)]);
        let long = with(&full(), "/data", json!("d".repeat(100_000)));
        accept(A, &long, |_| ());
    }

    #[test]
    fn unknown_property_is_a_formation_violation() {
        check_unknown_property(A, &full(), &[""]);
    }

    #[test]
    fn non_object_payload_is_a_formation_violation() {
        check_not_object(A);
    }
}
