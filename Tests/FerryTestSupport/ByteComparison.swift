/// Where two byte sequences first differ, for test expectations on large data: nil when they
/// are equal, else a short description.
///
/// Write `#expect(firstDifference(a, b) == nil)` rather than `#expect(a == b)` for data of more
/// than a few KiB: when `==` of two collections fails inside `#expect`, Swift Testing describes
/// the failure by diffing them, which for megabytes runs for hours instead of failing.
public func firstDifference<A: Collection, B: Collection>(_ actual: A, _ expected: B) -> String?
where A.Element == UInt8, B.Element == UInt8 {
    var index = 0
    var a = actual.makeIterator(), b = expected.makeIterator()
    while true {
        switch (a.next(), b.next()) {
        case (nil, nil):
            return nil
        case let (x?, y?) where x == y:
            index += 1
        case let (x?, y?):
            return "byte \(index) is \(x), not \(y) (\(actual.count) bytes, \(expected.count) expected)"
        default:
            return "\(actual.count) bytes, \(expected.count) expected (equal up to byte \(index))"
        }
    }
}
