extension HTTPServer {
    /// What the server asks and tells its owner, each on the server's thread: given at
    /// construction, so that none changes while it serves (an admission check set twice, or
    /// after the first request, is not possible).
    public struct Hooks: Sendable {
        /// Each request's head (its body empty) before the body is read: a response refuses
        /// the request at once (a 403 before a megabyte is taken).
        public let admit: (@Sendable (HTTPRequest) -> HTTPResponse?)?
        /// A stream closed, for any reason.
        public let onStreamClosed: (@Sendable (StreamID) -> Void)?
        /// A stream that asked (`notifyWhenDrained`) has written its output down to
        /// `drainedBytes`: the time to send it more of a backlog.
        public let onStreamDrained: (@Sendable (StreamID) -> Void)?
        /// About every `tickInterval` ms.
        public let onTick: (@Sendable () -> Void)?

        public init(
            admit: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil,
            onStreamClosed: (@Sendable (StreamID) -> Void)? = nil,
            onStreamDrained: (@Sendable (StreamID) -> Void)? = nil, onTick: (@Sendable () -> Void)? = nil
        ) {
            (self.admit, self.onStreamClosed, self.onStreamDrained, self.onTick) = (
                admit, onStreamClosed, onStreamDrained, onTick
            )
        }
    }
}
