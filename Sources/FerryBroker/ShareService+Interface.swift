import BrokerCore
import DBus
import FerryBus
import FerryModel

extension ShareService {
    /// `org.ferry.Sharing1`: handlers resolve the caller, read and check their arguments, then
    /// hand over to the actor.
    nonisolated var interface: Interface {
        Interface(Self.interfaceName) {
            Property("Version", "u", get: { _ in .uint32(Self.version) })
            Method("RegisterActivities", in: ["activities": "aa{sv}"]) { call in
                let caller = try await self.resolveCaller(call)
                guard call.arguments.count == 1, case .array(_, let entries) = call.arguments[0].unwrappingVariants else {
                    throw FerryModelError(.invalidArgument, "expected activities (aa{sv})", keyPath: "activities")
                }
                try await self.registerActivities(entries, caller: caller)
                return []
            }
            Method("BeginShare", in: ["options": "a{sv}"], out: ["share": "s", "pasteboard": "o"]) { call in
                let caller = try await self.resolveCaller(call)
                let request = try ShareBeginRequest(try call.argument(0, as: VariantDictionary.self))
                let (share, pasteboard) = try await self.beginShare(request, caller: caller)
                return [.string(share), .objectPath(pasteboard)]
            }
            Method("ListActivities", in: ["share": "s"], out: ["activities": "aa{sv}"]) { call in
                let caller = try await self.resolveCaller(call)
                let listed = try await self.listActivities(try call.argument(0, as: String.self), sender: caller.uniqueName)
                return [.array(of: "a{sv}", try listed.map { try $0.dbusValue() })]
            }
            Method("Perform", in: ["share": "s", "activity_type": "s", "options": "a{sv}"], out: ["completion": "a{sv}"]) { call in
                let caller = try await self.resolveCaller(call)
                let (share, type, options) = try call.arguments(String.self, String.self, VariantDictionary.self)
                let completion = try await self.perform(share, type: ActivityType(rawValue: type), options: options, caller: caller)
                return [try Self.wire(completion)]
            }
            Method("EndShare", in: ["share": "s"]) { call in
                let caller = try await self.resolveCaller(call)
                try await self.endShare(try call.argument(0, as: String.self), sender: caller.uniqueName)
                return []
            }
        }
    }
}
