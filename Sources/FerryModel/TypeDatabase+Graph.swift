/// Where a type's declaration came from, in order of precedence for tag lookups.
enum TypeOrigin: UInt8, Sendable {
    /// The built-in system table (`TypeDatabase.systemTypes`).
    case system
    /// A MIME type of the machine's shared-mime-info database with no system type of its own.
    case sharedMIMEInfo
    /// An app's exported declaration.
    case exported
    /// An app's imported declaration.
    case imported
}

/// A tag and its rank: among types claiming the same tag, the lowest rank is preferred.
struct RankedTag: Sendable, Hashable {
    var value: String
    var rank: Int
    var isCaseSensitive = false
}

/// One type before compilation: identifier, direct parents by identifier, ranked tags.
struct TypeRecord: Sendable {
    var identifier: String
    var parents: [String]
    var extensions: [RankedTag]
    var mimeTypes: [RankedTag]
    var description: String?
    var referenceURL: String?
    var origin: TypeOrigin
    /// The lower-case MIME name GIO knows this type by, for a lazily fetched description.
    var gioName: String?

    init(_ declaration: TypeDeclaration, origin: TypeOrigin, rank: Int) {
        identifier = declaration.identifier
        parents = declaration.conformsTo
        extensions = declaration.filenameExtensions.map { RankedTag(value: $0, rank: rank) }
        mimeTypes = declaration.mimeTypes.map { RankedTag(value: $0, rank: rank) }
        description = declaration.description
        referenceURL = declaration.referenceURL
        self.origin = origin
    }
}

/// The compiled, immutable type graph: nodes, their ancestor sets as bitsets, tag indexes.
/// Conformance is one dictionary lookup per operand and one bit test.
final class TypeGraph: Sendable {
    struct Node: Sendable {
        let identifier: String
        let parents: [Int32]
        let extensions: [String]
        let mimeTypes: [String]
        let description: String?
        let referenceURL: String?
        let origin: TypeOrigin
        let gioName: String?
    }

    let nodes: [Node]
    /// Identifier → node; holds both the declared spelling and its lower-case form.
    let index: [String: Int32]
    /// Words per ancestor bitset.
    let stride: Int
    /// `nodes.count * stride` words; bit `j` of row `i` is set when node `i` conforms to node `j`
    /// (reflexive and transitive, and every node conforms to `public.item`).
    let ancestors: [UInt64]
    /// Lower-case extension → nodes, preferred first.
    let extensionIndex: [String: [Int32]]
    /// Exact-case extension → nodes, for case-sensitive globs (`*.C`).
    let caseSensitiveExtensionIndex: [String: [Int32]]
    /// Lower-case MIME type → nodes, preferred first.
    let mimeIndex: [String: [Int32]]

    /// Compiles records (identifiers must be unique). With `breakingCycles`, an edge closing a
    /// cycle is dropped; otherwise a cycle throws `TypeDatabaseError.cycle`.
    init(records: [TypeRecord], breakingCycles: Bool) throws(TypeDatabaseError) {
        var index: [String: Int32] = [:]
        index.reserveCapacity(records.count * 2)
        for (i, record) in records.enumerated() {
            index[record.identifier] = Int32(i)
            let lower = record.identifier.fastLowercased
            if index[lower] == nil { index[lower] = Int32(i) }
        }
        func resolve(_ identifier: String) -> Int32? { index[identifier] ?? index[identifier.fastLowercased] }

        var parents: [[Int32]] = records.map { record in
            var resolved: [Int32] = []
            resolved.reserveCapacity(record.parents.count)
            for parent in record.parents { if let i = resolve(parent), !resolved.contains(i) { resolved.append(i) } }
            return resolved
        }

        let count = records.count
        let stride = max(1, (count + 63) / 64)
        var bits = [UInt64](repeating: 0, count: count * stride)
        // 0 = unvisited, 1 = on the current path, 2 = done.
        var state = [UInt8](repeating: 0, count: count)
        let item = resolve("public.item")

        // Iterative depth-first walk; a node's row is filled after all its parents' rows.
        var stack: [(node: Int, next: Int)] = []
        for root in 0..<count where state[root] == 0 {
            stack.append((root, 0))
            state[root] = 1
            while let top = stack.last {
                let node = top.node
                if top.next < parents[node].count {
                    stack[stack.count - 1].next += 1
                    let parent = Int(parents[node][top.next])
                    switch state[parent] {
                    case 0:
                        state[parent] = 1
                        stack.append((parent, 0))
                    case 1:
                        if breakingCycles {
                            parents[node].remove(at: top.next)
                            stack[stack.count - 1].next -= 1
                        } else {
                            let path = stack.map(\.node)
                            let start = path.firstIndex(of: parent) ?? 0
                            let cycle = (path[start...] + [parent]).map { records[$0].identifier }
                            throw .cycle(cycle)
                        }
                    default:
                        break
                    }
                    continue
                }
                stack.removeLast()
                state[node] = 2
                let row = node * stride
                bits[row + node >> 6] |= 1 << UInt64(node & 63)
                if let item { bits[row + Int(item) >> 6] |= 1 << UInt64(item & 63) }
                for parent in parents[node] {
                    let prow = Int(parent) * stride
                    for w in 0..<stride { bits[row + w] |= bits[prow + w] }
                }
            }
        }

        func tagIndex(_ tags: (TypeRecord) -> [RankedTag], caseSensitive: Bool?) -> [String: [Int32]] {
            var entries: [String: [(rank: Int, node: Int32)]] = [:]
            for (i, record) in records.enumerated() {
                for tag in tags(record) {
                    let key: String
                    switch caseSensitive {
                    case .some(true): guard tag.isCaseSensitive else { continue }; key = tag.value
                    case .some(false):
                        guard !tag.isCaseSensitive, let normalized = ContentType.TagClass.filenameExtension.normalize(tag.value)
                        else { continue }
                        key = normalized
                    case .none:
                        guard let normalized = ContentType.TagClass.mimeType.normalize(tag.value) else { continue }
                        key = normalized
                    }
                    entries[key, default: []].append((tag.rank, Int32(i)))
                }
            }
            return entries.mapValues { list in
                let sorted = Self.stableSortedByRank(list, rank: \.rank)
                var nodes: [Int32] = []
                nodes.reserveCapacity(sorted.count)
                for entry in sorted where !nodes.contains(entry.node) { nodes.append(entry.node) }
                return nodes
            }
        }

        self.nodes = records.enumerated().map { i, record in
            Node(identifier: record.identifier, parents: parents[i],
                 extensions: Self.ordered(record.extensions), mimeTypes: Self.ordered(record.mimeTypes),
                 description: record.description, referenceURL: record.referenceURL, origin: record.origin,
                 gioName: record.gioName)
        }
        self.index = index
        self.stride = stride
        self.ancestors = bits
        self.extensionIndex = tagIndex(\.extensions, caseSensitive: false)
        self.caseSensitiveExtensionIndex = tagIndex(\.extensions, caseSensitive: true)
        self.mimeIndex = tagIndex(\.mimeTypes, caseSensitive: nil)
    }

    /// Tags in rank order, duplicates (ignoring case) removed, first spelling kept.
    private static func ordered(_ tags: [RankedTag]) -> [String] {
        var result: [String] = []
        var keys: [String] = []
        result.reserveCapacity(tags.count)
        for tag in stableSortedByRank(tags, rank: \.rank) {
            let key = tag.value.fastLowercased
            if !keys.contains(key) {
                keys.append(key)
                result.append(tag.value)
            }
        }
        return result
    }

    /// `list` sorted by rank, keeping the order of equal ranks; no work when already sorted.
    private static func stableSortedByRank<T>(_ list: [T], rank: (T) -> Int) -> [T] {
        if zip(list, list.dropFirst()).allSatisfy({ rank($0) <= rank($1) }) { return list }
        return list.enumerated()
            .sorted { a, b in rank(a.element) != rank(b.element) ? rank(a.element) < rank(b.element) : a.offset < b.offset }
            .map(\.element)
    }

    /// The node of a declared identifier (exact spelling first, then case-insensitively).
    @inline(__always)
    func node(_ identifier: String) -> Int32? {
        if let i = index[identifier] { return i }
        return index[identifier.fastLowercased]
    }

    /// Whether node `a` conforms to node `b`.
    @inline(__always)
    func conforms(_ a: Int32, _ b: Int32) -> Bool {
        let word = ancestors[Int(a) * stride + Int(b) >> 6]
        return word & (1 << UInt64(b & 63)) != 0
    }

    /// All nodes `a` conforms to, including itself, in index order.
    func ancestorNodes(of a: Int32) -> [Int32] {
        var result: [Int32] = []
        let row = Int(a) * stride
        for w in 0..<stride {
            var word = ancestors[row + w]
            while word != 0 {
                let bit = word.trailingZeroBitCount
                result.append(Int32(w * 64 + bit))
                word &= word - 1
            }
        }
        return result
    }
}
