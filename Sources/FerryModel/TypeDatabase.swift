import Synchronization

/// The set of known content types and how they conform: the built-in system table, the machine's
/// shared-mime-info database, and what apps declare.
///
/// Precedence, from strongest: system types (`public.*` and the other built-in identifiers — an
/// app that re-declares one is ignored), then exported app declarations (a later export of the
/// same identifier replaces an earlier one and replaces a shared-mime-info type of that
/// identifier), then shared-mime-info types, then imported declarations (an imported declaration
/// never replaces an existing one). For tag lookups the order is system, shared-mime-info,
/// exported, imported.
///
/// Queries read an immutable compiled graph (ancestor bitsets), so `conforms(to:)` costs two
/// dictionary lookups and a bit test; `register` compiles a new graph and swaps it in.
///
/// A database made with a loader (as `shared` is) starts with the system table alone and reads
/// shared-mime-info on the first query the system table cannot answer: a tag lookup, an
/// identifier it does not hold, listing all types, or a registration. Questions about system
/// types alone (`ContentType.png.conforms(to: .image)`) never pay for the load.
public final class TypeDatabase: Sendable {
    /// The database of this process: system types, this machine's shared-mime-info (read on first
    /// need), and whatever the process registers.
    public static let shared = TypeDatabase(sharedMIMEInfoLoader: { SharedMIMEInfo.load() })

    struct State: Sendable {
        var graph: TypeGraph
        var base: [TypeRecord]
        /// False while shared-mime-info is still to be loaded.
        var isComplete: Bool
        var exported: [TypeDeclaration] = []
        var imported: [TypeDeclaration] = []
    }

    private let includingSystemTypes: Bool
    private let loader: (@Sendable () -> SharedMIMEInfo)?
    private let systemIdentifiers: Set<String>
    private let state: Mutex<State>
    /// Descriptions fetched from GIO, by lower-case MIME name.
    private let gioDescriptions = Mutex<[String: String]>([:])

    /// A database from explicit inputs, built at once.
    /// - Parameters:
    ///   - includingSystemTypes: whether to start from the built-in `public.*` table.
    ///   - sharedMIMEInfo: the MIME types to add (`SharedMIMEInfo.load()` for the machine's).
    public init(includingSystemTypes: Bool = true, sharedMIMEInfo: SharedMIMEInfo = .empty) {
        self.includingSystemTypes = includingSystemTypes
        self.loader = nil
        self.systemIdentifiers = includingSystemTypes ? Set(Self.systemTypes.map { $0.identifier.fastLowercased }) : []
        let base = Self.baseRecords(includingSystemTypes: includingSystemTypes, mime: sharedMIMEInfo)
        self.state = Mutex(State(graph: Self.compileSystemData(base), base: base, isComplete: true))
    }

    /// A database that starts with the system table and calls `sharedMIMEInfoLoader` (once) on
    /// the first query the system table cannot answer.
    public init(includingSystemTypes: Bool = true, sharedMIMEInfoLoader: @escaping @Sendable () -> SharedMIMEInfo) {
        self.includingSystemTypes = includingSystemTypes
        self.loader = sharedMIMEInfoLoader
        self.systemIdentifiers = includingSystemTypes ? Set(Self.systemTypes.map { $0.identifier.fastLowercased }) : []
        let base = Self.baseRecords(includingSystemTypes: includingSystemTypes, mime: .empty)
        self.state = Mutex(State(graph: Self.compileSystemData(base), base: base, isComplete: false))
    }

    /// System data is not ours to reject: an edge closing a cycle is dropped, so this cannot throw.
    private static func compileSystemData(_ records: [TypeRecord]) -> TypeGraph {
        do {
            return try TypeGraph(records: records, breakingCycles: true)
        } catch {
            preconditionFailure("compiling with breakingCycles cannot fail: \(error)")
        }
    }

    /// The graph as it is now: authoritative for the types it holds, which are all the system
    /// types even before shared-mime-info is loaded (their conformance never depends on it).
    var currentGraph: TypeGraph { state.withLock { $0.graph } }

    /// The complete graph, loading shared-mime-info first when that is still pending.
    var graph: TypeGraph {
        state.withLock { state in
            completeIfNeeded(&state)
            return state.graph
        }
    }

    /// Whether shared-mime-info has been read (always true for a database built from explicit inputs).
    public var isComplete: Bool { state.withLock { $0.isComplete } }

    private func completeIfNeeded(_ state: inout State) {
        guard !state.isComplete else { return }
        state.isComplete = true
        guard let loader else { return }
        // Registration completes the database first, so there are no app declarations yet.
        state.base = Self.baseRecords(includingSystemTypes: includingSystemTypes, mime: loader())
        state.graph = Self.compileSystemData(state.base)
    }

    /// Adds app type declarations (an app manifest's `UTExportedTypeDeclarations` with
    /// `exported: true`, its `UTImportedTypeDeclarations` with `exported: false`).
    ///
    /// Declarations of system types are ignored. Parents that are not known (yet) are kept by
    /// identifier and resolve when they are declared; until then the type conforms to what is
    /// known. The batch is applied atomically.
    /// - Throws: `TypeDatabaseError.invalidIdentifier` for a malformed or `dyn.` identifier,
    ///   `TypeDatabaseError.cycle` when the declarations would make a type its own ancestor.
    public func register(_ declarations: [TypeDeclaration], exported: Bool) throws(TypeDatabaseError) {
        for declaration in declarations {
            guard ContentType.isValidIdentifier(declaration.identifier), !DynamicTypeCode.hasPrefix(declaration.identifier)
            else { throw .invalidIdentifier(declaration.identifier) }
            for parent in declaration.conformsTo where !ContentType.isValidIdentifier(parent) {
                throw .invalidIdentifier(parent)
            }
        }
        try state.withLock { (state: inout State) throws(TypeDatabaseError) in
            completeIfNeeded(&state)
            var next = state
            for declaration in declarations where !systemIdentifiers.contains(declaration.identifier.fastLowercased) {
                let key = declaration.identifier.fastLowercased
                if exported {
                    if let i = next.exported.firstIndex(where: { $0.identifier.fastLowercased == key }) {
                        next.exported[i] = declaration
                    } else {
                        next.exported.append(declaration)
                    }
                } else if !next.imported.contains(where: { $0.identifier.fastLowercased == key }) {
                    next.imported.append(declaration)
                }
            }
            next.graph = try TypeGraph(records: Self.records(base: next.base, exported: next.exported, imported: next.imported),
                                       breakingCycles: false)
            state = next
        }
    }

    /// The app declarations registered so far (exported and imported, each in registration
    /// order), to hand to another process's database (`org.ferry.Broker1.TypeDeclarations`).
    public var appDeclarations: AppTypeDeclarations {
        state.withLock { AppTypeDeclarations(exported: $0.exported, imported: $0.imported) }
    }

    private static func records(base: [TypeRecord], exported: [TypeDeclaration], imported: [TypeDeclaration]) -> [TypeRecord] {
        let exportedKeys = Set(exported.map { $0.identifier.fastLowercased })
        var records = base.filter { !exportedKeys.contains($0.identifier.fastLowercased) }
        records += exported.map { TypeRecord($0, origin: .exported, rank: 200) }
        var known = Set(records.map { $0.identifier.fastLowercased })
        for declaration in imported where known.insert(declaration.identifier.fastLowercased).inserted {
            records.append(TypeRecord(declaration, origin: .imported, rank: 300))
        }
        return records
    }

    /// Every declared type (system, shared-mime-info and app declarations), in database order.
    public var declaredTypes: [ContentType] {
        graph.nodes.map { ContentType(uncheckedIdentifier: $0.identifier) }
    }

    /// The number of declared types.
    public var count: Int { graph.nodes.count }

    /// The description of a declared type: the declaration's, or GIO's for a shared-mime-info type.
    func description(of node: TypeGraph.Node) -> String? {
        if let description = node.description { return description }
        guard let name = node.gioName else { return nil }
        if let cached = gioDescriptions.withLock({ $0[name] }) { return cached }
        guard let fetched = GIOContentTypes.description(of: name) else { return nil }
        gioDescriptions.withLock { $0[name] = fetched }
        return fetched
    }
}

/// Why a type declaration was refused.
public enum TypeDatabaseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The identifier is not a valid type identifier, or is a reserved `dyn.` identifier.
    case invalidIdentifier(String)
    /// The declarations would make these types conform to themselves (the path, first type repeated last).
    case cycle([String])

    /// One line for a person.
    public var description: String {
        switch self {
        case .invalidIdentifier(let id): "invalid type identifier '\(id)'"
        case .cycle(let ids): "type declarations form a conformance cycle: \(ids.joined(separator: " → "))"
        }
    }
}
