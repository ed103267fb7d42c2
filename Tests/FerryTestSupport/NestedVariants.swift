/// A marshalled D-Bus message (little-endian, as `Message.wireBytes()` gives one) whose last
/// argument is a variant holding the `i` 7, rewritten so that `levels` more variants nest
/// between the two: the bytes a peer could send on a direct connection, which no library
/// checks, to make a recursive reader overflow its stack.
public func nestingVariants(in bytes: [UInt8], levels: Int) -> [UInt8] {
    precondition(bytes[0] == UInt8(ascii: "l"), "a little-endian message")
    // The last argument's bytes: its signature `1 'i' 0`, padding to 4, then 7.
    let signature: [UInt8] = [1, UInt8(ascii: "i"), 0]
    guard let at = (bytes.count - 10...bytes.count - 7).first(where: { Array(bytes[$0..<($0 + 3)]) == signature }),
          bytes.suffix(4) == [7, 0, 0, 0] else { preconditionFailure("the last argument is not a variant holding 7") }
    let length = bytes[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) }
    let bodyStart = bytes.count - length
    var tail: [UInt8] = []
    tail.reserveCapacity(3 * levels + 10)
    for _ in 0..<levels { tail += [1, UInt8(ascii: "v"), 0] }
    tail += signature
    while (at + tail.count) % 4 != 0 { tail.append(0) }
    tail += [7, 0, 0, 0]
    var out = Array(bytes[..<at]) + tail
    let bodyLength = out.count - bodyStart
    out.replaceSubrange(4..<8, with: (0..<4).map { UInt8(truncatingIfNeeded: bodyLength >> (8 * $0)) })
    return out
}
