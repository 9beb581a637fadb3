import BeaconCore
import ESPHome

extension FuzzTarget {
    /// An ESPHome proxy's bytes (SPEC §9). The first byte chooses: even, a plaintext session
    /// already answered (listening), fed the rest in two pieces cut where the second byte says;
    /// odd, an encrypted session that has sent its handshake, fed the rest — the proxy's hello
    /// and handshake answer as an attacker would write them. Traps when an advertisement's
    /// sighting carries more data than its AD structures held, or when a session that ended
    /// says nothing of why.
    static func esphome(_ bytes: UnsafeRawBufferPointer) {
        guard let mode = bytes.first else { return }
        let rest = Array(bytes.dropFirst())
        let t = FuzzSite.start
        var session: ProxySession
        if mode % 2 == 0 {
            session = ProxySession(settings: .init(), at: t)
            _ = session.opening()
            _ = session.receive(Self.helloResponse, at: t)
        } else {
            session = ProxySession(settings: .init(psk: [UInt8](repeating: 7, count: 32)), at: t)
            _ = session.opening()
        }
        let cut = rest.isEmpty ? 0 : Int(rest[0]) % rest.count
        var engine = FuzzSite.engine
        let receiver = ReceiverID("rx1") ?? .unlisted
        for (i, piece) in [rest[..<cut], rest[cut...]].enumerated() {
            let out = session.receive(piece, at: t + .seconds(Int64(i)))
            precondition((out.closed == nil) || session.closeReason != nil, "a session ended without a reason")
            for ad in out.advertisements {
                guard let s = try? ad.sighting(receiver: receiver, at: t) else { continue }
                let carried =
                    s.data.manufacturerData.reduce(0) { $0 + 2 + $1.payload.count }
                    + s.data.serviceData.reduce(0) { $0 + $1.payload.count }
                precondition(carried <= ad.data.count, "a sighting carries more than its advertisement held")
                engine.prepare([s])
                _ = engine.ingest(s, notAfter: t)
            }
        }
        _ = session.tick(at: t + .seconds(120))
        precondition(session.phase == .closed, "a proxy quiet for two minutes was not given up")
    }

    /// `HelloResponse` as aioesphomeapi frames it.
    static let helloResponse: [UInt8] = [0x00, 0x09, 0x02, 0x08, 0x01, 0x10, 0x0C, 0x22, 0x03, 0x65, 0x73, 0x70]
}
