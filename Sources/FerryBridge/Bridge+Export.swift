import DBus
import DesktopClipboard
import DesktopPortal
import Ferry
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Bridge {
    /// A Ferry pasteboard changed: its item goes to the desktop unless it is the bridge's own import.
    /// An item from the desktop that the bridge did not publish itself (`ferry history restore` of
    /// an imported entry) goes back to the desktop too.
    /// - Parameter atStart: the bridge just started: take the selection only when nobody holds it.
    func ferryChanged(_ board: Pasteboard, selection: DesktopSelection, count: UInt64, atStart: Bool = false) async {
        // Loop guard, Ferry layer: the bridge's own imports, and anything already exported.
        if ownChanges[board.name]?.remove(count) != nil { return }
        ownChanges[board.name] = ownChanges[board.name]?.filter { $0 > count }
        // An import whose SetItems has not answered may be this change: its count is not known yet.
        let importWasInFlight = (importsInFlight[board.name] ?? 0) > 0
        guard count > selections[selection]?.lastExportedChange ?? 0 else { return }
        selections[selection]?.lastExportedChange = count
        guard let items = try? await board.items, (try? await board.changeCount) == count else { return }
        guard let item = items.first else {
            // Ferry's pasteboard was cleared: a selection the bridge serves from it goes too.
            if selections[selection]?.owner == .ferry {
                await backend.disown(selection)
                selections[selection]?.owner = .none
                selections[selection]?.offeredTypes = []
            }
            return
        }
        if let origin = item.origin, origin.hasPrefix("desktop:") {
            // The bridge's own import: its count was recorded while the items were read, or it
            // was still being published when the change arrived.
            if ownChanges[board.name]?.remove(count) != nil || importWasInFlight
                || (importsInFlight[board.name] ?? 0) > 0 { return }
            // A desktop item put back by someone else (a restore): exported, unless it may hold no
            // bytes (sensitive) or the bridge is just starting (its source is long gone).
            if item.isSensitive || atStart { return }
        }
        if atStart && selections[selection]?.owner == .desktop { return }
        if selection == .primary && selections[.primary]?.owner == .desktop {
            // Never take PRIMARY from a live owner (R6): `ferry copy --primary` waits for it to go.
            log.event("PRIMARY: change \(count) not exported, a desktop app holds PRIMARY")
            return
        }
        await export(item, changeCount: count, from: board, to: selection)
    }

    /// Owns `selection` with the names of `item`'s types, serving them from ferryd.
    /// - Returns: whether the bridge now owns the selection.
    @discardableResult
    func export(_ item: PasteboardItem, changeCount: UInt64, from board: Pasteboard, to selection: DesktopSelection) async -> Bool {
        let names = withPortalTransfer(map.exportNames(for: item.contentTypes, flavor: flavor))
        guard !names.isEmpty else {
            log.event("\(selection): change \(changeCount) has no type the desktop knows")
            return false
        }
        let byName = Dictionary(names.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let log = self.log, portal = self.portal, backend = self.backend
        do {
            try await backend.own(selection, types: names.map(\.name)) { name, descriptor in
                guard let exported = byName[name] else { close(descriptor); return }
                if name == FileTransferPortal.mimeType {
                    Task {
                        await Self.serveTransfer(exported, changeCount: changeCount, from: board, portal: portal,
                                                 into: descriptor, log: log)
                    }
                    return
                }
                Task {
                    await Self.serve(exported, changeCount: changeCount, from: board, into: descriptor,
                                     backend: backend, log: log)
                }
            }
        } catch {
            log.warning("\(selection): could not take the selection for change \(changeCount): \(error)")
            selections[selection]?.lastExport = BridgeStatus.Transfer(time: Date(), changeCount: changeCount, isComplete: false)
            return false
        }
        selections[selection]?.owner = .ferry
        selections[selection]?.offeredTypes = names.map(\.name)
        selections[selection]?.lastExport = BridgeStatus.Transfer(time: Date(), changeCount: changeCount, isComplete: true,
                                                                  isSensitive: item.isSensitive)
        log.event("\(selection): exported change \(changeCount) as \(names.map(\.name).joined(separator: " "))")
        return true
    }

    /// Streams one representation from ferryd into a desktop reader's descriptor (which this owns).
    /// Bytes ferryd holds (its file, or a memfd) that need no conversion go to `backend` to read
    /// itself when it can (X11); the rest is pumped.
    nonisolated static func serve(_ exported: DesktopTypeMap.Exported, changeCount: UInt64, from board: Pasteboard,
                                  into descriptor: Int32, backend: any DesktopClipboardBackend,
                                  log: BridgeLog) async {
        let read: PasteboardRead
        do {
            read = try await board.read(item: 0, type: exported.contentType, userAction: true, preferFD: true,
                                        changeCount: changeCount)
        } catch {
            log.event("serving \(exported.name): \(error)")
            close(descriptor)
            return
        }
        switch read.content {
        case .stream(let source, _):
            guard let raw = source.take() else { close(descriptor); return }
            if exported.conversion == .none, read.transfer == nil,
               await backend.serve(from: raw, for: descriptor) { return }
            let outcome = await DescriptorPump.copy(from: raw, to: descriptor, conversion: exported.conversion,
                                                    idleTimeout: lazyIdleTimeout, stallTimeout: stallTimeout)
            if case .complete = outcome {} else { log.event("serving \(exported.name): \(outcome)") }
            _ = try? await read.finish()
        case .bytes(let bytes):
            await serve(bytes, as: exported, into: descriptor, log: log)
        }
    }

    /// Writes a few bytes (under 16 KiB) into a desktop reader's descriptor (which this owns)
    /// without blocking: through a pipe, as a stream from ferryd would come.
    nonisolated static func serve(_ bytes: [UInt8], as exported: DesktopTypeMap.Exported, into descriptor: Int32,
                                  log: BridgeLog) async {
        guard let pipe = try? DescriptorPump.makePipe() else { close(descriptor); return }
        async let outcome = DescriptorPump.copy(from: pipe.read, to: descriptor, conversion: exported.conversion,
                                                idleTimeout: lazyIdleTimeout, stallTimeout: stallTimeout)
        // The bytes are small: they fit the pipe at once.
        let writer = FileDescriptor(taking: pipe.write)
        try? writer.write(all: bytes)
        writer.close()
        if case .complete = await outcome {} else { log.event("serving \(exported.name) failed") }
    }

    /// After an owner went away without clearing: serve the selection again from Ferry (R10) —
    /// the complete copy of that import if it is still Ferry's current item, or a Ferry item
    /// that could not be exported while the owner held the selection (PRIMARY).
    func restore(_ selection: DesktopSelection) async {
        guard let board = try? await pasteboard(for: selection), let count = try? await board.changeCount,
              let item = try? await board.items.first, (try? await board.changeCount) == count else {
            log.event("\(selection): nothing to restore")
            return
        }
        if item.origin?.hasPrefix("desktop:") == true {
            guard let current = selections[selection]?.current, current.isComplete, count == current.changeCount,
                  item.id == current.itemID else {
                log.event("\(selection): no complete copy of the last import to restore")
                return
            }
        }
        if await export(item, changeCount: count, from: board, to: selection) {
            // Read first: an optional-chained assignment holds its access while the right side runs.
            let exported = max(selections[selection]?.lastExportedChange ?? 0, count)
            selections[selection]?.lastExportedChange = exported
            log.event("\(selection): restored change \(count) after its owner left")
        }
    }

    /// Restores `selection` after its owner left, once the current import's eager copy has ended:
    /// an owner can leave while that copy still reads (`wl-copy --paste-once` quits as soon as the
    /// copy's read ends), and only a complete copy is restored. The wait runs beside the event
    /// loop; a new owner meanwhile (its offer cancels the copy and this wait), a later import or
    /// the bridge stopping means nothing is restored.
    func restoreOnceCopied(_ selection: DesktopSelection) async {
        guard let current = selections[selection]?.current, !current.copyEnded else { return await restore(selection) }
        log.event("\(selection): the owner left during the copy of change \(current.changeCount); restoring once it ends")
        let offerID = current.offer.id
        selections[selection]?.pendingRestore?.cancel()
        selections[selection]?.pendingRestore = Task {
            await waitForCopy(of: selection)
            guard !Task.isCancelled, selections[selection]?.owner == BridgeStatus.Owner.none,
                  selections[selection]?.current?.offer.id == offerID else { return }
            selections[selection]?.pendingRestore = nil
            await restore(selection)
        }
    }

    /// X11 `SAVE_TARGETS`: finish the copy of that offer, own CLIPBOARD from it, then reply.
    func save(_ offer: DesktopOffer, reply: SaveReply) async {
        if selections[.clipboard]?.current?.offer.types != offer.types || selections[.clipboard]?.current == nil {
            selections[.clipboard]?.owner = .desktop
            selections[.clipboard]?.offeredTypes = offer.types
            selections[.clipboard]?.latestOffer = offer.id
            selections[.clipboard]?.cancelImport()
            await importOffer(offer)
        }
        await waitForCopy(of: .clipboard)
        guard let current = selections[.clipboard]?.current, current.isComplete else {
            log.event("CLIPBOARD: save refused, the copy is incomplete or sensitive")
            return reply(saved: false)
        }
        await restore(.clipboard)
        reply(saved: selections[.clipboard]?.owner == .ferry)
    }
}
