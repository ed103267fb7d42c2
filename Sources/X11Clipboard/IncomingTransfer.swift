import DesktopClipboard
import CXCB
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One conversion the backend asked a selection owner for: the state machine of a `receive`
/// (bytes into a descriptor) or of a TARGETS fetch (bytes into memory).
///
/// ICCCM §2.4 and §2.7.2: `ConvertSelection` into `property` of the backend's window, wait for
/// `SelectionNotify`, read the property and delete it. A value of type `INCR` announces chunks:
/// each `PropertyNotify(NewValue)` brings one, read and deleted; an empty one ends the transfer.
/// A property is read in pieces, and the next piece only when the reader has taken the last, so
/// memory stays bounded however large the transfer and however slow the reader.
final class IncomingTransfer {
    /// Where the bytes go.
    enum Sink {
        /// A descriptor the transfer owns (non-blocking from now on) and closes when done.
        case descriptor(Int32)
        /// Memory, failing past `limit` bytes (TARGETS lists, SAVE_TARGETS lists).
        case memory(limit: Int)
    }

    /// How a transfer ended.
    enum Ending {
        case complete(bytes: UInt64, type: UInt32, format: UInt8, memory: [UInt8])
        case failed(DesktopClipboardError)
    }

    enum Phase {
        /// ConvertSelection sent; waiting for the owner's SelectionNotify.
        case awaitingNotify
        /// A property holds bytes still to read (from `readOffset`).
        case reading
        /// INCR: the last chunk was read and deleted; waiting for the next NewValue.
        case awaitingChunk
        /// Everything read; writing out what is buffered.
        case draining
    }

    let selection: UInt32
    let target: UInt32
    let property: UInt32
    let timeout: Duration
    private(set) var sink: Sink
    private let finish: (Ending) -> Void
    var phase = Phase.awaitingNotify
    /// When the owner counts as silent (only while waiting for the owner, never for the reader).
    var deadline: ContinuousClock.Instant?
    private var incr = false
    private var readOffset = 0
    private var chunkBytes = 0
    private var type: UInt32 = 0
    private var format: UInt8 = 8
    private var total: UInt64 = 0
    private let buffer = ByteQueue()
    private var finished = false

    /// Bytes read from the server per GetProperty.
    static let piece = 1 << 20
    /// Read no further piece while this much waits for the reader.
    static let bufferLimit = 1 << 20

    init(selection: UInt32, target: UInt32, property: UInt32, timeout: Duration, sink: Sink,
         finish: @escaping (Ending) -> Void) {
        self.selection = selection
        self.target = target
        self.property = property
        self.timeout = timeout
        self.sink = sink
        self.finish = finish
        self.deadline = .now + timeout
        if case .descriptor(let fd) = sink { _ = cxcb_set_nonblocking(fd) }
    }

    /// The descriptor to poll for writability, when bytes wait for the reader.
    var blockedDescriptor: Int32? {
        if case .descriptor(let fd) = sink, !buffer.isEmpty { return fd }
        return nil
    }

    /// Whether the owner may still write into the property (an INCR transfer abandoned midway):
    /// such a property must not be reused.
    var ownerMayStillWrite: Bool { incr && phase != .draining }

    /// The owner answered: `refused` when it sent property None.
    func notified(refused: Bool, on x: X11Connection, window: UInt32) {
        guard phase == .awaitingNotify else { return }
        if refused { return fail(DesktopClipboardError(.refused, "the owner refused the conversion")) }
        phase = .reading
        readOffset = 0
        chunkBytes = 0
        deadline = nil
        pump(x, window: window)
    }

    /// INCR: the owner wrote the next chunk.
    func newValue(on x: X11Connection, window: UInt32) {
        guard phase == .awaitingChunk else { return }
        phase = .reading
        readOffset = 0
        chunkBytes = 0
        deadline = nil
        pump(x, window: window)
    }

    /// Moves bytes along as far as possible without blocking: out to the reader, then in from
    /// the server while the buffer has room.
    func pump(_ x: X11Connection, window: UInt32) {
        while !finished {
            if case .descriptor(let fd) = sink, !buffer.isEmpty {
                guard buffer.write(to: fd) else {
                    return fail(DesktopClipboardError(.refused, "the reader closed its end of the transfer"))
                }
            }
            guard phase == .reading, buffer.count < Self.bufferLimit else { break }
            guard let value = x.property(property, of: window, offsetBytes: readOffset, maxBytes: Self.piece) else {
                return fail(DesktopClipboardError(.disconnected, "the X connection broke"))
            }
            if readOffset == 0 && chunkBytes == 0 && !incr {
                if value.type == 0 {
                    return fail(DesktopClipboardError(.refused, "the owner announced a property it did not write"))
                }
                type = value.type
                format = value.format
                if value.type == x.atom("INCR") {
                    // Deleting the INCR property asks for the first chunk.
                    incr = true
                    x.deleteProperty(property, of: window)
                    phase = .awaitingChunk
                    deadline = .now + timeout
                    continue
                }
            }
            if incr && chunkBytes == 0 && value.type != 0 && value.type != x.atom("INCR") {
                type = value.type
                format = value.format
            }
            if case .memory(let limit) = sink, buffer.count + value.bytes.count > limit {
                return fail(DesktopClipboardError(.refused, "the owner's answer is larger than \(limit) bytes"))
            }
            buffer.append(value.bytes)
            total += UInt64(value.bytes.count)
            readOffset += value.bytes.count
            chunkBytes += value.bytes.count
            if value.bytesAfter == 0 {
                x.deleteProperty(property, of: window)
                if incr && chunkBytes > 0 {
                    phase = .awaitingChunk
                    deadline = .now + timeout
                } else {
                    phase = .draining
                }
            }
        }
        if phase == .draining && (buffer.isEmpty || isMemory) { complete() }
    }

    /// The owner stayed silent past the deadline.
    func timedOut() {
        fail(DesktopClipboardError(.timeout, "the owner stayed silent for \(timeout)"))
    }

    /// Ends the transfer with `error` (shutdown, broken connection, reader gone).
    func fail(_ error: DesktopClipboardError) {
        guard !finished else { return }
        finished = true
        closeSink()
        finish(.failed(error))
    }

    var isFinished: Bool { finished }

    private var isMemory: Bool { if case .memory = sink { return true } else { return false } }

    private func complete() {
        guard !finished else { return }
        finished = true
        let memory = isMemory ? buffer.takeAll() : []
        closeSink()
        finish(.complete(bytes: total, type: type, format: format, memory: memory))
    }

    private func closeSink() {
        if case .descriptor(let fd) = sink { close(fd) }
        sink = .memory(limit: 0)
    }
}
