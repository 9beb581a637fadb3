extension JSONValue {
    /// Compact JSON text, as `JSONTextWriter` writes it (numbers and escapes there).
    public var serialized: String {
        var w = JSONTextWriter()
        w.value(self)
        return w.text
    }
}
