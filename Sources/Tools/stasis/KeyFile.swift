import ArgumentParser
import Foundation
import Stasis

/// `--key-file PATH`, repeated (default `$STASIS_KEY_FILE`), or `--key-ring FILE`: the game's
/// signing keys, so `verify`, `inspect` and `dump` can check signatures. The first key is the
/// current one; the others are retired keys, which still verify the saves they signed, as a
/// game's ``SigningPolicy`` with `retired:` does. A key file holds the key's bytes exactly —
/// no newline or whitespace is stripped, no hex is decoded — at least 16 of them.
struct KeyFileOption: ParsableArguments {
  /// The environment variable that names the key file when neither option is given.
  static let environmentVariable = "STASIS_KEY_FILE"
  static let minimumBytes = 16
  static let maximumBytes = 4096
  /// The most key files a ring names.
  static let maximumRingKeys = 64

  @Option(
    name: .customLong("key-file"),
    help: ArgumentHelp(
      """
      A file holding a signing key of the game: the file's bytes exactly (no trailing newline is \
      stripped: write it with `printf %s` or `head -c 32 /dev/urandom`), 16 to 4096 of them. Repeat it \
      for the keys a game has retired: the first is the current key, every one verifies. Default: \
      $STASIS_KEY_FILE. With a key the signature is checked (valid, invalid or unsigned); \
      without one a signed save's signature is not checked.
      """,
      valueName: "path"))
  var keyFiles: [String] = []

  @Option(
    name: .customLong("key-ring"),
    help: ArgumentHelp(
      """
      A text file naming key files, one path a line (relative to the ring's folder), the current \
      key first and then the retired ones; blank lines and lines starting with # are skipped. \
      Given with --key-file, the --key-file keys come first.
      """,
      valueName: "path"))
  var keyRing: String?

  /// The key files' paths, the current key's first: `--key-file`s, then the ring's, else a
  /// non-empty `$STASIS_KEY_FILE`, else none. A ring that cannot be read prints one line.
  func paths() throws -> [String] {
    var paths = keyFiles
    if let keyRing { paths += try ringPaths(keyRing) }
    if !paths.isEmpty || keyRing != nil { return paths }
    let fromEnvironment = ProcessInfo.processInfo.environment[Self.environmentVariable] ?? ""
    return fromEnvironment.isEmpty ? [] : [fromEnvironment]
  }

  /// The policy the tools check with: every key given, the first current and the others
  /// retired (an unsigned save is reported, not refused: whether a game accepts one is its own
  /// policy's business), else `.none` (signatures not checked). A key file that cannot be used
  /// prints one line — never the key — and exits 74 (unreadable) or 64 (not a key).
  func policy() throws -> SigningPolicy {
    let keys = try paths().map(Self.key(at:))
    guard let current = keys.first else { return .none }
    return .signed(with: current, retired: Array(keys.dropFirst()), acceptingUnsigned: true)
  }

  private static func key(at path: String) throws -> SigningKey {
    let data = try read(path, what: "signing key file", limit: maximumBytes)
    guard data.count >= Self.minimumBytes, data.count <= Self.maximumBytes else {
      let standardError = Terminal.standardError
      standardError.line(
        standardError.paint("error: ", .red)
          + "\(path): a signing key file holds \(Self.minimumBytes) to \(Self.maximumBytes) bytes; this one has "
          + (data.count > Self.maximumBytes ? "more" : "\(data.count)")
      )
      throw ExitCode.validationFailure
    }
    return SigningKey(bytes: [UInt8](data))
  }

  /// The key files a ring names, relative to the ring's folder.
  private func ringPaths(_ ring: String) throws -> [String] {
    let data = try Self.read(ring, what: "key ring", limit: 64 * 1024)
    let folder = (ring as NSString).deletingLastPathComponent
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
      .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
    guard !lines.isEmpty, lines.count <= Self.maximumRingKeys else {
      let standardError = Terminal.standardError
      standardError.line(
        standardError.paint("error: ", .red)
          + "\(ring): a key ring names 1 to \(Self.maximumRingKeys) key files, one a line; this one names \(lines.count)"
      )
      throw ExitCode.validationFailure
    }
    return lines.map { $0.hasPrefix("/") || folder.isEmpty ? $0 : (folder as NSString).appendingPathComponent($0) }
  }

  /// A regular file's bytes, up to one past `limit`; one line and exit 74 when it cannot be read.
  static func read(_ path: String, what: String, limit: Int) throws -> Data {
    let standardError = Terminal.standardError
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
      let handle = FileHandle(forReadingAtPath: path)
    else {
      standardError.line(standardError.paint("error: ", .red) + "\(path): the \(what) could not be read")
      throw Exit.io
    }
    defer { try? handle.close() }
    do {
      return try handle.read(upToCount: limit + 1) ?? Data()  // nil: an empty file
    } catch {
      standardError.line(standardError.paint("error: ", .red) + "\(path): the \(what) could not be read")
      throw Exit.io
    }
  }
}

/// How a save's signature reads in the tools' output: `signature: valid|invalid|unsigned` with
/// a key, `signed: yes (not checked: no key)` or `signed: no` without one. Never "verified"
/// for a signature that was not checked.
struct SignatureVerdict {
  /// Whether a key was given.
  var keyGiven: Bool
  /// Whether the file's header says it is signed (nil: the header could not be read).
  var isSigned: Bool?
  /// What the verification said; nil when the file failed before its signature was reached.
  var status: SignatureStatus?

  /// `signature` with a key, `signed` without.
  var label: String { keyGiven ? "signature" : "signed" }

  /// `valid`, `valid (a retired key)`, `invalid`, `unsigned`, `not checked (the file is invalid)` with a key; `yes (not
  /// checked: no key)` or `no` without one. Nil when the header could not be read.
  var value: String? {
    guard let isSigned else { return nil }
    guard keyGiven else { return isSigned ? "yes (not checked: no key)" : "no" }
    if status == .valid(byCurrentKey: false) { return "valid (a retired key)" }
    return status?.label ?? "not checked (the file is invalid)"
  }

  /// `label: value`, e.g. `signature: valid`.
  var line: String? { value.map { "\(label): \($0)" } }

  /// For `--json`: `valid`, `invalid`, `unsigned` or `not checked`; nil when unknown.
  var json: String? {
    guard let isSigned else { return nil }
    guard keyGiven else { return isSigned ? "not checked" : "unsigned" }
    return status?.label
  }

  /// True for a signed file whose signature was not checked for want of a key.
  var notCheckedForWantOfKey: Bool { !keyGiven && isSigned == true }
}
