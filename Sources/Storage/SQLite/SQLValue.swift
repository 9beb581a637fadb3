/// A value bound to a statement's `?` parameter. The store keeps integers and text only:
/// times are nanoseconds, JSON is text.
public enum SQLValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case null
}

/// Swift values that bind as a parameter.
public protocol SQLBindable {
    var sqlValue: SQLValue { get }
}

extension Int64: SQLBindable {
    public var sqlValue: SQLValue { .integer(self) }
}

extension Int: SQLBindable {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
}

extension Bool: SQLBindable {
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
}

extension String: SQLBindable {
    public var sqlValue: SQLValue { .text(self) }
}

extension Optional: SQLBindable where Wrapped: SQLBindable {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}
