import Dispatch
import Ferry
import FerryModel
import FerryTerminal
#if canImport(Glibc)
import Glibc
#endif

/// `ferry watch --exec CMD…`: the command run once per change, with the new content on its
/// standard input, as `wl-paste --watch CMD…` does.
///
/// Each change is read with its own change count (`Pasteboard1.Read`'s `change-count` option),
/// so the content a run gets is always the change its `FERRY_CHANGE` names: a change already
/// replaced when its turn comes is skipped, never mixed with the next one's content. Runs are one
/// at a time, in order; changes that arrive meanwhile wait, and only the newest of them is still
/// readable once the command ends.
struct WatchExec {
    /// The command and its arguments (the first is looked up in `PATH`).
    var command: [String]
    /// The type asked for; `public.item` for the item's first representation.
    var type: ContentType

    /// What one change gave the command.
    enum Outcome: Equatable {
        /// The command ran and exited with this status (128 + N when killed by signal N).
        case ran(Int32)
        /// The pasteboard changed again before it was read: nothing ran for this change.
        case superseded
        /// The item has nothing conforming to the type asked for: nothing ran.
        case nothingConforming
    }

    /// Reads item 0 as it was at `changeCount` and runs the command on it; an empty pasteboard
    /// runs it with empty input and an empty `FERRY_TYPE`.
    /// - Throws: `CLIFailure` (status 1) when the command cannot be started; what the read throws
    ///   other than NotFound.
    func run(on board: Pasteboard, changeCount: UInt64) async throws -> Outcome {
        var environment = ["FERRY_CHANGE": String(changeCount), "FERRY_TYPE": "", "FERRY_MIME_TYPE": ""]
        let pid: pid_t
        if let read = try await Self.read(board, type: type, changeCount: changeCount) {
            environment["FERRY_TYPE"] = read.deliveredTypeIdentifier
            environment["FERRY_MIME_TYPE"] = read.deliveredType.preferredMIMEType ?? ""
            switch read.content {
            case .bytes(let bytes):
                pid = try startReading(bytes, environment: environment)
            case .stream:
                defer { read.closeStream() }
                guard let fd = read.streamDescriptor else { throw CLIFailure(.failure, "the broker sent a closed descriptor") }
                pid = try start(stdin: fd, environment: environment)
                // The child has its own copy of the descriptor: ours goes (the deferred close), so
                // a promised stream's writer sees only the child's end.
            }
        } else {
            // NotFound: the pasteboard moved on (the newer change is on its way), it is empty, or
            // the item has no such type. Its items, then its change count still saying
            // changeCount (counts never go back), tell which.
            let items = try await Self.items(of: board)
            guard try await board.changeCount == changeCount else { return .superseded }
            guard items.isEmpty else { return .nothingConforming }
            pid = try startReading([], environment: environment)
        }
        return .ran(await Self.wait(for: pid))
    }

    /// The pasteboard's items; none for a named pasteboard that was removed.
    private static func items(of board: Pasteboard) async throws -> [PasteboardItem] {
        let result: Result<[PasteboardItem], FerryError>
        do { result = .success(try await board.items) } catch { result = .failure(error) }
        switch result {
        case .success(let items): return items
        case .failure(let error) where error.code == .notFound: return []
        case .failure(let error): throw error
        }
    }

    /// Item 0 in `type` as it was at `changeCount`, as a descriptor; nil on NotFound.
    private static func read(_ board: Pasteboard, type: ContentType, changeCount: UInt64) async throws -> PasteboardRead? {
        let result: Result<PasteboardRead, FerryError>
        do { result = .success(try await board.read(item: 0, type: type, preferFD: true, changeCount: changeCount)) } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let read): return read
        case .failure(let error) where error.code == .notFound: return nil
        case .failure(let error): throw error
        }
    }

    /// Starts the command reading `bytes` (from a sealed memory file) on its standard input.
    private func startReading(_ bytes: [UInt8], environment: [String: String]) throws -> pid_t {
        let input = try LinuxCalls.memoryFile(name: "ferry-watch", contents: bytes, sealed: true)
        defer { close(input) }
        return try start(stdin: input, environment: environment)
    }

    /// Starts the command with `stdin` as its standard input and `environment` added to ours.
    private func start(stdin: Int32, environment: [String: String]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        // The child starts with default signal actions and an empty mask: watch's own SIGINT
        // handler and the threads' blocked signals are not the command's business.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let added = environment.map { "\($0.key)=\($0.value)" }
        var inherited: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "="), environment[String(text[..<equals])] == nil { inherited.append(text) }
            entry += 1
        }
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = (inherited + added).map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let code = posix_spawnp(&pid, command[0], &actions, &attributes, argv, envp)
        guard code == 0 else { throw CLIFailure(.failure, "cannot run '\(command[0])': \(LinuxCalls.reason(code))") }
        return pid
    }

    /// Waits for `pid` on a thread of its own; its exit status, or 128 + the signal that ended it.
    private static func wait(for pid: pid_t) async -> Int32 {
        await withCheckedContinuation { continuation in
            DispatchQueue(label: "org.ferry.watch-exec").async {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                let signal = status & 0x7F
                continuation.resume(returning: signal == 0 ? (status >> 8) & 0xFF : 128 + signal)
            }
        }
    }
}
