import DesktopClipboard
import Synchronization
import CXCB
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A selection the backend owns.
struct Ownership {
    /// The offered types by atom.
    let types: [UInt32: String]
    /// The offered atoms in the order given.
    let advertised: [UInt32]
    let serve: @Sendable (String, Int32) -> Void
    /// The server time of the acquisition.
    let time: UInt32
}

extension DisplayLoop {
    /// A requestor that stops deleting INCR chunks for this long is dropped.
    static let stalledRequestor = Duration.seconds(5)
    /// A serve pipe that stays silent this long while a requestor waits is given up.
    static let silentServer = Duration.seconds(30)

    /// Data up to this size goes in one property, more by INCR: under the server's request
    /// limit, and at most 4 MiB so that one transfer never holds more.
    var propertyLimit: Int { min(x.maximumRequestBytes - 4096, 4 << 20) }
    /// One INCR chunk: 1.5 MiB. Measured on Xvfb with `xclip -o` reading 256 MiB against an
    /// xclip owner (scripts/bridge-x11-pairs.sh, BENCHMARKS.md): 256 KiB chunks ran at 0.72×
    /// xclip's speed, 4 MiB ones at 0.90×, 1 MiB at 1.02× and 1.5 MiB at 1.04×, the steadiest.
    var chunkSize: Int { min(propertyLimit, 3 << 19) }
    /// A serve pipe's capacity: a chunk, or as much as an unprivileged process may ask for
    /// (fs.pipe-max-size, 1 MiB unless raised).
    var pipeSize: Int { min(chunkSize, 1 << 20) }

    // MARK: Acquiring and releasing

    /// Takes `selection` with a real server time and confirms it with GetSelectionOwner.
    func startOwn(_ selection: DesktopSelection, types: [String], serve: @escaping @Sendable (String, Int32) -> Void,
                  done: @escaping (Result<Void, DesktopClipboardError>) -> Void) {
        guard !hasEnded else { return done(.failure(DesktopClipboardError(.disconnected, "the backend was shut down"))) }
        var names: [String] = []
        var seen: Set<String> = []
        for type in types where !type.isEmpty && !protocolTargets.contains(type) && seen.insert(type).inserted {
            names.append(type)
        }
        let advertised = x.atoms(names)
        var byAtom: [UInt32: String] = [:]
        for (atom, name) in zip(advertised, names) where atom != 0 { byAtom[atom] = name }
        let atom = atoms.atom(of: selection)
        withServerTime { [unowned self] time in
            guard let time else { return done(.failure(DesktopClipboardError(.disconnected, "the X connection broke"))) }
            self.x.setOwner(self.window, of: atom, time: time)
            guard let owner = self.x.owner(of: atom) else {
                return done(.failure(DesktopClipboardError(.disconnected, "the X connection broke")))
            }
            guard owner == self.window else {
                return done(.failure(DesktopClipboardError(.notOwner, "another client took \(selection) first")))
            }
            self.owned[selection] = Ownership(types: byAtom, advertised: advertised.filter { $0 != 0 },
                                              serve: serve, time: time)
            self.watched[selection] = nil
            self.expectOwnClear.remove(selection)
            done(.success(()))
        }
    }

    /// Gives `selection` up if the backend owns it; never clears another client's: the release
    /// carries the acquisition's time, which the server ignores once someone took it later.
    func disown(_ selection: DesktopSelection) {
        guard !hasEnded, let ownership = owned.removeValue(forKey: selection) else { return }
        let atom = atoms.atom(of: selection)
        x.setOwner(0, of: atom, time: ownership.time)
        if x.owner(of: atom) == 0 { expectOwnClear.insert(selection) }
    }

    /// `SelectionClear`: another client took (or cleared) a selection the backend owned.
    func selectionCleared(_ atom: UInt32, time: UInt32) {
        if atom == atoms.clipboardManager {
            // Lost to another manager: never taken back.
            managerHeld.store(false, ordering: .relaxed)
            return
        }
        guard let selection = atoms.selection(of: atom), let ownership = owned[selection],
              time == CXCB_CURRENT_TIME || time >= ownership.time else { return }
        owned[selection] = nil
        continuation.yield(.ownershipLost(selection))
    }

    // MARK: Answering requests

    /// A `SelectionRequest` for something the backend owns: starts the answer's state machine.
    func selectionRequested(_ e: xcb_selection_request_event_t) {
        // Obsolete clients send property None: the target names the property then.
        let property = e.property == 0 ? e.target : e.property
        if e.selection == atoms.clipboardManager { return managerRequested(e, property: property) }
        guard let selection = atoms.selection(of: e.selection), let ownership = owned[selection],
              e.time == CXCB_CURRENT_TIME || e.time >= ownership.time else {
            return x.notify(e.requestor, selection: e.selection, target: e.target, property: 0, time: e.time)
        }
        let request = OutgoingRequest(requestor: e.requestor, selection: e.selection, target: e.target,
                                      property: property, time: e.time)
        if e.target == atoms.multiple {
            guard e.property != 0, let value = x.property(property, of: e.requestor, maxBytes: 1 << 16),
                  value.format == 32, value.items32.count >= 2 else {
                return x.notify(e.requestor, selection: e.selection, target: e.target, property: 0, time: e.time)
            }
            let pairs = Array(value.items32.prefix(value.items32.count & ~1))
            request.pairs = pairs
            for i in stride(from: 0, to: pairs.count, by: 2) {
                addPart(to: request, target: pairs[i], property: pairs[i + 1], ownership: ownership)
            }
        } else {
            addPart(to: request, target: e.target, property: property, ownership: ownership)
        }
        checkNotify(request)
    }

    private func addPart(to request: OutgoingRequest, target: UInt32, property: UInt32, ownership: Ownership) {
        let part = OutgoingPart(request: request, target: target, property: property,
                                propertyLimit: propertyLimit, chunk: chunkSize)
        request.parts.append(part)
        let requestor = request.requestor
        switch target {
        case _ where property == 0:
            part.state = .failed
        case atoms.targets:
            let list = [atoms.targets, atoms.timestamp, atoms.multiple] + ownership.advertised
            x.setProperty(property, of: requestor, type: CXCB_ATOM_ATOM, items: list)
            part.state = .done
        case atoms.timestamp:
            x.setProperty(property, of: requestor, type: CXCB_ATOM_INTEGER, items: [ownership.time])
            part.state = .done
        default:
            var ends: [Int32] = [-1, -1]
            guard let name = ownership.types[target], parts[part.key] == nil, cxcb_pipe_cloexec(&ends) == 0 else {
                part.state = .failed
                return
            }
            _ = cxcb_set_nonblocking(ends[0])
            _ = cxcb_set_pipe_size(ends[0], Int32(pipeSize))
            part.pipe = ends[0]
            part.pipeIdentity = PipeIdentity(of: ends[0])
            // TEXT is the owner's choice of encoding: the bridge serves UTF-8.
            part.dataType = target == atoms.text ? atoms.utf8String : target
            part.deadline = .now + Self.silentServer
            parts[part.key] = part
            ownership.serve(name, ends[1])
        }
    }

    /// Sends the `SelectionNotify` once no part is still collecting; forgets finished parts.
    private func checkNotify(_ request: OutgoingRequest) {
        guard !request.notified, !request.parts.contains(where: { $0.state == .collecting }) else { return }
        request.notified = true
        if var pairs = request.pairs {
            for (i, part) in request.parts.enumerated() where part.state == .failed { pairs[2 * i + 1] = 0 }
            x.setProperty(request.property, of: request.requestor, type: atoms.atomPair, items: pairs)
            x.notify(request.requestor, selection: request.selection, target: request.target,
                     property: request.property, time: request.time)
        } else {
            let refused = request.parts.first?.state == .failed
            x.notify(request.requestor, selection: request.selection, target: request.target,
                     property: refused ? 0 : request.property, time: request.time)
        }
        for part in request.parts where part.state == .done || part.state == .failed { forget(part) }
        retireIfFinished(request)
    }

    /// Breaks the request ↔ part cycle once nothing of the request is in flight.
    private func retireIfFinished(_ request: OutgoingRequest) {
        if request.notified && !request.parts.contains(where: { parts[$0.key] === $0 }) { request.parts = [] }
    }

    /// `serve(from:for:)`: the part whose serve pipe `descriptor` is the write end of reads
    /// `file` in its place, if nothing went into the pipe yet. Takes both descriptors (closing the
    /// pipe) when it returns true, neither when false.
    func serveFile(_ file: Int32, for descriptor: Int32) -> Bool {
        var info = stat()
        guard fstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, let pipe = PipeIdentity(of: descriptor),
              let part = parts.values.first(where: { $0.pipeIdentity == pipe }),
              part.state == .collecting, part.buffer.isEmpty, !part.endOfFile,
              cxcb_bytes_waiting(part.pipe) == 0 else { return false }
        part.closePipe()
        close(descriptor)
        part.pipe = file
        part.pipeIdentity = nil
        part.sendsFromFile = true
        // A regular file is always readable: the next poll reads it at once.
        return true
    }

    /// The serve pipe has bytes (or reached its end).
    func pipeReadable(_ part: OutgoingPart) {
        guard part.pipe >= 0 else { return }
        let n = part.buffer.read(from: part.pipe, limit: part.limit - part.buffer.count)
        if n > 0 {
            if part.state == .collecting || part.requestorWaiting { part.deadline = .now + Self.silentServer }
        } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
            // End of file (or a broken writer, which ends the data the same way).
            part.endOfFile = true
            part.closePipe()
        } else {
            return
        }
        advance(part)
    }

    private func advance(_ part: OutgoingPart) {
        let requestor = part.request.requestor
        switch part.state {
        case .collecting:
            if part.endOfFile {
                part.buffer.take(upTo: part.buffer.count) {
                    x.setProperty(part.property, of: requestor, type: part.dataType, format: 8, bytes: $0)
                }
                part.state = .done
                checkNotify(part.request)
            } else if part.buffer.count >= part.propertyLimit {
                // Too large for one property: announce INCR with a lower bound of the size, and
                // send chunks as the requestor deletes the property (ICCCM §2.7.2).
                watchRequestor(requestor)
                part.watchesRequestor = true
                x.setProperty(part.property, of: requestor, type: atoms.incr, items: [UInt32(part.buffer.count)])
                part.state = .incr
                part.requestorWaiting = false
                part.deadline = .now + Self.stalledRequestor
                checkNotify(part.request)
            }
        case .incr:
            guard part.requestorWaiting else { return }
            if part.sendsFromFile && part.buffer.isEmpty && !part.endOfFile {
                sendChunkFromFile(part)
            } else if part.buffer.count >= part.chunk || ((part.endOfFile || part.sendsFromFile) && !part.buffer.isEmpty) {
                let sent = part.buffer.take(upTo: part.chunk) { bytes -> Int in
                    x.setProperty(part.property, of: requestor, type: part.dataType, format: 8, bytes: bytes)
                    return bytes.count
                }
                part.sent += UInt64(sent)
                part.requestorWaiting = false
                part.deadline = .now + Self.stalledRequestor
            } else if part.endOfFile {
                // The empty chunk ends the transfer.
                x.setProperty(part.property, of: requestor, type: part.dataType, format: 8,
                              bytes: UnsafeRawBufferPointer(start: nil, count: 0))
                part.state = .done
                forget(part)
            }
        case .done, .failed:
            break
        }
    }

    /// INCR from a file: the next chunk goes from the file to the socket by sendfile (what the
    /// file read before INCR was announced went first, from the buffer). At the file's end the
    /// empty chunk follows on the requestor's next deletion. A file that shrinks during the
    /// request (someone truncated it) abandons the transfer: the requestor has its chunk padded
    /// with zeros and waits for one that never comes, instead of taking a shortened file for
    /// whole.
    private func sendChunkFromFile(_ part: OutgoingPart) {
        if part.fileOffset < 0 { part.fileOffset = lseek(part.pipe, 0, SEEK_CUR) }
        var info = stat()
        let left = part.fileOffset >= 0 && fstat(part.pipe, &info) == 0 ? info.st_size - part.fileOffset : 0
        guard left > 0 else {
            part.endOfFile = true
            part.closePipe()
            return advance(part)
        }
        let count = min(part.chunk, left)
        switch x.setProperty(part.property, of: part.request.requestor, type: part.dataType, from: part.pipe,
                             at: &part.fileOffset, count: count) {
        case .sent:
            part.sent += UInt64(count)
            part.requestorWaiting = false
            part.deadline = .now + Self.stalledRequestor
        case .fileShrank, .broken:
            forget(part)
        }
    }

    /// INCR: the requestor deleted the property, asking for the next chunk.
    func requestorDeleted(_ part: OutgoingPart) {
        guard part.state == .incr, part.request.notified, !part.requestorWaiting else { return }
        part.requestorWaiting = true
        part.deadline = .now + Self.silentServer
        advance(part)
    }

    /// A deadline passed: a requestor that stopped reading is dropped (the pipe closed, so the
    /// writer sees EPIPE), a server that stopped writing refused.
    func partTimedOut(_ part: OutgoingPart) {
        if part.state == .collecting {
            part.state = .failed
            part.closePipe()
            checkNotify(part.request)
        } else {
            forget(part)
        }
    }

    /// Drops a part: closes its pipe, stops watching its requestor when nothing else needs it.
    private func forget(_ part: OutgoingPart) {
        part.closePipe()
        part.deadline = nil
        guard parts[part.key] === part else { return }
        parts[part.key] = nil
        if part.watchesRequestor {
            part.watchesRequestor = false
            unwatchRequestor(part.request.requestor)
        }
        retireIfFinished(part.request)
    }

    private func watchRequestor(_ requestor: UInt32) {
        if requestorWatches[requestor, default: 0] == 0 { x.watchProperties(of: requestor, true) }
        requestorWatches[requestor, default: 0] += 1
    }

    private func unwatchRequestor(_ requestor: UInt32) {
        guard let count = requestorWatches[requestor] else { return }
        if count <= 1 {
            requestorWatches[requestor] = nil
            x.watchProperties(of: requestor, false)
        } else {
            requestorWatches[requestor] = count - 1
        }
    }
}
