import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reading requests as their bytes arrive and answering them: each connection is read a
/// chunk at a time and parsed as it goes, so what one holds is bounded by its request's
/// limits, not by how much its client can send.
extension HTTPServer {
    /// Reads what the client sent and answers each request as soon as it is whole; false
    /// when the connection is to be dropped.
    func readAndProcess(_ c: HTTPConnection) -> Bool {
        var open = true
        // Sixteen chunks, then the other connections' turn (the socket stays readable).
        reading: for _ in 0..<16 {
            switch c.state {
            case .streaming, .closing:
                let got = c.read(limit: 65536)
                c.discardInput()
                if !got.open { open = false }
                if got.count < 65536 { break reading }
                continue
            case .waiting:
                break reading
            case .head, .body:
                break
            }
            if c.pendingOutput > settings.maxUnreadAnswerBytes { break }
            let room = readRoom(c)
            if room.bytes == 0 {
                if room.budgetSpent { pause(c) }
                break
            }
            let got = c.read(limit: room.bytes)
            if c.requestStarted == nil && !c.input.isEmpty { c.requestStarted = monotonicMillis() }
            process(c)
            account(c)
            if !got.open {
                open = false
                break
            }
            if got.count < min(room.bytes, 65536) { break }
        }
        if case .waiting = c.state { return true }  // the answer is owed even to a client done sending
        if !open {
            if case .streaming = c.state { return false }
            if c.pendingOutput == 0 { return false }
            c.peerDone = true  // write what is owed, then close
            c.state = .closing
        }
        return true
    }

    /// How much to read now: what the request's framing allows, within the connection's
    /// share and the shared body budget.
    private func readRoom(_ c: HTTPConnection) -> (bytes: Int, budgetSpent: Bool) {
        let own = max(0, Self.unbudgetedBytes - c.buffered)
        let shared = max(0, settings.bodyBudgetBytes - budgetUsed)
        var framing = 65536
        switch c.state {
        case .head: framing = max(0, HTTPRequestParser.maxHeadBytes + 4 - c.input.count)
        case let .body(_, .length(length)): framing = max(0, length - c.input.count)
        default: break
        }
        let bytes = min(framing, own + shared)
        return (bytes, bytes == 0 && framing > 0)
    }

    /// Parses and answers every complete request in the input, in order.
    func process(_ c: HTTPConnection) {
        while true {
            do throws(HTTPRequestParser.Failure) {
                switch c.state {
                case .head:
                    if c.pendingOutput > settings.maxUnreadAnswerBytes { return }
                    guard startBody(c, head: try parseHead(c)) else { return }
                case let .body(head, .length(length)):
                    guard c.input.count >= length else { return continueIfAsked(c, head) }
                    let body = Array(c.input.prefix(length))
                    c.consumeInput(length)
                    finishRequest(c, head: head, body: body)
                case .body(let head, .chunked(var decoder)):
                    c.state = .head  // so that the decoder's body is not copied as it grows
                    do {
                        try c.feedChunked(&decoder)
                    } catch {
                        c.state = .body(head, .chunked(decoder))
                        throw error
                    }
                    guard decoder.isDone else {
                        c.state = .body(head, .chunked(decoder))
                        return continueIfAsked(c, head)
                    }
                    finishRequest(c, head: head, body: decoder.body)
                case .streaming, .closing, .waiting:
                    return
                }
                if case .head = c.state {} else if case .body = c.state {} else { return }
            } catch {
                let reason: Refusals.Reason =
                    switch error.status {
                    case 413: .bodyTooLarge
                    case 431: .headTooLarge
                    default: .badRequest
                    }
                return fail(c, status: error.status, message: error.message, reason: reason)
            }
        }
    }

    /// The head at the start of the input, or nil until it has all come. The input is
    /// searched for the head's end only where it was not searched before.
    private func parseHead(_ c: HTTPConnection) throws(HTTPRequestParser.Failure) -> HTTPRequestParser.Head? {
        guard HTTPRequestParser.headEnd(c.input[...], from: c.headSearched) != nil else {
            c.headSearched = max(0, c.input.count - 3)
            if c.input.count > HTTPRequestParser.maxHeadBytes {
                throw .init(status: 431, message: "request head over 16 KiB")
            }
            return nil
        }
        guard case let .done(head, consumed) = try HTTPRequestParser.head(c.input[...]) else { return nil }
        if let length = head.contentLength, length > settings.maxBodyBytes {
            throw .init(status: 413, message: "request body of \(length) bytes is over the 1 MiB limit")
        }
        c.consumeInput(consumed)
        return head
    }

    /// Admits the request whose head has come (or refuses it before its body is read) and
    /// starts reading its body; false when there is nothing more to do now.
    private func startBody(_ c: HTTPConnection, head: HTTPRequestParser.Head?) -> Bool {
        guard let head else { return false }
        if let refusal = hooks.admit?(HTTPRequest(head: head, body: [], peer: c.peer)) {
            requestsServed.add(1, ordering: .relaxed)
            let reason: Refusals.Reason =
                switch refusal.status {
                case 401: .unauthorized
                case 403: .forbidden
                case 421: .hostNotAllowed
                default: .noRoute
                }
            refuse(c, with: refusal, reason: reason)
            return false
        }
        c.state = .body(
            head,
            head.chunked ? .chunked(ChunkedDecoder(limit: settings.maxBodyBytes)) : .length(head.contentLength ?? 0))
        c.sentContinue = false
        return true
    }

    private func finishRequest(_ c: HTTPConnection, head: HTTPRequestParser.Head, body: [UInt8]) {
        let now = monotonicMillis()
        c.state = .head
        c.requestStarted = c.input.isEmpty ? nil : now
        c.idleSince = now
        account(c)
        respond(c, head: head, body: body)
    }

    /// Answers with an error and closes the connection once the answer is written.
    func fail(_ c: HTTPConnection, status: Int, message: String, reason: Refusals.Reason) {
        let code =
            switch status {
            case 408: "request_timeout"
            case 413: "payload_too_large"
            case 431: "header_too_large"
            case 501: "not_implemented"
            default: "bad_request"
            }
        refuse(c, with: HTTPResponse.error(status: status, code: code, message: message), reason: reason)
    }

    private func refuse(_ c: HTTPConnection, with response: HTTPResponse, reason: Refusals.Reason) {
        c.queue(response.head(keepAlive: false))
        c.queue(response.body)
        c.state = .closing
        c.discardInput()
        account(c)
        var detail: Logger.Metadata = ["status": "\(response.status)"]
        if let address = c.address { detail["address"] = "\(address)" } else { detail["uid"] = "\(c.peer.uid)" }
        note(reason, detail)
    }

    private func continueIfAsked(_ c: HTTPConnection, _ head: HTTPRequestParser.Head) {
        if head.expectContinue && !c.sentContinue {
            c.sentContinue = true
            c.queue(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
    }

    private func respond(_ c: HTTPConnection, head: HTTPRequestParser.Head, body: [UInt8]) {
        let request = HTTPRequest(head: head, body: body, peer: c.peer)
        requestsServed.add(1, ordering: .relaxed)
        switch handler(request) {
        case let .response(answer):
            let response = withinBudget(answer)
            c.queue(response.head(keepAlive: head.keepAlive))
            if head.method != "HEAD" { c.queue(response.body) }
            if !head.keepAlive { c.state = .closing }
        case let .stream(response, opened):
            let id = StreamID(raw: nextStream)
            nextStream += 1
            streams[id.raw] = c.fd
            c.state = .streaming(id)
            c.discardInput()
            account(c)
            openStreams.add(1, ordering: .relaxed)
            c.queue(response.head(keepAlive: false, streaming: true))
            opened(id)
        case let .later(start):
            let id = LaterID(raw: nextLater)
            nextLater += 1
            waiting[id.raw] = c.fd
            c.state = .waiting(id, keepAlive: head.keepAlive, method: head.method)
            start { [weak self] response in
                guard let self else { return }
                self.answers.withLock { $0.append((id, response)) }
                self.wake()
            }
        }
    }

    /// The answer, or a 503 in its place when its body (over 64 KiB) would take the output
    /// queued on all connections past `maxQueuedOutputBytes`.
    private func withinBudget(_ response: HTTPResponse) -> HTTPResponse {
        guard response.body.count > 64 << 10,
            outputTally.bytes + response.body.count > settings.maxQueuedOutputBytes
        else { return response }
        note(.outputBudget, ["unread": "\(outputTally.bytes)", "answer": "\(response.body.count)"])
        var busy = HTTPResponse.error(
            status: 503, code: "answers_unread",
            message: "the daemon holds \(outputTally.bytes >> 20) MiB of answers its clients have not read; "
                + "try again when they have")
        busy.headers.append((name: "Retry-After", value: "5"))
        return busy
    }

    /// Writes the `later` answers that have come, and goes on with each connection's next
    /// requests. An answer for a connection that has closed meanwhile is dropped.
    func deliverAnswers() {
        let done = answers.withLock { list -> [(LaterID, HTTPResponse)] in
            defer { list.removeAll() }
            return list
        }
        for (id, response) in done {
            guard let fd = waiting.removeValue(forKey: id.raw), let c = connections[fd],
                case let .waiting(owed, keepAlive, method) = c.state, owed == id
            else { continue }
            let response = withinBudget(response)
            c.queue(response.head(keepAlive: keepAlive))
            if method != "HEAD" { c.queue(response.body) }
            c.state = keepAlive ? .head : .closing
            c.idleSince = monotonicMillis()
            process(c)
            finishWrite(c)
        }
    }
}
