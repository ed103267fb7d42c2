import CDataControl
import CWayland
import DesktopClipboard
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The data-control state machine: the listeners libwayland calls and the requests the backend's
// methods queue. Everything here runs on the display thread.

extension WaylandConnection {
    private static func from(_ data: UnsafeMutableRawPointer?) -> WaylandConnection {
        Unmanaged<WaylandConnection>.fromOpaque(data!).takeUnretainedValue()
    }

    private var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Fills the listener tables: capture-free C functions that find the connection through
    /// their context pointer.
    func installListeners() {
        deviceListener.initialize(to: ferry_dc_device_listener(
            data_offer: { data, _, offer in WaylandConnection.from(data).introduce(offer) },
            selection: { data, _, offer in WaylandConnection.from(data).selected(offer, on: .clipboard) },
            finished: { data, _ in WaylandConnection.from(data).finishedByCompositor() },
            primary_selection: { data, _, offer in WaylandConnection.from(data).selected(offer, on: .primary) }))
        sourceListener.initialize(to: ferry_dc_source_listener(
            send: { data, source, type, fd in WaylandConnection.from(data).send(source, type, fd) },
            cancelled: { data, source in WaylandConnection.from(data).cancelled(source) }))
        offerListener.initialize(to: ferry_dc_offer_listener(
            offer: { data, offer, type in WaylandConnection.from(data).offered(offer, type) }))
        callbackListener.initialize(to: wl_callback_listener(
            done: { data, callback, _ in WaylandConnection.from(data).synced(callback) }))
    }

    // MARK: Events

    private func introduce(_ offer: OpaquePointer?) {
        guard let offer else { return }
        introduced[offer] = []
        _ = ferry_dc_offer_add_listener(offer, offerListener, context)
    }

    private func offered(_ offer: OpaquePointer?, _ type: UnsafePointer<CChar>?) {
        guard let offer, let type else { return }
        let name = String(cString: type)
        // Offer order, each name once (a source may repeat a type).
        if let types = introduced[offer], !types.contains(name) { introduced[offer] = types + [name] }
    }

    private func selected(_ offer: OpaquePointer?, on selection: DesktopSelection) {
        let types = offer.flatMap { introduced.removeValue(forKey: $0) } ?? []
        if let previous = current.removeValue(forKey: selection) {
            ferry_dc_offer_destroy(family, previous.offer)
        }
        if ownSource[selection] != nil {
            // The backend's own source is live: this is the echo of its own set_selection
            // (a foreign owner would have cancelled the source first). Never reported.
            if let offer { ferry_dc_offer_destroy(family, offer) }
            return
        }
        guard let offer else {
            if announced[selection] == true {
                announced[selection] = false
                continuation.yield(.emptied(selection, .unknown))
            }
            return
        }
        let id = nextOfferID
        nextOfferID += 1
        current[selection] = (offer, id, types)
        announced[selection] = true
        continuation.yield(.offered(DesktopOffer(id: id, selection: selection, types: types)))
    }

    private func send(_ source: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ fd: Int32) {
        guard let source, let type, let entry = sources[source] else {
            close(fd)
            return
        }
        entry.serve(String(cString: type), fd)
    }

    private func cancelled(_ source: OpaquePointer?) {
        guard let source, let entry = sources.removeValue(forKey: source) else { return }
        ferry_dc_source_destroy(family, source)
        guard ownSource[entry.selection] == source else { return }
        ownSource[entry.selection] = nil
        // Reported only for an ownership `own` confirmed; an `own` still waiting throws
        // `.notOwner` instead.
        if entry.confirmed { continuation.yield(.ownershipLost(entry.selection)) }
    }

    private func synced(_ callback: OpaquePointer?) {
        guard let callback, let waiter = syncWaiters.removeValue(forKey: callback) else { return }
        wl_callback_destroy(callback)
        waiter(true)
    }

    // MARK: Requests

    /// Hands `descriptor` to the owner of `offer` for its bytes of `type`; closes it.
    func receive(_ type: String, from offer: DesktopOffer, into descriptor: Int32)
        -> Result<ReceiveOutcome, DesktopClipboardError> {
        defer { close(descriptor) }
        guard let entry = current[offer.selection], entry.id == offer.id else {
            return .failure(DesktopClipboardError(.offerGone, "the offer \(offer.selection) #\(offer.id) was replaced"))
        }
        guard entry.types.contains(type), !type.utf8.contains(0) else {
            return .failure(DesktopClipboardError(.refused, "the offer \(offer.selection) #\(offer.id) has no type \(type)"))
        }
        // libwayland duplicates the descriptor into its outgoing buffer, so closing ours right
        // after is safe; the flush sends it now rather than at the next loop round.
        type.withCString { ferry_dc_offer_receive(family, entry.offer, $0, descriptor) }
        wl_display_flush(display)
        return .success(.handedToSource)
    }

    /// Makes a new source offering `types`, sets it as `selection`, retires the backend's
    /// previous source there, and confirms with a `wl_display_sync` round trip.
    func own(_ selection: DesktopSelection, types: [String], serve: @escaping @Sendable (String, Int32) -> Void,
             completion: @escaping (Result<Void, DesktopClipboardError>) -> Void) {
        guard selection == .clipboard || supportsPrimary else {
            completion(.failure(DesktopClipboardError(.unavailable,
                "\(protocolName) has no PRIMARY selection (zwlr_data_control_manager_v1 before version 2)")))
            return
        }
        if let bad = types.first(where: { $0.isEmpty || $0.utf8.contains(0) }) {
            completion(.failure(DesktopClipboardError(.refused, "cannot offer the type name \(bad.debugDescription)")))
            return
        }
        guard let manager, let device, let source = ferry_dc_create_data_source(family, manager) else {
            completion(.failure(Self.closed))
            return
        }
        _ = ferry_dc_source_add_listener(source, sourceListener, context)
        var seen = Set<String>()
        for type in types where seen.insert(type).inserted {
            type.withCString { ferry_dc_source_offer(family, source, $0) }
        }
        sources[source] = OwnSource(selection: selection, serve: serve)
        let previous = ownSource.updateValue(source, forKey: selection)
        switch selection {
        case .clipboard: ferry_dc_device_set_selection(family, device, source)
        case .primary: ferry_dc_device_set_primary_selection(family, device, source)
        }
        if let previous {
            // Replaced by the new source: its cancelled event (if any) must not look like a loss.
            sources[previous] = nil
            ferry_dc_source_destroy(family, previous)
        }
        sync { [self] alive in
            guard alive else { return completion(.failure(Self.closed)) }
            guard ownSource[selection] == source else {
                return completion(.failure(DesktopClipboardError(.notOwner,
                    "another client took \(selection) before the compositor confirmed Ferry's ownership")))
            }
            sources[source]?.confirmed = true
            announced[selection] = true
            completion(.success(()))
        }
    }

    /// Destroys the backend's source on `selection`, which empties it. Never touches another
    /// client's selection: no `set_selection(NULL)`, which could clear an owner whose arrival
    /// this thread has not seen yet.
    func disown(_ selection: DesktopSelection) {
        guard let source = ownSource.removeValue(forKey: selection) else { return }
        sources[source] = nil
        ferry_dc_source_destroy(family, source)
        announced[selection] = false
        wl_display_flush(display)
    }

    /// Calls `done(true)` when the compositor has handled every request sent so far, or
    /// `done(false)` when the connection ends first.
    private func sync(_ done: @escaping (Bool) -> Void) {
        guard let callback = wl_display_sync(display) else { return done(false) }
        syncWaiters[callback] = done
        _ = wl_callback_add_listener(callback, callbackListener, context)
    }
}
