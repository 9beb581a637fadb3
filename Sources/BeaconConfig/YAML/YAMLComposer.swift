import CYAML

/// Composes libyaml's event stream into one `Node` tree. Anchors and aliases are resolved
/// (an alias stands for a copy of its anchored node); tags other than `!!str` are ignored.
enum YAMLComposer {
    /// The document's root, or nil for an empty text.
    static func compose(_ text: String) throws(YAMLSyntaxError) -> Node? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            throw YAMLSyntaxError(message: "out of memory", mark: Mark(line: 1, column: 1))
        }
        defer { yaml_parser_delete(&parser) }
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { (buffer) throws(YAMLSyntaxError) -> Node? in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var composer = Builder()
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { throw syntaxError(parser) }
                defer { yaml_event_delete(&event) }
                if try composer.take(event) { return composer.root }
            }
        }
    }

    private static func syntaxError(_ parser: yaml_parser_t) -> YAMLSyntaxError {
        let problem = parser.problem.map { String(cString: $0) } ?? "unreadable text"
        let context = parser.context.map { " " + String(cString: $0) } ?? ""
        return YAMLSyntaxError(message: problem + context, mark: mark(parser.problem_mark))
    }

    static func mark(_ m: yaml_mark_t) -> Mark { Mark(line: Int(m.line) + 1, column: Int(m.column) + 1) }

    /// The stack of open collections, and the anchors seen so far.
    private struct Builder {
        enum Open {
            case sequence(Node.NodeList, anchor: String?)
            case mapping(Node.Mapping, pendingKey: Node?, anchor: String?)
        }
        var stack: [Open] = []
        var anchors: [String: Node] = [:]
        var root: Node?
        var documents = 0

        /// Takes one event; true once the stream (or the first document) is complete.
        mutating func take(_ event: yaml_event_t) throws(YAMLSyntaxError) -> Bool {
            let at = YAMLComposer.mark(event.start_mark)
            switch event.type {
            case YAML_DOCUMENT_START_EVENT:
                documents += 1
                if documents > 1 {
                    throw YAMLSyntaxError(message: "a second YAML document (---); the configuration is one", mark: at)
                }
            case YAML_SCALAR_EVENT:
                let s = event.data.scalar
                let value = String(
                    decoding: UnsafeBufferPointer(start: s.value, count: Int(s.length)), as: UTF8.self)
                try checkTag(s.tag, at: at)
                let explicitString = s.tag.map { String(cString: $0) } == "tag:yaml.org,2002:str"
                let node = Node.scalar(
                    Node.Scalar(string: value, style: explicitString ? .singleQuoted : style(s.style), mark: at))
                try add(node, anchor: text(s.anchor))
            case YAML_ALIAS_EVENT:
                let name = text(event.data.alias.anchor) ?? ""
                guard let node = anchors[name] else {
                    throw YAMLSyntaxError(message: "alias *\(name) names no anchor defined before it", mark: at)
                }
                try add(node, anchor: nil)
            case YAML_SEQUENCE_START_EVENT:
                try checkTag(event.data.sequence_start.tag, at: at)
                stack.append(
                    .sequence(Node.NodeList(nodes: [], mark: at), anchor: text(event.data.sequence_start.anchor)))
            case YAML_MAPPING_START_EVENT:
                try checkTag(event.data.mapping_start.tag, at: at)
                stack.append(
                    .mapping(
                        Node.Mapping(pairs: [], mark: at), pendingKey: nil,
                        anchor: text(event.data.mapping_start.anchor)))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                switch stack.removeLast() {
                case let .sequence(list, anchor): try add(.sequence(list), anchor: anchor)
                case let .mapping(mapping, _, anchor): try add(.mapping(mapping), anchor: anchor)
                }
            case YAML_STREAM_END_EVENT:
                return true
            default:
                break
            }
            return false
        }

        private mutating func add(_ node: Node, anchor: String?) throws(YAMLSyntaxError) {
            if let anchor { anchors[anchor] = node }
            guard let top = stack.popLast() else {
                root = node
                return
            }
            switch top {
            case .sequence(var list, let listAnchor):
                list.nodes.append(node)
                stack.append(.sequence(list, anchor: listAnchor))
            case .mapping(var mapping, let pendingKey, let mappingAnchor):
                if let key = pendingKey {
                    mapping.pairs.append((key, node))
                    stack.append(.mapping(mapping, pendingKey: nil, anchor: mappingAnchor))
                } else {
                    if case let .scalar(k) = node,
                        mapping.pairs.contains(where: {
                            if case let .scalar(o) = $0.key { o.string == k.string } else { false }
                        })
                    {
                        throw YAMLSyntaxError(
                            message: "duplicate key \"\(k.string)\" in one mapping", mark: k.mark,
                            path: path(ending: k.string))
                    }
                    stack.append(.mapping(mapping, pendingKey: node, anchor: mappingAnchor))
                }
            }
        }

        /// The key path of the open nodes, then `key`: `webhooks[0].url`.
        private func path(ending key: String) -> String {
            var parts = ""
            for open in stack {
                switch open {
                case let .sequence(list, _): parts += "[\(list.nodes.count)]"
                case let .mapping(_, pending, _):
                    guard case let .scalar(k)? = pending else { continue }
                    parts += (parts.isEmpty ? "" : ".") + k.string
                }
            }
            return parts + (parts.isEmpty ? "" : ".") + key
        }

        /// The core schema's tags are plain data; any other (`!!python/object`, `!custom`) asks
        /// a loader to build something, which this configuration never wants: refused, not
        /// silently read as the text after it.
        private func checkTag(_ pointer: UnsafeMutablePointer<yaml_char_t>?, at mark: Mark) throws(YAMLSyntaxError) {
            guard let tag = text(pointer), tag != "!" else { return }
            let core = ["str", "int", "float", "bool", "null", "map", "seq"].map { "tag:yaml.org,2002:" + $0 }
            guard !core.contains(tag) else { return }
            let shown = tag.hasPrefix("tag:yaml.org,2002:") ? "!!" + tag.dropFirst(18) : tag
            throw YAMLSyntaxError(message: "YAML tag \(shown) is not allowed here; remove it", mark: mark)
        }

        private func text(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            pointer.map { String(cString: $0) }
        }

        private func style(_ style: yaml_scalar_style_t) -> Node.Scalar.Style {
            switch style {
            case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
            case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
            case YAML_LITERAL_SCALAR_STYLE: .literal
            case YAML_FOLDED_SCALAR_STYLE: .folded
            default: .plain
            }
        }
    }
}
