import DesktopClipboard
import Synchronization
import CXCB
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A SAVE_TARGETS request waiting for the bridge's reply.
struct PendingSave {
    let token: UInt64
    let requestor: UInt32
    let property: UInt32
    let target: UInt32
    let time: UInt32
    /// Refused when no reply came by then.
    let deadline: ContinuousClock.Instant
    /// The CLIPBOARD offer to save.
    let offerID: UInt64
    /// The targets the owner listed on the request (empty: all its data targets).
    let types: [String]
    var announced = false
}

/// The clipboard manager (freedesktop.org ClipboardManager spec, ICCCM §2.8; desktop-bridge R9):
/// the backend owns `CLIPBOARD_MANAGER` when nobody does, and an exiting CLIPBOARD owner asks it
/// to save its data with the side-effect target `SAVE_TARGETS`, then waits for the answer.
extension DisplayLoop {
    /// How long the bridge has to reply to a SAVE_TARGETS request before it is refused.
    static let saveTimeout = Duration.seconds(10)

    /// At start-up, before anything else is selected: takes CLIPBOARD_MANAGER if it has no owner.
    /// Never takes it from another manager (nor from an XWayland XWM that holds it).
    func takeManagerAtStart() {
        guard x.owner(of: atoms.clipboardManager) == 0 else { return }
        x.setProperty(atoms.timestampProperty, of: window, type: atoms.integer, format: 8,
                      bytes: UnsafeRawBufferPointer(start: nil, count: 0), append: true)
        x.flush()
        var time: UInt32?
        // Only this window's property change can arrive yet: nothing else is selected or owned.
        while time == nil, let event = x.waitEvent() {
            defer { free(event) }
            guard event.pointee.response_type & 0x7F == CXCB_PROPERTY_NOTIFY else { continue }
            let e = UnsafeRawPointer(event).load(as: xcb_property_notify_event_t.self)
            if e.window == window && e.atom == atoms.timestampProperty { time = e.time }
        }
        guard let time else { return }
        x.setOwner(window, of: atoms.clipboardManager, time: time)
        if x.owner(of: atoms.clipboardManager) == window { managerHeld.store(true, ordering: .relaxed) }
    }

    /// A request to CLIPBOARD_MANAGER: only SAVE_TARGETS is answered, one at a time.
    func managerRequested(_ e: xcb_selection_request_event_t, property: UInt32) {
        func refuse() { x.notify(e.requestor, selection: e.selection, target: e.target, property: 0, time: e.time) }
        guard managerHeld.load(ordering: .relaxed), e.target == atoms.saveTargets, pendingSave == nil,
              let clipboard = watched[.clipboard] else { return refuse() }
        var types: [String] = []
        if e.property != 0, let value = x.property(property, of: e.requestor, maxBytes: 1 << 16), value.format == 32 {
            types = dataTargets(value.items32)
        }
        nextSaveToken += 1
        pendingSave = PendingSave(token: nextSaveToken, requestor: e.requestor, property: property, target: e.target,
                                  time: e.time, deadline: .now + Self.saveTimeout, offerID: clipboard.offerID,
                                  types: types)
        // The offer is reported first; while its TARGETS are on their way, the request waits.
        if clipboard.types != nil { announceSave() }
    }

    /// The offer `id` was just reported: a save request waiting for it goes out now.
    func offerReported(_ id: UInt64) {
        if pendingSave?.offerID == id { announceSave() }
    }

    private func announceSave() {
        guard var save = pendingSave, !save.announced else { return }
        save.announced = true
        pendingSave = save
        let types = save.types.isEmpty ? (watched[.clipboard]?.types ?? []) : save.types
        let token = save.token
        let reply = SaveReply { [weak self] saved in
            self?.submit { loop in loop.answerSave(token: token, saved: saved) }
        }
        continuation.yield(.saveRequested(DesktopOffer(id: save.offerID, selection: .clipboard, types: types),
                                          reply: reply))
    }

    /// The bridge's reply (or the timeout's refusal): the exiting owner may quit now.
    func answerSave(token: UInt64, saved: Bool) {
        guard !hasEnded, let save = pendingSave, save.token == token else { return }
        pendingSave = nil
        if saved {
            // The spec's answer: the property, holding a NULL-typed empty value.
            x.setProperty(save.property, of: save.requestor, type: atoms.null, items: [])
        }
        x.notify(save.requestor, selection: atoms.clipboardManager, target: save.target,
                 property: saved ? save.property : 0, time: save.time)
    }
}
