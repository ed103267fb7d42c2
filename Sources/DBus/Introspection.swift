import CDBus

/// Generates `org.freedesktop.DBus.Introspectable` XML from what a connection exports.
enum Introspection {
    static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        """

    /// The document for the node at `path`: its interfaces (with the standard ones when an
    /// object lives there) and its direct children.
    static func document(for path: ObjectPath, in registry: ObjectRegistry) -> String {
        var xml = doctype + "\n<node>\n"
        var interfaces = registry.interfaces(at: path) ?? []
        if !interfaces.isEmpty {
            interfaces = [StandardInterfaces.introspectable, StandardInterfaces.properties,
                          StandardInterfaces.peer] + interfaces
        } else {
            interfaces = [StandardInterfaces.introspectable, StandardInterfaces.peer]
        }
        for interface in interfaces { append(interface, to: &xml) }
        for child in registry.children(of: path) {
            xml += "  <node name=\"\(escape(child))\"/>\n"
        }
        xml += "</node>\n"
        return xml
    }

    private static func append(_ interface: Interface, to xml: inout String) {
        xml += "  <interface name=\"\(interface.name)\">\n"
        for method in interface.methods {
            let args = method.inputs.map { ($0, "in") } + method.outputs.map { ($0, "out") }
            if args.isEmpty {
                xml += "    <method name=\"\(method.name)\"/>\n"
                continue
            }
            xml += "    <method name=\"\(method.name)\">\n"
            for (arg, direction) in args {
                xml += "      <arg\(nameAttribute(arg)) type=\"\(escape(arg.signature.rawValue))\" direction=\"\(direction)\"/>\n"
            }
            xml += "    </method>\n"
        }
        for signal in interface.signals {
            if signal.arguments.isEmpty {
                xml += "    <signal name=\"\(signal.name)\"/>\n"
                continue
            }
            xml += "    <signal name=\"\(signal.name)\">\n"
            for arg in signal.arguments {
                xml += "      <arg\(nameAttribute(arg)) type=\"\(escape(arg.signature.rawValue))\"/>\n"
            }
            xml += "    </signal>\n"
        }
        for property in interface.properties {
            xml += "    <property name=\"\(property.name)\" type=\"\(escape(property.signature.rawValue))\" "
                + "access=\"\(property.access.rawValue)\"/>\n"
        }
        xml += "  </interface>\n"
    }

    private static func nameAttribute(_ arg: Argument) -> String {
        arg.name.isEmpty ? "" : " name=\"\(escape(arg.name))\""
    }

    /// Escapes text for an XML attribute.
    static func escape(_ text: String) -> String {
        var out = ""
        for ch in text {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(ch)
            }
        }
        return out
    }
}

extension Connection {
    /// This machine's D-Bus machine id (`/etc/machine-id`), as `Peer.GetMachineId` reports it.
    static var localMachineID: String {
        var error = cdbus_error_init()
        guard let id = dbus_try_get_local_machine_id(&error) else {
            dbus_error_free(&error)
            return ""
        }
        defer { dbus_free(id) }
        return String(cString: id)
    }
}
