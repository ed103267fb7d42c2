import DesktopClipboard
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the backend knows of a selection's foreign owner: the offer it reported (or is about to).
struct WatchedOwner {
    let offerID: UInt64
    let owner: UInt32
    /// The time of the change, used for every conversion from this owner.
    let time: UInt32
    /// The owner's data targets; nil while its TARGETS are being fetched.
    var types: [String]?
}

/// Targets that describe the protocol rather than data (desktop-bridge R4): never offered.
let protocolTargets: Set<String> = [
    "TARGETS", "MULTIPLE", "TIMESTAMP", "SAVE_TARGETS", "DELETE", "INSERT_SELECTION",
    "INSERT_PROPERTY", "INCR", "PIXMAP", "TARGET_SIZES",
]

extension DisplayLoop {
    /// How long an owner may take to answer TARGETS.
    static let targetsTimeout = Duration.seconds(2)

    /// An XFixes `SelectionNotify`: a new owner, or none (subtype 0: cleared; 1, 2: the owner's
    /// window or client went away).
    func ownerChanged(selection atom: UInt32, owner: UInt32, subtype: UInt8, time: UInt32) {
        guard let selection = atoms.selection(of: atom) else { return }
        if owner == window {
            // The backend's own ownership is never an offer (loop guard, desktop-bridge R11).
            watched[selection] = nil
            return
        }
        if owner == 0 {
            watched[selection] = nil
            if expectOwnClear.remove(selection) != nil { return }
            continuation.yield(.emptied(selection, subtype == 0 ? .cleared : .ownerQuit))
            return
        }
        foreignOwner(owner, of: selection, time: time)
    }

    /// A foreign client owns `selection`: fetch its TARGETS (never waiting for them on this
    /// thread), then report the offer unless a newer owner replaced it meanwhile.
    func foreignOwner(_ owner: UInt32, of selection: DesktopSelection, time: UInt32) {
        nextOfferID += 1
        let id = nextOfferID
        watched[selection] = WatchedOwner(offerID: id, owner: owner, time: time, types: nil)
        convert(atoms.atom(of: selection), to: atoms.targets, time: time, timeout: Self.targetsTimeout,
                sink: .memory(limit: 1 << 18)) { [unowned self] ending in
            guard self.watched[selection]?.offerID == id else { return }
            var types: [String] = []
            if case .complete(_, _, let format, let memory) = ending, format == 32 {
                types = self.dataTargets(PropertyValue(type: 0, format: 32, bytes: memory, bytesAfter: 0).items32)
            }
            // An owner that cannot list its targets still replaced the selection: an offer of
            // nothing says so.
            self.watched[selection]?.types = types
            self.continuation.yield(.offered(DesktopOffer(id: id, selection: selection, types: types)))
            self.offerReported(id)
        }
    }

    /// The names of `atoms` in order, without protocol targets, unknown atoms or duplicates.
    func dataTargets(_ atoms: [UInt32]) -> [String] {
        var seen: Set<String> = []
        return x.names(of: atoms).compactMap { name in
            guard let name, !protocolTargets.contains(name), seen.insert(name).inserted else { return nil }
            return name
        }
    }

    /// Starts a `receive`: converts the offer's selection to `type` into a descriptor.
    func startReceive(_ type: String, from offer: DesktopOffer, into descriptor: Int32, timeout: Duration,
                      done: @escaping (Result<ReceiveOutcome, DesktopClipboardError>) -> Void) {
        guard !hasEnded else {
            close(descriptor)
            return done(.failure(DesktopClipboardError(.disconnected, "the backend was shut down")))
        }
        guard let current = watched[offer.selection], current.offerID == offer.id else {
            close(descriptor)
            return done(.failure(DesktopClipboardError(.offerGone, "\(offer.selection) offer #\(offer.id) was replaced")))
        }
        let target = x.atom(type)
        guard !type.isEmpty, target != 0 else {
            close(descriptor)
            return done(.failure(DesktopClipboardError(.refused, "cannot name the type \(type) on the X display")))
        }
        convert(atoms.atom(of: offer.selection), to: target, time: current.time, timeout: timeout,
                sink: .descriptor(descriptor)) { ending in
            switch ending {
            case .complete(let bytes, _, _, _): done(.success(.complete(bytes: bytes)))
            case .failed(let error): done(.failure(error))
            }
        }
    }
}
