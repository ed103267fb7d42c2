import BrokerCore
import DBus
import FerryBus
import FerryModel

extension PasteboardService {
    /// The patterns named in a `DetectPatterns` or `DetectValues` call.
    /// - Throws: `FerryModelError` `.invalidArgument` naming `patterns[i]` for an unknown name.
    static func patterns(_ names: [String]) throws -> Set<DetectionPattern> {
        var patterns: Set<DetectionPattern> = []
        for (index, patternName) in names.enumerated() {
            guard let pattern = DetectionPattern(rawValue: patternName) else {
                let known = DetectionPattern.allCases.map(\.rawValue).joined(separator: ", ")
                throw FerryModelError(.invalidArgument, "unknown pattern \"\(patternName)\" (known: \(known))",
                                      keyPath: "patterns[\(index)]")
            }
            patterns.insert(pattern)
        }
        return patterns
    }

    /// `DetectValues`: per item, the values its best plain-text or URL representation holds for
    /// each pattern it matches. A paste, as `Read` is: the policy decides first (with the
    /// options' `user-action`), and every item whose values are handed over is logged.
    nonisolated func detectValues(_ call: MethodCall, pasteboard name: String) async throws -> [DBusValue] {
        let caller = try await resolve(call)
        let isDrag = try checkTransientAccess(name, caller, .contentReader)
        let patterns = try Self.patterns(try call.argument(0, as: [String].self))
        let options = WireReader(dbus: try call.argument(1, as: VariantDictionary.self), path: "options")
        let userAction = try options.bool("user-action") ?? false || isDrag

        let reader: PastePolicy.Reader = caller.appID.map { .app($0) } ?? .unregistered
        let foreground = caller.appID.map(foregroundApps.contains) ?? false
        let rules = policy.current()
        let decision = rules.decide(reader, userAction: userAction, hasForegroundScene: foreground)
        // Refused before the items are looked at, unless reading what the app wrote itself would be allowed.
        if case .deny(let reason) = rules.decide(reader, userAction: userAction, hasForegroundScene: foreground,
                                                 readsOwnContent: true) {
            throw FerryModelError(.permissionDenied, reason)
        }

        let snapshot = try await snapshot(name)
        // Held here while the user is asked; reading what the app wrote itself never asks.
        let textTypes = snapshot.items.compactMap { item in
            caller.visibleRepresentations(of: item).first {
                $0.contentType.conforms(to: .plainText) || $0.contentType.conforms(to: .url)
            }?.contentType
        }
        let consent = try await consentToPaste(decision, caller: caller, userAction: userAction, items: snapshot.items,
                                               types: Array(Set(textTypes)).sorted { $0.identifier < $1.identifier },
                                               pasteboard: name, itemIndex: 0)
        var results: [DBusValue] = []
        for (index, item) in snapshot.items.enumerated() {
            var values: [String: DBusValue] = [:]
            if !patterns.isEmpty, case let (text, type)? = await detectionText(of: item, volatile: snapshot.volatile, for: caller) {
                for (pattern, value) in DetectionPattern.detectValues(patterns, in: text) {
                    values[pattern.rawValue] = Self.dbusValue(value)
                }
                if !values.isEmpty {
                    logPaste(PasteRecord(appID: caller.appID, uniqueName: caller.uniqueName, uid: caller.caller.uid,
                                         pid: Int32(truncatingIfNeeded: caller.caller.pid ?? 0),
                                         process: PasteRecord.readerProcessName(pid: caller.caller.pid, connection: caller.uniqueName),
                                         writerProcess: item.sourceProcess, pasteboard: name,
                                         itemIndex: index, contentType: type, consent: consent?.rawValue))
                }
            }
            results.append(values.dbusValue)
        }
        return [.array(element: "a{sv}", elements: results)]
    }

    /// A detected value on the bus: `s` for a whole text, `d` for a number, `as` for matches,
    /// `a(ds)` for money amounts (amount, ISO 4217 currency).
    static func dbusValue(_ value: DetectedValue) -> DBusValue {
        switch value {
        case .text(let text): .string(text)
        case .number(let number): .double(number)
        case .matches(let matches): .array(of: .string, matches.map(DBusValue.string))
        case .moneyAmounts(let amounts):
            .array(of: "(ds)", amounts.map { .structure([.double($0.amount), .string($0.currency)]) })
        }
    }
}
