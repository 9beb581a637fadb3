import BeaconConfig
import BeaconCore
import BeaconRuntime
import ESPHome
import Glibc
import Logging
import POSIX
import Publishing

/// One proxy's connection through its life: opened (its key read, its name resolved off the
/// thread), greeted, read, written to without blocking, and failed with a backoff.
extension ESPHomeProxies {
    func open(_ link: inout ProxyLink, _ resolver: HostResolver, at now: Timestamp) {
        // The key is read at each attempt: a key file fixed (or its permissions) is picked up.
        switch Self.key(of: link.spec) {
        case let .success(psk): link.psk = psk
        case let .failure(why): return fail(&link, why.message, at: now)
        }
        let completed = resolver.completed
        let address: SocketAddress
        switch resolver.address(host: link.spec.host, port: link.spec.port) {
        case let .ready(found): address = found
        case let .failed(why):
            link.resolvingSince = nil
            return fail(&link, why, at: now)
        case .waiting:
            // Woken when the lookup ends; looked at again in a few seconds all the same.
            link.resolvingSince = completed
            link.retryAt = now + .seconds(5)
            link.lastError = "\(link.spec.host) does not resolve yet: the name server has not answered"
            return
        }
        link.resolvingSince = nil
        switch TCPConnect.start(address) {
        case let .success(fd):
            (link.fd, link.connecting, link.attemptStarted) = (fd, true, now)
        case let .failure(why):
            fail(&link, "\(link.spec.host):\(link.spec.port): \(why)", at: now)
        }
    }

    /// How long a connection may wait to be accepted.
    static let connectTimeout = TimeSpan.seconds(10)

    /// Why a key file is readable by more than the daemon's user (its group or everyone), or nil:
    /// anyone who reads the key can listen to the proxy and speak for it.
    static func keyFileExposure(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & 0o077 != 0 else { return nil }
        return "readable by other users (mode \(String(info.st_mode & 0o777, radix: 8)))"
    }

    /// The proxy's API encryption key, nil for a plaintext one, or why it cannot be had.
    static func key(of spec: ESPHomeProxySpec) -> Result<[UInt8]?, ESPHomeProxySpec.KeyProblem> {
        let text: String
        if let file = spec.encryptionKeyFile {
            do {
                text = try readSecretFile(file)
            } catch {
                return .failure(.init(message: "cannot read encryption_key_file \(file): \(error)"))
            }
        } else if let inline = spec.encryptionKey {
            text = inline
        } else {
            return .success(nil)
        }
        return ESPHomeProxySpec.key(text).map { $0 }
    }

    func connected(_ link: inout ProxyLink, at now: Timestamp) {
        if let why = TCPConnect.finish(link.fd) {
            return fail(&link, "\(link.spec.host):\(link.spec.port): \(why)", at: now)
        }
        link.connecting = false
        var session = ProxySession(settings: .init(password: link.spec.password, psk: link.psk), at: now)
        let opening = session.opening()
        if let reason = session.closeReason { return fail(&link, reason, at: now) }
        link.session = session
        send(opening, &link, at: now)
    }

    func read(_ link: inout ProxyLink, into buffer: inout [UInt8], at now: Timestamp) {
        let n = buffer.withUnsafeMutableBytes { Glibc.read(link.fd, $0.baseAddress, $0.count) }
        if n == 0 { return fail(&link, link.session?.connectionClosed() ?? "the proxy closed the connection", at: now) }
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            return fail(&link, "read: \(String(cString: strerror(errno)))", at: now)
        }
        let wasListening = link.session?.phase == .listening
        guard let out = link.session?.receive(buffer[0..<n], at: now) else { return }
        // The backoff starts again only once this connection has lasted (`countFailure`).
        if !wasListening, let session = link.session, session.phase == .listening {
            link.connectedSince = now
            link.lastError = nil
        }
        handle(out, &link, at: now)
    }

    func handle(_ out: ProxySession.Output, _ link: inout ProxyLink, at now: Timestamp) {
        send(out.send, &link, at: now)
        guard link.fd >= 0 else { return }
        if !out.advertisements.isEmpty {
            let taken = link.rate.admit(out.advertisements.count, at: now)
            if taken < out.advertisements.count { shed(out.advertisements.count - taken, &link, at: now) }
            var batch: [Sighting] = []
            batch.reserveCapacity(taken)
            for ad in out.advertisements.prefix(taken) {
                do {
                    batch.append(try ad.sighting(receiver: link.receiver, at: now))
                } catch {
                    link.refused += 1
                    if link.refused == 1 || link.refused % 1000 == 0 {
                        logger.warning(
                            "esphome.advertisement_refused",
                            metadata: [
                                "proxy": "\(link.spec.receiver)", "reason": "\(error)", "count": "\(link.refused)",
                            ])
                    }
                }
            }
            link.advertisements += batch.count
            if !batch.isEmpty { deliver(batch) }
        }
        if link.session.map({ $0.phase == .listening && link.identityLogged == false }) == true,
            let identity = link.session?.identity, !identity.model.isEmpty
        {
            link.identityLogged = true
            logger.info(
                "esphome.connected",
                metadata: [
                    "proxy": "\(link.spec.receiver)", "name": "\(identity.name)", "model": "\(identity.model)",
                    "esphome": "\(identity.esphomeVersion)", "host": "\(link.spec.host):\(link.spec.port)",
                ])
        }
        if let reason = out.closed { fail(&link, reason, at: now) }
    }

    /// Queues `bytes` for the proxy and writes what its socket takes now; the rest is written
    /// when it polls writable. A proxy that reads nothing (flooding pings, never reading the
    /// answers) is given up once `ProxyLink.unsentLimit` bytes wait, rather than holding the
    /// thread every other proxy is read on.
    func send(_ bytes: [UInt8], _ link: inout ProxyLink, at now: Timestamp) {
        guard !bytes.isEmpty, link.fd >= 0 else { return }
        link.unsent += bytes
        flush(&link, at: now)
    }

    func flush(_ link: inout ProxyLink, at now: Timestamp) {
        var written = 0
        while written < link.unsent.count {
            let n = link.unsent.withUnsafeBytes {
                Glibc.send(link.fd, $0.baseAddress! + written, $0.count - written, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if n > 0 {
                written += n
            } else if n < 0, errno == EINTR {
                continue
            } else if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                break
            } else {
                return fail(&link, "send: \(String(cString: strerror(errno)))", at: now)
            }
        }
        link.unsent.removeFirst(written)
        if link.unsent.count > ProxyLink.unsentLimit {
            fail(&link, "the proxy does not read what beacond sends (\(link.unsent.count) bytes waiting)", at: now)
        }
    }

    /// A goodbye at a stop or a reload: what the socket takes now, nothing waited for.
    func sendOnce(_ bytes: [UInt8], on fd: Int32) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    /// Advertisements over `AdvertisementRate.perSecond` are dropped, counted, and told at
    /// once then at most once a minute.
    private func shed(_ count: Int, _ link: inout ProxyLink, at now: Timestamp) {
        guard let report = link.rate.untold.add(count, at: now) else { return }
        var metadata = report.metadata(
            count: "advertisements", at: now,
            next:
                "more than \(AdvertisementRate.perSecond) a second is no proxy's radio: check what answers at its address"
        )
        metadata["proxy"] = "\(link.spec.receiver)"
        logger.warning("esphome.advertisements_shed", metadata: metadata)
    }

    func fail(_ link: inout ProxyLink, _ reason: String, at now: Timestamp) {
        if link.fd >= 0 { close(link.fd) }
        let wasListening = link.connectedSince != nil
        let flapped = link.countFailure(at: now)
        (link.fd, link.connecting, link.session, link.connectedSince, link.unsent) = (-1, false, nil, nil, [])
        link.identityLogged = false
        var random = SystemRandomNumberGenerator()
        let wait = Backoff.delay(
            failures: link.failures, first: .seconds(1), longest: .seconds(60),
            jitter: Double.random(in: 0..<1, using: &random))
        link.retryAt = now + wait
        defer { link.lastError = reason }
        // A proxy that keeps dropping soon after Hello: its first drop told as any other, then
        // a count a minute.
        if flapped, let report = link.flaps.add(1, at: now), report.since != nil {
            var metadata = report.metadata(
                count: "drops", at: now,
                next: "is another client (Home Assistant) taking the proxy's API connection? told at most once a minute"
            )
            metadata["proxy"] = "\(link.spec.receiver)"
            metadata["reason"] = "\(reason)"
            metadata["retry_in"] = "\(wait)"
            logger.warning("esphome.flapping", metadata: metadata)
            return
        }
        // Told when it changes: a proxy down for a day is one line, not 1,440.
        if flapped ? link.flaps.untold == 0 : reason != link.lastError || wasListening {
            logger.warning(
                "esphome.disconnected",
                metadata: [
                    "proxy": "\(link.spec.receiver)", "host": "\(link.spec.host):\(link.spec.port)",
                    "reason": "\(reason)",
                    "retry_in": "\(wait)",
                ])
        }
    }
}
