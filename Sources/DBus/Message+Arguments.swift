extension Message {
    /// The body converted to the given types, in order.
    ///
    /// ```swift
    /// let (name, flags) = try call.arguments(as: String.self, UInt32.self)
    /// ```
    ///
    /// - Throws: `InvalidArgs` naming the expected and actual signatures when the body does not
    ///   have exactly these types.
    public func arguments<each T: DBusRepresentable>(as types: repeat (each T).Type) throws
        -> (repeat each T)
    {
        var expected = ""
        for type in repeat each types { expected += type.dbusSignature.rawValue }
        let actual = signature
        guard actual.rawValue == expected else {
            throw DBusError.typeMismatch(expected: expected, actual: actual, context: "the arguments")
        }
        let values = try body
        var index = 0
        func next<U: DBusRepresentable>(_ type: U.Type) throws -> U {
            defer { index += 1 }
            return try U(dbusValue: values[index])
        }
        return (repeat try next(each types))
    }
}
