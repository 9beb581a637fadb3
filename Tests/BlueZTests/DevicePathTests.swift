import Testing

@testable import BlueZ

/// The device table's key, read from a Device1's object path (issue 43: no `String` per signal).
@Suite struct DevicePathTests {
    @Test func aDevicePathIsItsAdapterAndAddress() throws {
        let path = try #require(DevicePath("/org/bluez/hci1/dev_C3_11_22_33_44_5F"))
        #expect(path.adapter == "hci1" && path.address == 0xC311_2233_445F)
        #expect(path.addressText == "C3:11:22:33:44:5F")
        #expect(path.text == "/org/bluez/hci1/dev_C3_11_22_33_44_5F")
        #expect(DevicePath(path.text) == path)
    }

    @Test func otherObjectPathsAreNoDevices() {
        for path in [
            "/org/bluez/hci0", "/org/bluez/hci0/dev_C3_11_22_33_44", "/org/bluez/hci0/dev_C3-11-22-33-44-55",
            "/org/bluez/hci0/dev_C3_11_22_33_44_55/service0001", "/org/bluez//dev_C3_11_22_33_44_55",
            "/org/bluez/hci0/x/dev_C3_11_22_33_44_55", "/org/other/hci0/dev_C3_11_22_33_44_55",
            "/org/bluez/hci0/dev_G3_11_22_33_44_55",
        ] {
            #expect(DevicePath(path) == nil, "\(path)")
        }
    }
}
