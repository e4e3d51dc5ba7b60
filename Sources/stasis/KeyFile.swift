import ArgumentParser
import Foundation
import Stasis

/// `--key-file PATH` (default `$STASIS_KEY_FILE`): the game's signing key, so `verify`,
/// `inspect` and `dump` can check signatures. The file holds the key's bytes exactly — no
/// newline or whitespace is stripped, no hex is decoded — at least 16 of them.
struct KeyFileOption: ParsableArguments {
  /// The environment variable that names the key file when `--key-file` is not given.
  static let environmentVariable = "STASIS_KEY_FILE"
  static let minimumBytes = 16
  static let maximumBytes = 4096

  @Option(
    name: .customLong("key-file"),
    help: ArgumentHelp(
      """
      A file holding the game's signing key: the file's bytes exactly (no trailing newline is \
      stripped: write it with `printf %s` or `head -c 32 /dev/urandom`), 16 to 4096 of them. Default: \
      $STASIS_KEY_FILE. With a key the signature is checked (valid, invalid or unsigned); \
      without one a signed save's signature is not checked.
      """,
      valueName: "path"))
  var keyFile: String?

  /// The key file's path: `--key-file`, else a non-empty `$STASIS_KEY_FILE`, else nil.
  var path: String? {
    if let keyFile { return keyFile }
    let fromEnvironment = ProcessInfo.processInfo.environment[Self.environmentVariable] ?? ""
    return fromEnvironment.isEmpty ? nil : fromEnvironment
  }

  /// The policy the tools check with: the key when there is one (an unsigned save is
  /// reported, not refused: whether a game accepts one is its own policy's business), else
  /// `.none` (signatures not checked). A key file that cannot be used prints one line — never
  /// the key — and exits 74 (unreadable) or 64 (not a key).
  func policy() throws -> SigningPolicy {
    guard let path else { return .none }
    let standardError = Terminal.standardError
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
      let handle = FileHandle(forReadingAtPath: path)
    else {
      standardError.line(standardError.paint("error: ", .red) + "\(path): the signing key file could not be read")
      throw Exit.io
    }
    defer { try? handle.close() }
    let data: Data
    do {
      data = try handle.read(upToCount: Self.maximumBytes + 1) ?? Data()  // nil: an empty file
    } catch {
      standardError.line(standardError.paint("error: ", .red) + "\(path): the signing key file could not be read")
      throw Exit.io
    }
    guard data.count >= Self.minimumBytes, data.count <= Self.maximumBytes else {
      standardError.line(
        standardError.paint("error: ", .red)
          + "\(path): a signing key file holds \(Self.minimumBytes) to \(Self.maximumBytes) bytes; this one has "
          + (data.count > Self.maximumBytes ? "more" : "\(data.count)")
      )
      throw ExitCode.validationFailure
    }
    return .signed(with: SigningKey(bytes: [UInt8](data)), acceptingUnsigned: true)
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

  /// `valid`, `invalid`, `unsigned`, `not checked (the file is invalid)` with a key; `yes (not
  /// checked: no key)` or `no` without one. Nil when the header could not be read.
  var value: String? {
    guard let isSigned else { return nil }
    guard keyGiven else { return isSigned ? "yes (not checked: no key)" : "no" }
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
