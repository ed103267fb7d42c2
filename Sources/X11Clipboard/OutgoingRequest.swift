import CXCB
import DesktopClipboard
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A pipe as `fstat` names it: both its ends share the identity, and no other open pipe has it.
struct PipeIdentity: Hashable {
    let device: UInt64
    let inode: UInt64

    /// The pipe `descriptor` is an end of; nil when it is no pipe (or no descriptor).
    init?(of descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// A requestor's property: the key of one answer in flight.
struct PartKey: Hashable {
    let requestor: UInt32
    let property: UInt32
}

/// One `SelectionRequest` the backend answers as owner: one part, or one per ATOM_PAIR of a
/// MULTIPLE. The `SelectionNotify` goes out once every part is written, refused, or has started
/// INCR (ICCCM §2.7.2).
final class OutgoingRequest {
    let requestor: UInt32
    let selection: UInt32
    let target: UInt32
    let property: UInt32
    let time: UInt32
    /// MULTIPLE: the pairs as the requestor wrote them.
    var pairs: [UInt32]?
    var parts: [OutgoingPart] = []
    var notified = false

    init(requestor: UInt32, selection: UInt32, target: UInt32, property: UInt32, time: UInt32) {
        self.requestor = requestor
        self.selection = selection
        self.target = target
        self.property = property
        self.time = time
    }
}

/// One target written into one property of a requestor: inline (TARGETS, TIMESTAMP), or read
/// from the pipe `serve` writes (or the file handed over in its place) and sent as one property
/// or in INCR chunks.
final class OutgoingPart {
    enum State {
        /// Reading the pipe; not yet decided between one property and INCR.
        case collecting
        /// INCR announced: one chunk per deletion of the property by the requestor.
        case incr
        /// Written completely.
        case done
        /// Refused (property None in the answer).
        case failed
    }

    /// The request this part answers (the request lets go of its parts once all are finished).
    let request: OutgoingRequest
    let target: UInt32
    let property: UInt32
    /// The type written on the property.
    var dataType: UInt32 = 0
    var state = State.collecting
    /// The read end of the serve pipe (non-blocking), or the regular file handed over in its
    /// place (`serve(from:for:)`); -1 once closed.
    var pipe: Int32 = -1
    /// The serve pipe as `fstat` names it (device, inode), which its write end shares: how a
    /// file handed over finds its part. Nil once a file replaced the pipe.
    var pipeIdentity: PipeIdentity?
    var endOfFile = false
    /// A regular file replaced the pipe: once INCR is announced, each chunk goes from the file to
    /// the X socket by sendfile, past `buffer`, from `fileOffset` (-1: where reads stopped).
    var sendsFromFile = false
    var fileOffset: off_t = -1
    let buffer = ByteQueue()
    /// INCR: the requestor deleted the last chunk and waits for the next.
    var requestorWaiting = false
    var deadline: ContinuousClock.Instant?
    var sent: UInt64 = 0
    /// Whether this part asked for the requestor's property changes (INCR).
    var watchesRequestor = false

    /// Data that fits under this goes in one property; more goes by INCR.
    let propertyLimit: Int
    /// The size of one INCR chunk.
    let chunk: Int

    init(request: OutgoingRequest, target: UInt32, property: UInt32, propertyLimit: Int, chunk: Int) {
        self.request = request
        self.propertyLimit = propertyLimit
        self.chunk = chunk
        self.target = target
        self.property = property
    }

    var key: PartKey { PartKey(requestor: request.requestor, property: property) }

    /// The most bytes held before deciding (collecting) or per chunk (INCR).
    var limit: Int { state == .collecting ? propertyLimit : chunk }

    /// Whether the pipe should be polled: open, and room in the buffer.
    var wantsInput: Bool {
        pipe >= 0 && !endOfFile && (state == .collecting || (state == .incr && !sendsFromFile)) && buffer.count < limit
    }

    func closePipe() {
        if pipe >= 0 { close(pipe); pipe = -1 }
    }

}
