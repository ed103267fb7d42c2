import BenchReport
import DBus
#if canImport(Glibc)
import Glibc
#endif

/// The throughput anchor: a raw pipe between two processes on this machine. A child writes the
/// bytes from a 1 MiB buffer into a pipe (1 MiB capacity, as the broker's promise pipes) once told
/// to start; this process reads them to end of file into the same sink the pastes use.
enum PipeAnchor {
    /// `paste-bench --write-pipe BYTES`: waits for one byte on stdin, then writes BYTES to stdout.
    static func writerMain(bytes: Int) -> Int32 {
        var go: UInt8 = 0
        guard read(0, &go, 1) == 1 else { return 1 }
        let buffer = [UInt8](repeating: 0xA5, count: Sink.chunk)
        var left = bytes
        let ok = buffer.withUnsafeBytes { raw -> Bool in
            while left > 0 {
                let n = write(1, raw.baseAddress, min(left, raw.count))
                if n < 0 { if errno == EINTR { continue }; return false }
                left -= n
            }
            return true
        }
        return ok ? 0 : 1
    }

    /// One transfer of `bytes` through a fresh pipe; returns the rate in MB/s (10^6 bytes/s).
    static func transfer(bytes: Int) throws -> Double {
        let data = try FileDescriptor.pipe(bufferSize: 1 << 20)
        let go = try FileDescriptor.pipe()
        let pid = try data.write.withRawValue { out in
            try go.read.withRawValue { input in
                try Spawn.start([Spawn.ownPath, "--write-pipe", String(bytes)], stdin: .descriptor(input), stdout: .descriptor(out))
            }
        }
        data.write.close()
        go.read.close()
        var byte: UInt8 = 1
        let start = now()
        _ = try go.write.withRawValue { write($0, &byte, 1) }
        let received = try data.read.withRawValue { Sink.drain($0).count }
        let elapsed = now() - start
        go.write.close()
        data.read.close()
        let status = Spawn.wait(pid)
        guard status == 0, received == bytes else {
            throw Spawn.Failure(description: "pipe writer: status \(status), \(received) of \(bytes) bytes")
        }
        return Double(bytes) / elapsed
    }
}
