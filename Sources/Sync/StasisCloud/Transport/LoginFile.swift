import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The server and token `stasis cloud login` stores for the CLI: a JSON file readable by its
/// owner only (mode 0600), at `$XDG_CONFIG_HOME/stasis/cloud.json`, else
/// `~/.config/stasis/cloud.json`.
package struct LoginFile: Codable, Sendable, Equatable {
  /// The server's base URL.
  package var server: String
  /// The bearer token.
  package var token: String
  /// The device name uploads carry.
  package var device: String

  /// Creates a login.
  package init(server: String, token: String, device: String) {
    self.server = server
    self.token = token
    self.device = device
  }

  /// The bearer token in the file at `path`: the line `stasis-server players add` printed,
  /// surrounding white space (a trailing newline) removed. Refuses a file it cannot read and
  /// one that holds no token; never says what the file holds.
  package static func token(fromFile path: String) throws(LoginError) -> String {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw LoginError("\(path): the token file could not be read", unreadable: true)
    }
    let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard !token.isEmpty, !token.contains(where: \.isWhitespace) else {
      throw LoginError("\(path) does not hold a token (one line, no spaces)")
    }
    return token
  }

  /// Where the login lives for `environment`.
  package static func path(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return "\(config)/stasis/cloud.json" }
    return "\(environment["HOME"] ?? NSHomeDirectory())/.config/stasis/cloud.json"
  }

  /// Reads the login at `path`; refuses a file others may read (a token must not leak).
  package static func load(from path: String) throws -> LoginFile {
    var info = stat()
    guard stat(path, &info) == 0 else {
      throw LoginError("no cloud login at \(path): run `stasis cloud login --server URL --token-file FILE`")
    }
    guard info.st_mode & 0o077 == 0 else {
      throw LoginError("\(path) may be read by others (mode \(String(info.st_mode & 0o777, radix: 8))): chmod 600 it")
    }
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return try JSONDecoder().decode(LoginFile.self, from: data)
  }

  /// Writes the login to `path` with mode 0600 (a new file renamed into place, so the token
  /// is never in a file others may read), making its folder (0700) when missing.
  package func save(to path: String) throws {
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
    try FileManager.default.createDirectory(
      atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
    let bytes = [UInt8](try encoder.encode(self)) + [0x0A]
    let temporary = "\(path).tmp-\(getpid())"
    unlink(temporary)
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw LoginError("\(temporary) could not be created: errno \(errno)") }
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    let flushed = fsync(descriptor)
    close(descriptor)
    guard written == bytes.count, flushed == 0, rename(temporary, path) == 0 else {
      unlink(temporary)
      throw LoginError("\(path) could not be written: errno \(errno)")
    }
  }
}

/// A login that cannot be read or written; one line, never the token.
package struct LoginError: Error, CustomStringConvertible {
  /// What went wrong.
  package var description: String
  /// True when a file could not be read at all (rather than read and found wrong).
  package var isUnreadable: Bool
  init(_ description: String, unreadable: Bool = false) {
    self.description = description
    isUnreadable = unreadable
  }
}
