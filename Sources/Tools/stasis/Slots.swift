import ArgumentParser
import Foundation
import Stasis

struct Slots: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "List a save folder's slots and generations, newest first, each checked as `stasis verify` does.",
    discussion: """
      Example:
        stasis slots
        stasis slots Saves --json
        stasis slots Saves --headers-only    # faster: headers only

      `valid` is `yes` when the generation passes every check `stasis
      verify` makes: the header, every section's checksum and structure,
      and the signature when a key is given. A signed save checked
      without a key is `intact`, as `verify` says; anything else is `no`,
      the note naming why. With --headers-only only each header is read
      and checked, and the column is `header ok` (in --json,
      `headerValid` instead of `valid`).
      """
  )

  @Argument(help: "The save folder.")
  var directory: String = "Saves"

  @Flag(help: "Print the slots as JSON.")
  var json = false

  @Flag(
    help: """
      Read and check headers only (fast): the column is `header ok`, not `valid`, and a damaged \
      section is not seen.
      """)
  var headersOnly = false

  @Option(help: "The schema version of the build that will read the slots: generations above it are marked kept.")
  var schema: UInt32?

  @OptionGroup var key: KeyFileOption

  /// What the listing checked of one generation.
  private struct Check {
    /// Every check of `stasis verify` (or, with --headers-only, the header's) passed.
    var passed: Bool
    /// A signed file whose signature was not checked for want of a key (`verify`'s `intact`).
    var notCheckedForWantOfKey = false
    /// The signature's state for --json (`valid`, `invalid`, `unsigned`, `not checked`); nil with --headers-only.
    var signature: String?
    /// Why it failed.
    var error: SaveFileError?
  }

  func run() throws {
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder), isFolder.boolValue else {
      throw fail(SaveFileError(.notFound, "no such save folder", context: .init(file: directory)))
    }
    let signing = try key.policy()
    let slots: [SlotInfo]
    do {
      slots = try SaveStore(directory: directory).listSlots()
    } catch {
      throw fail(error)
    }
    var checks: [String: Check] = [:]  // by path; lookup only, the order is the listing's
    for info in slots.flatMap(\.generations) { checks[info.path] = check(info, signing: signing) }
    if json {
      print(
        jsonText(
          slots.map { slot in
            [
              "slot": slot.name,
              "generations": slot.generations.map { generationJSON($0, slot: slot, check: checks[$0.path]!) },
            ] as [String: Any]
          }))
      return
    }
    let out = Terminal.standardOutput
    guard !slots.isEmpty else {
      out.line("no slots in \(directory)")
      return
    }
    // One column per field of the games' own summaries, in the order they first appear (each
    // summary's in the order the game declared them); one named like a built-in column is
    // `summary.NAME` (``detailColumn(_:)``).
    let headers = slots.flatMap { $0.generations.compactMap(\.header) }
    var detailNames: [String] = []
    for header in headers {
      for field in detailFields(header.summary) where !detailNames.contains(field.name) {
        detailNames.append(field.name)
      }
    }
    let showProgress = headers.contains { $0.summary.progress != nil }
    let showDevice = headers.contains { !$0.summary.device.isEmpty }
    var rows: [[String]] = []
    for slot in slots {
      for info in slot.generations {
        let header = info.header
        let check = checks[info.path]!
        let details = header.map(\.summary).map(detailFields) ?? []
        var row = [slot.name, "\(info.generation)", header.map { isoDate(milliseconds: $0.createdAt) } ?? "-"]
        row += detailNames.map { name in details.first { $0.name == name }.map { cellText($0.value) } ?? "-" }
        row.append(header.map { String(format: "%.1f s", $0.summary.playTime) } ?? "-")
        if showProgress { row.append(progressText(header?.summary.progress)) }
        if showDevice { row.append(header.map { $0.summary.device.isEmpty ? "-" : $0.summary.device } ?? "-") }
        let verdict =
          !check.passed
          ? out.paint("no", .red)
          : check.notCheckedForWantOfKey ? out.paint("intact", .yellow) : out.paint("yes", .green)
        row += [
          "\(info.size)", verdict,
          slot.keptReason(info, readerSchema: schema) ?? check.error.map { $0.kindDescription } ?? "",
        ]
        rows.append(row)
      }
    }
    var columns = ["slot", "generation", "saved at"] + detailNames.map(detailColumn) + ["play time"]
    if showProgress { columns.append("progress") }
    if showDevice { columns.append("device") }
    columns += ["bytes", headersOnly ? "header ok" : "valid", "note"]
    if rows.allSatisfy({ $0.last == "" }) {
      columns.removeLast()
      rows = rows.map { Array($0.dropLast()) }
    }
    // Numbers right-aligned: the generation, play time, progress, bytes and numeric summary fields.
    var numeric: Set<Int> = [1]
    for (index, name) in columns.enumerated() where ["play time", "progress", "bytes"].contains(name) {
      numeric.insert(index)
    }
    for index in 3..<(3 + detailNames.count) where rows.allSatisfy({ Double($0[index]) != nil || $0[index] == "-" }) {
      numeric.insert(index)
    }
    out.table(columns, rows, rightAligned: numeric)
  }

  /// The generation checked as `stasis verify` checks a file (every byte, every section, the
  /// signature under `signing`, an unsigned file in a signed slot), or only its header with
  /// --headers-only.
  private func check(_ info: GenerationInfo, signing: SigningPolicy) -> Check {
    guard !headersOnly else { return Check(passed: info.isValid, error: info.error) }
    do {
      let report = try FileReport(path: info.path, signing: signing)
      return Check(
        passed: report.valid, notCheckedForWantOfKey: report.valid && report.signature.notCheckedForWantOfKey,
        signature: report.signature.json, error: report.error)
    } catch {
      return Check(passed: false, error: error)
    }
  }

  private func generationJSON(_ info: GenerationInfo, slot: SlotInfo, check: Check) -> [String: Any] {
    var object: [String: Any] = [
      "generation": info.generation, "path": info.path, "bytes": info.size, "thumbnail": info.hasThumbnail,
    ]
    // `valid` only when every check was made; a header-only listing says what it checked.
    object[headersOnly ? "headerValid" : "valid"] = check.passed
    if let signature = check.signature { object["signature"] = signature }
    if let kept = slot.keptReason(info, readerSchema: schema) { object["kept"] = kept }
    if let header = info.header {
      object.merge(summaryJSON(header)) { kept, _ in kept }
      object["schema"] = header.game.schemaVersion
    }
    if let error = check.error { object["error"] = error.description }
    return object
  }
}

struct Recover: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Make an older valid generation of a slot the newest, atomically, keeping the others.",
    discussion: """
      Example:
        stasis recover autosave                   # the newest generation that passes every check
        stasis recover autosave --generation 2 --saves Saves

      The chosen generation's bytes are written as a new generation (so a signed save stays
      signed); nothing is deleted. An invalid generation is refused.
      """
  )

  @Argument(help: "The slot.")
  var slot: String

  @Option(help: "The save folder.")
  var saves: String = "Saves"

  @Option(help: "The generation to make the newest (default: the newest valid one).")
  var generation: Int?

  func run() throws {
    let out = Terminal.standardOutput
    do {
      let slot = try SaveSlot(self.slot)
      let existing = try SaveStore(directory: saves).generations(of: slot)
      guard let newest = existing.first else {
        throw SaveFileError(.notFound, "slot '\(slot)' has no saves", context: .init(file: "\(saves)/\(slot)"))
      }
      // Keep every generation there is, plus the new one.
      let store = SaveStore(directory: saves, generationsToKeep: existing.count + 1)
      let chosen: Int
      if let generation {
        guard existing.contains(generation) else {
          throw SaveFileError(
            .noSuchGeneration,
            "slot '\(slot)' has no generation \(generation) (it has \(existing.map(String.init).joined(separator: ", ")))",
            context: .init(file: store.folder(of: slot)))
        }
        chosen = generation
      } else {
        var firstValid: Int?
        for candidate in existing
        where (try? store.readDocument(at: store.path(of: slot, generation: candidate))) != nil {
          firstValid = candidate
          break
        }
        guard let firstValid else {
          throw SaveFileError(
            .malformed, "no generation of slot '\(slot)' is valid", context: .init(file: store.folder(of: slot)))
        }
        if firstValid == newest {
          out.line("generation \(newest) is the newest and valid: nothing to recover")
          return
        }
        chosen = firstValid
      }
      let bytes = try store.readBytes(at: store.path(of: slot, generation: chosen))
      _ = try store.readDocument(at: store.path(of: slot, generation: chosen))  // refuse an invalid one, naming why
      let handle = store.save(fileBytes: bytes, slot: slot, unreadableNewest: .saveAlongside)
      handle.waitUntilEnded()  // the pruning too: the tool exits next
      let receipt = try handle.wait()
      out.line("generation \(chosen) is now the newest, as generation \(receipt.generation) (\(receipt.path))")
    } catch let error as SaveFileError {
      throw fail(error)
    }
  }
}
