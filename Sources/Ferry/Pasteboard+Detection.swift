import DBus
import FerryModel

extension Pasteboard {
    /// The values each item's text holds for the `patterns` it matches (Apple's
    /// `detectValues(for:)`). A paste, unlike ``detectPatterns(_:)``: the paste policy decides
    /// and every item whose values are handed over is logged.
    /// - Parameters:
    ///   - patterns: the patterns to look for.
    ///   - userAction: the app asks because the user asked it to (a paste command).
    /// - Returns: per item, in order, a value for each pattern its best plain-text or URL
    ///   representation matches (empty when it has none).
    /// - Throws: `FerryError` `.permissionDenied` (paste policy), `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.DetectValues`.
    public func detectValues(_ patterns: Set<DetectionPattern>,
                             userAction: Bool = false) async throws(FerryError) -> [[DetectionPattern: DetectedValue]] {
        let names = patterns.map(\.rawValue).sorted()
        var options: [String: DBusValue] = [:]
        if userAction { options["user-action"] = .boolean(true) }
        let reply = try await call("DetectValues", [.array(of: .string, names.map(DBusValue.string)), options.dbusValue])
        guard let value = reply.first, let items = try? value.get([VariantDictionary].self) else {
            throw FerryError(.bus, "Pasteboard1.DetectValues answered with an unexpected reply")
        }
        return try items.map { entries throws(FerryError) in
            var values: [DetectionPattern: DetectedValue] = [:]
            for (name, entry) in entries {
                guard let pattern = DetectionPattern(rawValue: name) else { continue }
                guard let detected = Self.detectedValue(entry.unwrappingVariants) else {
                    throw FerryError(.bus, "Pasteboard1.DetectValues answered \(name) with an unexpected value")
                }
                values[pattern] = detected
            }
            return values
        }
    }

    /// A detected value from the bus (`s`, `d`, `as` or `a(ds)`), nil for anything else.
    static func detectedValue(_ value: DBusValue) -> DetectedValue? {
        switch value {
        case .string(let text): return .text(text)
        case .double(let number): return .number(number)
        case .array(_, let elements):
            if let texts = try? value.get([String].self) { return .matches(texts) }
            var amounts: [MoneyAmount] = []
            for element in elements {
                guard case .structure(let fields) = element, fields.count == 2, case .double(let amount) = fields[0],
                      case .string(let currency) = fields[1] else { return nil }
                amounts.append(MoneyAmount(amount: amount, currency: currency))
            }
            return .moneyAmounts(amounts)
        default: return nil
        }
    }
}
