import Ferry
import FerryModel
import FerryTerminal

/// What `ferry paste` does, apart from parsing: built by `PasteCommand` (the full CLI's one
/// parser of `paste`) and by `HistoryShowCommand`.
struct PasteRequest {
    var type: String?
    var item = 0
    var pasteboard = PasteboardName.general
    var output: String?
    var timeout = 60
    var bus: String?
    /// Write what is not text to a terminal too.
    var force = false
    /// Read from this history entry of the general pasteboard (0 the newest) instead of the
    /// current items (`ferry history show`).
    var historyEntry: Int?

    /// Pastes; errors are thrown for the root command to report.
    func run() async throws {
        try PasteboardName.validate(pasteboard)
        var wanted = ContentType.item
        if let type { wanted = try await AppTypes.resolving(bus: bus) { try resolveTypeArgument(type) } }
        let board = try await existingPasteboard(on: try await BusOptions.connect(bus))
        // An output that cannot be written fails before anything is pasted.
        let file = try output.map { try OutputPath(path: PathArgument($0)) }
        if !force, output == nil, LinuxCalls.isTerminal(1) {
            try await refuseNonText(on: board, wanted: wanted)
        }
        do {
            let (read, converting) = try await self.read(wanted, on: board)
            try await write(read, to: file?.output ?? .standardOutput, convertingUTF16: converting)
            try file?.commit()
        } catch {
            file?.discard()
            throw error
        }
    }

    /// The pasteboard pasted from, which must exist.
    /// - Throws: `CLIFailure` (status 2) for a named pasteboard that does not exist, worded as an
    ///   empty selection for `primary`.
    private func existingPasteboard(on client: FerryClient) async throws -> Pasteboard {
        do {
            return try await ExistingPasteboardOption.existing(pasteboard, on: client)
        } catch is CLIFailure where pasteboard == PasteboardName.primary {
            // ferry-bridge creates it on the first selection: none yet is an empty selection.
            throw CLIFailure("nothing to paste: the primary selection is empty")
        }
    }

    /// Reads `wanted` from the item; when UTF-8 text is asked for and the item holds its text
    /// only as UTF-16, reads that (the flag says to convert it on the way out).
    /// - Throws: a NotFound made specific (``explain(_:on:wanted:)``), or the broker's error.
    private func read(_ wanted: ContentType, on board: Pasteboard) async throws -> (PasteboardRead, converting: Bool) {
        do {
            return (try await board.read(item: item, type: wanted, historyEntry: historyEntry), false)
        } catch where error.code == .notFound {
            guard wanted == .utf8PlainText, let utf16 = await utf16Text(on: board) else {
                throw await explain(error, on: board, wanted: type == nil ? nil : wanted)
            }
            return (try await board.read(item: item, type: utf16, historyEntry: historyEntry), true)
        }
    }

    /// The items read from: the pasteboard's, or those of ``historyEntry``.
    /// - Throws: `CLIFailure` (status 2) when there is no such history entry.
    private func items(on board: Pasteboard) async throws -> [PasteboardItem] {
        guard let historyEntry else { return try await board.items }
        let entries = try await board.history()
        guard historyEntry < entries.count else {
            throw CLIFailure("no history entry \(historyEntry): the history has \(entries.count) entr\(entries.count == 1 ? "y" : "ies")")
        }
        return entries[historyEntry].items
    }

    /// The UTF-16 text type the item has, if any (`public.utf16-plain-text`, which
    /// `text/plain;charset=utf-16` maps to, or the variant with a byte-order mark).
    private func utf16Text(on board: Pasteboard) async -> ContentType? {
        guard let items = try? await items(on: board), item < items.count else { return nil }
        return items[item].contentTypes.first { type in
            type == .utf16PlainText || type.identifier == "public.utf16-external-plain-text"
        }
    }

    /// Writes the bytes of `read` (converted from UTF-16 to UTF-8 when `convertingUTF16`); for a
    /// promised stream, confirms the source finished.
    private func write(_ read: PasteboardRead, to sink: OutputFile, convertingUTF16: Bool) async throws {
        switch read.content {
        case .bytes(let bytes) where convertingUTF16:
            var converter = UTF16ToUTF8()
            do {
                try sink.write(try converter.convert(bytes))
                try sink.write(try converter.finish())
            } catch let error as FerryModelError {
                throw ByteCopier.conversionFailure(error)
            }
        case .bytes(let bytes):
            try sink.write(bytes)
        case .stream(_, let transfer):
            guard let raw = read.streamDescriptor else { throw CLIFailure(.failure, "the broker sent a closed descriptor") }
            let progress = ProgressBar.make(label: "pasting", total: read.size.map { UInt64(max(0, $0)) })
            let copier = ByteCopier(source: raw, sourceName: transfer == nil ? "the pasteboard" : "the source app",
                                    destination: sink, inactivityTimeout: transfer == nil ? nil : .seconds(timeout),
                                    progress: progress, convertingUTF16: convertingUTF16)
            let copied: UInt64
            do {
                copied = try copier.run()
                progress?.finish()
            } catch {
                progress?.finish()
                read.closeStream()
                throw error
            }
            read.closeStream()
            guard transfer != nil else { return }
            let written = try await read.finish()
            if let written, written != copied {
                throw CLIFailure(.unavailable, "the source app wrote \(written) bytes but \(copied) arrived")
            }
        }
    }

    /// Refuses (status 64) when the representation a paste of `wanted` would deliver is not
    /// text (an image, a PDF): bytes like these only garble a terminal. Decided on the metadata
    /// (not a paste); a paste that would find nothing goes on and fails as usual.
    private func refuseNonText(on board: Pasteboard, wanted: ContentType) async throws {
        let items = try await items(on: board)
        guard item < items.count,
              let delivered = items[item].contentTypes.first(where: { $0.conforms(to: wanted) }),
              !delivered.conforms(to: .text), !delivered.conforms(to: .url) else { return }
        throw CLIFailure(.usage, "item \(item) is \(typeName(delivered)), not text: give -o FILE to write it to a file, "
                         + "or --force to write it to the terminal anyway")
    }

    /// A NotFound made specific: an empty pasteboard, an item out of range, or the types the
    /// item has when none conforms.
    private func explain(_ error: FerryError, on board: Pasteboard, wanted: ContentType?) async -> any Error {
        guard let items = try? await items(on: board) else { return error }
        let name = historyEntry.map { "history entry \($0)" }
            ?? (board.name == PasteboardName.general ? "the pasteboard" : "pasteboard '\(board.name)'")
        if items.isEmpty { return CLIFailure("nothing to paste: \(name) is empty") }
        guard item < items.count else {
            return CLIFailure("no item \(item): \(name) has \(items.count) item\(items.count == 1 ? "" : "s")")
        }
        let types = items[item].contentTypes.map(typeName).joined(separator: ", ")
        guard let wanted else { return CLIFailure("\(error.message) (item \(item) has \(types))") }
        return CLIFailure("item \(item) has nothing conforming to \(typeName(wanted)); it has \(types)")
    }
}
