#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Typed access to a property-list dictionary whose errors name the key path
/// (`UIApplicationSceneManifest.UISceneConfigurations: expected a dictionary, found array`).
struct PropertyListReader {
    let root: [String: PropertyListValue]
    let path: String

    init(_ root: [String: PropertyListValue], path: String = "") {
        self.root = root
        self.path = path
    }

    func keyPath(_ key: String) -> String { KeyPath.join(path, key) }

    func mismatch(_ key: String, expected: String, found value: PropertyListValue) -> FerryModelError {
        FerryModelError.invalid("expected \(expected), found \(value.kindName)", at: keyPath(key))
    }

    func missing(_ key: String) -> FerryModelError {
        FerryModelError.invalid("required key is missing", at: keyPath(key))
    }

    func requiredString(_ key: String) throws -> String {
        guard let value = root[key] else { throw missing(key) }
        guard let string = value.stringValue else { throw mismatch(key, expected: "a string", found: value) }
        return string
    }

    func optionalString(_ key: String) throws -> String? {
        guard let value = root[key] else { return nil }
        guard let string = value.stringValue else { throw mismatch(key, expected: "a string", found: value) }
        return string
    }

    func optionalBool(_ key: String) throws -> Bool? {
        guard let value = root[key] else { return nil }
        guard let bool = value.booleanValue else { throw mismatch(key, expected: "a boolean", found: value) }
        return bool
    }

    func optionalDictionary(_ key: String) throws -> [String: PropertyListValue]? {
        guard let value = root[key] else { return nil }
        guard let dictionary = value.dictionaryValue else { throw mismatch(key, expected: "a dictionary", found: value) }
        return dictionary
    }

    func optionalArray(_ key: String) throws -> [PropertyListValue]? {
        guard let value = root[key] else { return nil }
        guard let array = value.arrayValue else { throw mismatch(key, expected: "an array", found: value) }
        return array
    }

    func optionalStringArray(_ key: String) throws -> [String]? {
        guard let array = try optionalArray(key) else { return nil }
        return try array.enumerated().map { index, element in
            guard let string = element.stringValue else {
                throw FerryModelError.invalid("expected a string, found \(element.kindName)",
                                              at: KeyPath.index(keyPath(key), index))
            }
            return string
        }
    }

    /// A string or an array of strings (Info.plist tag specifications allow both).
    func optionalStringOrStringArray(_ key: String) throws -> [String]? {
        guard let value = root[key] else { return nil }
        if let string = value.stringValue { return [string] }
        guard value.arrayValue != nil else { throw mismatch(key, expected: "a string or an array of strings", found: value) }
        return try optionalStringArray(key)
    }

    /// The dictionaries of an array, each with a reader whose path is `key[index]`.
    func optionalDictionaryArray(_ key: String) throws -> [PropertyListReader]? {
        guard let array = try optionalArray(key) else { return nil }
        return try array.enumerated().map { index, element in
            let elementPath = KeyPath.index(keyPath(key), index)
            guard let dictionary = element.dictionaryValue else {
                throw FerryModelError.invalid("expected a dictionary, found \(element.kindName)", at: elementPath)
            }
            return PropertyListReader(dictionary, path: elementPath)
        }
    }

    func nested(_ key: String) throws -> PropertyListReader? {
        guard let dictionary = try optionalDictionary(key) else { return nil }
        return PropertyListReader(dictionary, path: keyPath(key))
    }
}
