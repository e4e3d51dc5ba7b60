import ArgumentParser
import Foundation
import Stasis

/// `stasis settings`: a game's settings (`SAVES/.settings`), read and edited without the game.
struct Settings: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "List, read and change a game's settings without the game.",
    discussion: """
      Example:
        stasis settings list --saves Saves
        stasis settings get bindings.jump --saves Saves
        stasis settings set palette deuteranopia --saves Saves

      Settings live apart from save slots, in SAVES/.settings; loading a save never rolls them
      back. A change is stamped (a hybrid logical clock) and written under the file's lock, so a
      running game loses nothing: it takes the change at its next check, or on its return from
      the background, one notification per key.
      """,
    subcommands: [List.self, Get.self, Set.self]
  )

  struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Every key, its value and the stamp of its last change.")

    @Option(help: "The save folder.")
    var saves: String = "Saves"

    @Flag(help: "Print JSON: {key: {value, stamp}}.")
    var json = false

    func run() throws {
      let file = try readSettings(saves)
      if json {
        var object: [String: Any] = [:]
        for entry in file.entries {
          object[entry.key] = ["value": entry.value.jsonObject, "stamp": entry.stamp.description] as [String: Any]
        }
        print(jsonText(object))
        return
      }
      let out = Terminal.standardOutput
      guard !file.entries.isEmpty else { return out.line("no settings in \(saves)") }
      let width = file.entries.map(\.key.count).max() ?? 0
      for entry in file.entries {
        let stamp = entry.stamp == .origin ? "default" : entry.stamp.description
        out.line(
          entry.key.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(entry.value.inlineText)  (\(stamp))")
      }
    }
  }

  struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "One key's value, as JSON; KEY.FIELD reaches into a group.")

    @Argument(help: "The key, or KEY.FIELD.")
    var key: String

    @Option(help: "The save folder.")
    var saves: String = "Saves"

    func run() throws {
      let file = try readSettings(saves)
      let path = key.split(separator: ".").map(String.init)
      guard let entry = file[path[0]], let value = entry.value.at(path.dropFirst()) else {
        // The file was read: a key it does not hold is an answer (exit 1), not an I/O error (74).
        Terminal.standardError.line(
          Terminal.standardError.paint("error: ", .red) + "no setting '\(key)' in \(settingsPath(saves))")
        throw Exit.invalid
      }
      print(value.inlineText)
    }
  }

  struct Set: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Change one key (or KEY.FIELD); the value keeps the key's type.",
      discussion: """
        A number, true/false or text is read as the type the key already has (a volume of 1 stays
        a float). A key the file does not hold yet takes VALUE as JSON, else as text.
        """)

    @Argument(help: "The key, or KEY.FIELD.")
    var key: String

    @Argument(help: "The new value.")
    var value: String

    @Option(help: "The save folder.")
    var saves: String = "Saves"

    func run() throws {
      let path = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
      let store = SaveStore(directory: saves)
      let device = "stasis-cli@\(store.device)"
      var before: SaveValue?
      var after: SaveValue?
      do {
        try store.updateSettings { (file) throws(SaveFileError) in
          let old = file[path[0]]?.value
          let new = try replaced(old, at: path.dropFirst(), with: value, key: key)
          before = old?.at(path.dropFirst())
          after = new.at(path.dropFirst())
          file.set(path[0], to: new, device: device, now: store.wallClock())
        }
      } catch {
        throw fail(error)
      }
      let old = before.map(\.inlineText) ?? "(unset)"
      Terminal.standardOutput.line("\(key): \(old) → \(after?.inlineText ?? "")")
    }
  }
}

private func settingsPath(_ saves: String) -> String { "\(saves)/\(SettingsFile.fileName)" }

private func readSettings(_ saves: String) throws -> SettingsFile {
  do {
    return try SaveStore(directory: saves).readSettings()
  } catch {
    throw fail(error)
  }
}

/// `old` with the value at `path` replaced by `text`, read as the type already there.
private func replaced(_ old: SaveValue?, at path: ArraySlice<String>, with text: String, key: String)
  throws(SaveFileError) -> SaveValue
{
  guard let field = path.first else { return try parse(text, like: old, key: key) }
  guard case .object(var object)? = old else {
    throw SaveFileError(.typeMismatch, "'\(key)': \(old == nil ? "no such setting" : "not a group of fields")")
  }
  object[field] = try replaced(object[field], at: path.dropFirst(), with: text, key: key)
  return .object(object)
}

/// `text` as a value of `old`'s type; JSON (else text) when there is no old value.
private func parse(_ text: String, like old: SaveValue?, key: String) throws(SaveFileError) -> SaveValue {
  func bad(_ type: String) -> SaveFileError {
    SaveFileError(.typeMismatch, "'\(key)' is \(type); '\(text)' is not")
  }
  switch old {
  case nil, .null?:
    if let flag = Bool(text) { return .bool(flag) }
    if let data = text.data(using: .utf8),
      let json = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed),
      let value = SaveValue(json: json)
    {
      return value
    }
    return .string(text)
  case .bool?:
    guard let flag = Bool(text) else { throw bad("true or false") }
    return .bool(flag)
  case .int8?: return .int8(try Int8(text).orThrow(bad("an 8-bit integer")))
  case .int16?: return .int16(try Int16(text).orThrow(bad("a 16-bit integer")))
  case .int32?: return .int32(try Int32(text).orThrow(bad("a 32-bit integer")))
  case .int64?: return .int64(try Int64(text).orThrow(bad("an integer")))
  case .uint8?: return .uint8(try UInt8(text).orThrow(bad("an 8-bit unsigned integer")))
  case .uint16?: return .uint16(try UInt16(text).orThrow(bad("a 16-bit unsigned integer")))
  case .uint32?: return .uint32(try UInt32(text).orThrow(bad("a 32-bit unsigned integer")))
  case .uint64?: return .uint64(try UInt64(text).orThrow(bad("an unsigned integer")))
  case .float32?: return .float32(try Float(text).orThrow(bad("a number")))
  case .float64?: return .float64(try Double(text).orThrow(bad("a number")))
  case .string?: return .string(text)
  case .object?: throw SaveFileError(.typeMismatch, "'\(key)' is a group: set one of its fields, as \(key).FIELD")
  case .array?, .bytes?, .bulk?: throw SaveFileError(.typeMismatch, "'\(key)' is a list: the game sets it")
  }
}

extension Optional {
  fileprivate func orThrow(_ error: SaveFileError) throws(SaveFileError) -> Wrapped {
    guard let self else { throw error }
    return self
  }
}

extension SaveValue {
  /// The value at a dotted path of fields.
  fileprivate func at(_ path: ArraySlice<String>) -> SaveValue? {
    guard let field = path.first else { return self }
    return self[field: field]?.at(path.dropFirst())
  }

  /// A JSON value as a save value: integers as int64, other numbers as float64 (a Boolean
  /// inside a list or group reads as a number: Foundation on Linux does not tell them apart).
  fileprivate init?(json: Any) {
    switch json {
    case let number as NSNumber:
      if let integer = Int64(exactly: number.doubleValue), !"\(number)".contains(".") {
        self = .int64(integer)
      } else {
        self = .float64(number.doubleValue)
      }
    case let text as String: self = .string(text)
    case let list as [Any]:
      var items: [SaveValue] = []
      for item in list {
        guard let value = SaveValue(json: item) else { return nil }
        items.append(value)
      }
      self = .array(items)
    case let object as [String: Any]:
      var fields: [(name: String, value: SaveValue)] = []
      for name in object.keys.sorted() {
        guard let value = SaveValue(json: object[name]!) else { return nil }
        fields.append((name, value))
      }
      self = .object(SaveObject(fields))
    default: return nil
    }
  }
}
