import ArgumentParser
import Foundation
import Stasis

/// The verdict on one file: its header when readable, each section's checksum, the
/// signature's, the first failure.
struct FileReport {
  var path: String
  var verification: SaveFileFormat.Verification
  var error: SaveFileError?
  /// Whether a signing key was given (`--key-file`, `$STASIS_KEY_FILE`).
  var keyGiven: Bool
  /// The file's size: a section ending past it was cut off, not damaged.
  var fileSize = 0
  /// How the save's lineage reached its schema, when a game recorded it (`load-report`).
  var loadReport: LoadReport?
  var valid: Bool { error == nil }

  /// How the signature reads: checked with a key, or said not to be checked.
  var signature: SignatureVerdict {
    SignatureVerdict(keyGiven: keyGiven, isSigned: verification.header?.isSigned, status: verification.signature)
  }

  /// Checks every byte (the signature under `signing`), then decodes every section (a file
  /// with correct checksums over a malformed structure is still invalid).
  init(path: String, signing: SigningPolicy) throws(SaveFileError) {
    self.path = path
    keyGiven = signing.checksSignatures
    let bytes = try readSaveFile(path)
    fileSize = bytes.count
    verification = bytes.withUnsafeBytes { SaveFileFormat.verify($0, path: path, signing: signing) }
    error = verification.error
    if error == nil, verification.header?.isSigned == false, let unsigned = SaveStore.unsignedInSignedSlot(file: path) {
      error = unsigned  // the slot has held signed saves: this one's signature was stripped
    }
    if error == nil {
      do {
        let document = try SaveFileFormat.decode(bytes, path: path, signing: signing)
        if case .raw(let report)? = document[section: LoadReport.sectionName]?.content {
          loadReport = LoadReport(sectionBytes: report)
        }
      } catch {
        self.error = error
      }
    }
  }

  var json: [String: Any] {
    var object: [String: Any] = ["path": path, "valid": valid]
    let header = verification.header
    object["formatVersion"] = header.map { Int($0.formatVersion) } ?? NSNull()
    object["schemaVersion"] = header.map { Int($0.game.schemaVersion) } ?? NSNull()
    object["game"] = header.map { ["name": $0.game.name, "build": $0.game.build] } ?? NSNull()
    object["signed"] = header?.isSigned ?? NSNull()
    object["signature"] = signature.json ?? NSNull()
    object["metadata"] = header.map(summaryJSON) ?? NSNull()
    object["sections"] = verification.sections.map {
      [
        "name": $0.entry.name, "encoding": $0.entry.encoding.name, "bytes": $0.entry.length,
        "checksumOK": $0.checksumOK, "missing": $0.entry.offset + $0.entry.length > fileSize,
      ]
        as [String: Any]
    }
    object["loadReport"] =
      loadReport.map {
        [
          "storedSchema": $0.storedSchema, "currentSchema": $0.currentSchema,
          "migrations": $0.migrations.map(\.description), "defaultedFields": $0.defaultedFields,
          "droppedFields": $0.droppedFields, "unknownSections": $0.unknownSections,
        ] as [String: Any]
      } ?? NSNull()
    if let error {
      object["error"] =
        [
          "kind": error.kind.rawValue, "section": error.context.part ?? NSNull(), "offset": error.offset ?? NSNull(),
          "message": error.description,
        ] as [String: Any]
    }
    return object
  }
}

struct Inspect: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Show a save's header, metadata, sections and verdict.",
    discussion: """
      Example:
        stasis inspect Saves/autosave/0000000003.stasis
        stasis inspect Saves/autosave/0000000003.stasis --json
        stasis inspect Saves/autosave/0000000003.stasis --key-file game.key

      With a key, the signature line says `signature: valid`, `invalid` or
      `unsigned`. Without one, a signed save says `signed: yes (not checked:
      no key)` and its verdict is `intact`, not `valid`. --json has
      `signature`: valid, invalid, unsigned or not checked.
      """
  )

  @Argument(help: "The save file.")
  var file: String

  @Flag(
    help: """
      Print one JSON object (path, valid, formatVersion, schemaVersion, game, signed, signature, metadata, \
      sections, loadReport, error). The game's own summary is metadata.summary.
      """)
  var json = false

  @OptionGroup var key: KeyFileOption

  func run() throws {
    let signing = try key.policy()
    let report: FileReport
    do {
      report = try FileReport(path: file, signing: signing)
    } catch {
      throw fail(error)
    }
    if json {
      print(jsonText(report.json))
    } else {
      printText(report)
    }
    if !report.valid { throw Exit.invalid }
  }

  /// The game's own summary under one `summary:` label, a field a line, each name padded to the
  /// longest: a long name never runs into its value, and a field named like a fixed line
  /// (`device`, `frame`) reads as the game's.
  private func summaryLines(_ details: SaveValue) -> [(String, String)] {
    switch details {
    case .null: return []
    case .object(let object) where !object.fields.isEmpty:
      let width = object.fields.map { $0.name.count + 2 }.max() ?? 0
      return object.fields.enumerated().map { index, field in
        (
          index == 0 ? "summary" : "",
          (field.name + ":").padding(toLength: width, withPad: " ", startingAt: 0)
            + cellText(field.value)
        )
      }
    default: return [("summary", cellText(details))]
    }
  }

  private func printText(_ report: FileReport) {
    let out = Terminal.standardOutput
    var fields: [(String, String)] = [("path", report.path)]
    if let header = report.verification.header {
      fields += [
        ("format", "\(header.formatVersion)"),
        ("game", "\(header.game.name) \(header.game.build) (schema \(header.game.schemaVersion))"),
        ("created", isoDate(milliseconds: header.createdAt)), ("slot", header.summary.slot),
      ]
      fields += summaryLines(header.summary.details)
      fields.append(("play time", String(format: "%.1f s", header.summary.playTime)))
      if let progress = header.summary.progress { fields.append(("progress", progressText(progress))) }
      if !header.summary.device.isEmpty { fields.append(("device", header.summary.device)) }
      fields.append(("frame", "\(header.summary.frame)"))
      let signature = report.signature
      if let value = signature.value { fields.append((signature.label, value)) }
    }
    // What the game did on the way to this schema, when it recorded it (one line each).
    for (index, line) in (report.loadReport?.lines ?? []).enumerated() {
      fields.append((index == 0 ? "lineage" : "", line))
    }
    for (name, value) in fields {
      out.line(
        out.paint((name.isEmpty ? "" : name + ":").padding(toLength: 11, withPad: " ", startingAt: 0), .dim) + value)
    }
    if !report.verification.sections.isEmpty {
      out.line("")
      out.table(
        ["section", "encoding", "bytes", "checksum"],
        report.verification.sections.map {
          [
            $0.entry.name, $0.entry.encoding.name, "\($0.entry.length)",
            $0.checksumOK
              ? out.paint("ok", .green)
              : $0.entry.offset + $0.entry.length > report.fileSize
                ? out.paint("missing (the file ends before it)", .red) : out.paint("BAD", .red),
          ]
        }, rightAligned: [2])
    }
    out.line("")
    if let error = report.error {
      out.line(out.paint("invalid: ", .red) + error.description)
    } else if report.signature.notCheckedForWantOfKey {
      out.line(out.paint("intact", .yellow) + " (every checksum is right; the signature was not checked: no key)")
    } else {
      out.line(out.paint("valid", .green))
    }
  }
}
