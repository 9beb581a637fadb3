/// A position in the YAML text, 1-based, as editors show it.
struct Mark: Equatable {
    var line: Int
    var column: Int
}

/// A composed YAML node. Every node keeps the mark where it starts, which is what lets a
/// configuration error name `file:line:column`; typing (is `30` a number? is `"30"`?) is
/// left to `NodeReader`, which knows what each key expects.
enum Node {
    case scalar(Scalar)
    case mapping(Mapping)
    case sequence(NodeList)

    struct Scalar {
        enum Style { case plain, singleQuoted, doubleQuoted, literal, folded }
        var string: String
        /// Quoted scalars are always strings; only plain ones can read as numbers, booleans or null.
        var style: Style
        var mark: Mark
    }

    /// Keys and values in the order written (duplicates are refused while composing).
    struct Mapping: Sequence {
        var pairs: [(key: Node, value: Node)]
        var mark: Mark
        func makeIterator() -> IndexingIterator<[(key: Node, value: Node)]> { pairs.makeIterator() }
    }

    struct NodeList: RandomAccessCollection {
        var nodes: [Node]
        var mark: Mark
        var startIndex: Int { nodes.startIndex }
        var endIndex: Int { nodes.endIndex }
        subscript(position: Int) -> Node { nodes[position] }
    }

    var mark: Mark {
        switch self {
        case let .scalar(s): s.mark
        case let .mapping(m): m.mark
        case let .sequence(s): s.mark
        }
    }
}

/// Text that is not well-formed YAML, or that uses what a configuration cannot mean (a
/// second document, an alias to an unknown anchor, a key given twice).
struct YAMLSyntaxError: Error {
    var message: String
    var mark: Mark
    /// The key path where it was found (a duplicate key's), when known.
    var path = ""
}
