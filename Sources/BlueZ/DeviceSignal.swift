import BeaconCore

#if canImport(Glibc)
    import Glibc
#endif

/// A Device1 `PropertiesChanged` read straight from its wire bytes, as the signal stream
/// receives it: the object path and the properties that changed.
///
/// Parsing only the signature beacond subscribes to (`sa{sv}as`), with the values it uses,
/// costs a fraction of a generic unmarshal plus an iterator walk (BENCHMARKS.md); anything
/// else in the dictionary is skipped by its signature.
package struct DeviceSignal: Equatable {
    var device: DevicePath
    package var update: DeviceUpdate

    /// The object path the signal came from.
    package var path: String { device.text }

    /// Total length of the message that starts `buffer`, once its fixed header is there.
    package static func messageLength(_ buffer: UnsafeRawBufferPointer) -> Int? {
        guard buffer.count >= 16 else { return nil }
        let bigEndian = buffer[0] == UInt8(ascii: "B")
        var r = WireReader(buffer, at: 4, bigEndian: bigEndian)
        guard let body = r.u32(), r.u32() != nil, let fields = r.u32() else { return nil }
        let headerEnd = (16 + Int(fields) + 7) & ~7
        return headerEnd + Int(body)
    }

    /// Parses one whole message; nil for anything but a well-formed Device1 PropertiesChanged.
    package static func parse(_ message: UnsafeRawBufferPointer) -> DeviceSignal? {
        guard message.count >= 16, message[1] == 4 else { return nil }  // 4: signal
        let bigEndian = message[0] == UInt8(ascii: "B")
        guard bigEndian || message[0] == UInt8(ascii: "l") else { return nil }
        var r = WireReader(message, at: 12, bigEndian: bigEndian)
        guard let fieldsLength = r.u32().map(Int.init), 16 + fieldsLength <= message.count else { return nil }
        let fieldsEnd = 16 + fieldsLength
        var device: DevicePath?
        var rightInterface = false
        var rightMember = false
        var rightSignature = false
        while r.position < fieldsEnd {
            guard r.align(8), let code = r.u8(), let signature = r.readSignature() else { return nil }
            switch code {
            case 1:
                // A Device1's path, read where it lies; another object's is no device.
                guard let bytes = r.stringSpan() else { return nil }
                device = DevicePath(bytes: bytes)
            case 2: rightInterface = r.stringEquals("org.freedesktop.DBus.Properties") == true
            case 3: rightMember = r.stringEquals("PropertiesChanged") == true
            case 8:
                guard let body = r.readSignature() else { return nil }
                rightSignature = body.count == 8 && memcmp(body.baseAddress!, "sa{sv}as", 8) == 0
            default:
                guard r.skip(signature) != nil else { return nil }
            }
        }
        guard let device, rightInterface, rightMember, rightSignature, r.align(8) else { return nil }
        guard r.stringEquals("org.bluez.Device1") == true else { return nil }
        guard let update = properties(&r) else { return nil }
        return DeviceSignal(device: device, update: update)
    }

    /// The `a{sv}` of changed properties.
    private static func properties(_ r: inout WireReader) -> DeviceUpdate? {
        guard let length = r.u32().map(Int.init), r.align(8) else { return nil }
        let end = r.position + length
        guard end <= r.bytes.count else { return nil }
        var update = DeviceUpdate()
        while r.position < end {
            guard r.align(8), let keyLength = r.u32().map(Int.init), r.position + keyLength + 1 <= end else {
                return nil
            }
            let key = DeviceUpdate.Key(r.bytes.baseAddress! + r.position, count: keyLength)
            r.position += keyLength + 1
            guard let signature = r.readSignature() else { return nil }
            let type = String(decoding: signature, as: UTF8.self)
            switch (key, type) {
            case (.rssi, "n"): update.rssi = r.u16().map { Int(Int16(bitPattern: $0)) }
            case (.txPower, "n"): update.txPower = r.u16().map { Int(Int16(bitPattern: $0)) }
            case (.name, "s"): update.name = r.string()
            case (.address, "s"): update.address = r.string()
            case (.addressType, "s"): update.addressType = r.string()
            case (.kept, "b"): if r.u32() == 1 { update.kept = true }
            case (.manufacturerData, "a{qv}"):
                guard manufacturerData(&r, into: &update.data) else { return nil }
                update.manufacturerChanged = true
            case (.serviceData, "a{sv}"):
                guard serviceData(&r, into: &update.data) else { return nil }
                update.serviceChanged = true
            default:
                guard r.skip(signature) != nil else { return nil }
            }
        }
        return update
    }

    /// ManufacturerData's `a{qv}`, each `ay` written where it lies into the update's data.
    private static func manufacturerData(_ r: inout WireReader, into data: inout AdvertisementData) -> Bool {
        byteValues(&r, key: { $0.u16() }) { company, bytes in
            data.appendManufacturer(company: company, payload: bytes)
        }
    }

    /// ServiceData's `a{sv}`, the same way.
    private static func serviceData(_ r: inout WireReader, into data: inout AdvertisementData) -> Bool {
        byteValues(&r, key: { $0.stringSpan() }) { uuid, bytes in
            data.appendService(uuid: uuid, payload: bytes)
        }
    }

    /// An `a{Kv}` whose variants hold `ay` (other variants are skipped): the shape of both
    /// ManufacturerData (K = q) and ServiceData (K = s). False when malformed.
    private static func byteValues<Key>(
        _ r: inout WireReader, key readKey: (inout WireReader) -> Key?,
        _ each: (Key, UnsafeRawBufferPointer) -> Void
    ) -> Bool {
        guard let length = r.u32().map(Int.init), r.align(8) else { return false }
        let end = r.position + length
        while r.position < end {
            guard r.align(8), let key = readKey(&r), let signature = r.readSignature() else { return false }
            if signature.count == 2, signature[0] == UInt8(ascii: "a"), signature[1] == UInt8(ascii: "y") {
                guard let bytes = r.byteSpan() else { return false }
                each(key, bytes)
            } else {
                guard r.skip(signature) != nil else { return false }
            }
        }
        return true
    }
}

extension DeviceSignal {
    /// The sighting this signal gives for a device it is the first news of, as the scanner
    /// builds one (for the fuzzer: the bytes from the bus through to the engine).
    package func sighting(at t: Timestamp) -> Sighting? {
        var record = DeviceRecord(device: device, receiver: device.adapter, lastHeard: t)
        guard record.apply(update) else { return nil }
        return record.sighting(at: t)
    }
}
