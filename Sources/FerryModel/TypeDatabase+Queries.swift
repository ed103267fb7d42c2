extension TypeDatabase {
    /// The declared or dynamic type with this identifier (matched case-insensitively, returned in
    /// its declared spelling), or nil when the identifier is invalid or names no known type.
    public func type(withIdentifier identifier: String) -> ContentType? {
        guard ContentType.isValidIdentifier(identifier) else { return nil }
        if let known = declaredNode(identifier) { return ContentType(uncheckedIdentifier: known.graph.nodes[Int(known.node)].identifier) }
        if DynamicTypeCode(identifier: identifier) != nil { return ContentType(uncheckedIdentifier: identifier.fastLowercased) }
        return nil
    }

    /// The types that carry `tag`, preferred first, restricted to those conforming to `supertype`
    /// when given. When no declared type qualifies, the single dynamic type for the tag (conforming
    /// to `supertype`); when `tag` is not a valid tag of its class, `[]`.
    public func types(tag: String, tagClass: ContentType.TagClass, conformingTo supertype: ContentType? = nil) -> [ContentType] {
        guard let normalized = tagClass.normalize(tag) else { return [] }
        let graph = self.graph
        var candidates: [Int32] = []
        switch tagClass {
        case .filenameExtension:
            candidates = graph.extensionIndex[normalized] ?? []
            if !graph.caseSensitiveExtensionIndex.isEmpty, let exact = graph.caseSensitiveExtensionIndex[tag] {
                candidates = exact + candidates
            }
        case .mimeType:
            candidates = graph.mimeIndex[normalized] ?? []
            if candidates.isEmpty, let semicolon = normalized.firstIndex(of: ";") {
                candidates = graph.mimeIndex[String(normalized[..<semicolon])] ?? []
            }
        default:
            break
        }
        var result: [ContentType] = []
        for (n, node) in candidates.enumerated() where !candidates[..<n].contains(node) {
            let type = ContentType(uncheckedIdentifier: graph.nodes[Int(node)].identifier)
            if let supertype, !conforms(type, to: supertype, in: graph) { continue }
            result.append(type)
        }
        if result.isEmpty {
            let code = DynamicTypeCode(tagClass: tagClass, tag: normalized, conformsTo: supertype.map { [$0.identifier] } ?? [])
            if let id = code.identifier { result.append(ContentType(uncheckedIdentifier: id)) }
        }
        return result
    }

    /// The preferred type for `tag` (see `types(tag:tagClass:conformingTo:)`).
    public func type(tag: String, tagClass: ContentType.TagClass, conformingTo supertype: ContentType? = nil) -> ContentType? {
        types(tag: tag, tagClass: tagClass, conformingTo: supertype).first
    }

    /// Whether `type` conforms to `supertype`: reflexive, transitive, and every type conforms to
    /// `public.item`. A declared type never conforms to an undeclared one; a dynamic type conforms
    /// to what its identifier says it conforms to.
    public func conforms(_ type: ContentType, to supertype: ContentType) -> Bool {
        if type.identifier == supertype.identifier { return true }
        // Two types the current graph holds are answered by it, loaded or not.
        let current = currentGraph
        if let a = current.node(type.identifier), let b = current.node(supertype.identifier) { return current.conforms(a, b) }
        return conforms(type, to: supertype, in: graph)
    }

    /// The graph and node of a declared identifier: from the current graph when it holds it,
    /// else from the complete graph (loading shared-mime-info if still pending).
    func declaredNode(_ identifier: String) -> (graph: TypeGraph, node: Int32)? {
        if DynamicTypeCode.hasPrefix(identifier) { return nil }  // never declared
        let current = currentGraph
        if let i = current.node(identifier) { return (current, i) }
        let graph = self.graph
        return graph.node(identifier).map { (graph, $0) }
    }

    private func conforms(_ type: ContentType, to supertype: ContentType, in graph: TypeGraph) -> Bool {
        conforms(type.identifier, supertype.identifier, graph, depth: 0)
    }

    private func conforms(_ a: String, _ b: String, _ graph: TypeGraph, depth: Int) -> Bool {
        if let ia = graph.node(a) {
            guard let ib = graph.node(b) else { return false }
            return graph.conforms(ia, ib)
        }
        if a.fastLowercased == b.fastLowercased || b == ContentType.item.identifier { return true }
        guard depth < 8, let code = DynamicTypeCode(identifier: a) else { return false }
        return code.conformsTo.contains { conforms($0, b, graph, depth: depth + 1) }
    }

    /// Every type `type` conforms to, excluding itself (so always including `public.item`).
    public func supertypes(of type: ContentType) -> Set<ContentType> {
        var result = Set<ContentType>()
        collectSupertypes(of: type.identifier, into: &result, graph: declaredNode(type.identifier)?.graph ?? graph, depth: 0)
        result.remove(type)
        return result
    }

    private func collectSupertypes(of identifier: String, into result: inout Set<ContentType>, graph: TypeGraph, depth: Int) {
        if let i = graph.node(identifier) {
            for node in graph.ancestorNodes(of: i) { result.insert(ContentType(uncheckedIdentifier: graph.nodes[Int(node)].identifier)) }
            return
        }
        result.insert(.item)
        guard depth < 8, let code = DynamicTypeCode(identifier: identifier) else { return }
        for parent in code.conformsTo {
            result.insert(ContentType(uncheckedIdentifier: graph.node(parent).map { graph.nodes[Int($0)].identifier } ?? parent))
            collectSupertypes(of: parent, into: &result, graph: graph, depth: depth + 1)
        }
    }

    /// The direct parents of a type: its declared `conformsTo` that are known (for a dynamic type,
    /// the identifiers it was made conforming to).
    public func parents(of type: ContentType) -> [ContentType] {
        if let (graph, i) = declaredNode(type.identifier) {
            return graph.nodes[Int(i)].parents.map { ContentType(uncheckedIdentifier: graph.nodes[Int($0)].identifier) }
        }
        return DynamicTypeCode(identifier: type.identifier)?.conformsTo.map(ContentType.init(uncheckedIdentifier:)) ?? []
    }

    /// The type's tags by class, preferred first. A dynamic type has its one tag.
    public func tags(of type: ContentType) -> [ContentType.TagClass: [String]] {
        let graph = self.graph
        if let i = graph.node(type.identifier) {
            let node = graph.nodes[Int(i)]
            var tags: [ContentType.TagClass: [String]] = [:]
            if !node.extensions.isEmpty { tags[.filenameExtension] = node.extensions }
            if !node.mimeTypes.isEmpty { tags[.mimeType] = node.mimeTypes }
            return tags
        }
        guard let code = DynamicTypeCode(identifier: type.identifier) else { return [:] }
        return [code.tagClass: [code.tag]]
    }

    /// Whether the type is declared (by the system table, shared-mime-info or an app).
    public func isDeclared(_ type: ContentType) -> Bool { declaredNode(type.identifier) != nil }

    /// A human-readable description of a declared type (English), or nil for dynamic types.
    public func localizedDescription(of type: ContentType) -> String? {
        guard let (graph, i) = declaredNode(type.identifier) else { return nil }
        return description(of: graph.nodes[Int(i)])
    }

    /// The reference URL of a declared type, when its declaration has one.
    public func referenceURL(of type: ContentType) -> String? {
        declaredNode(type.identifier).flatMap { $0.graph.nodes[Int($0.node)].referenceURL }
    }
}
