import ArgumentParser
import Foundation
import Stasis

struct Verify: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Check every byte of save files, or of every .stasis file in folders (recursively).",
    discussion: """
      Example:
        stasis verify Saves
        stasis verify a.stasis b.stasis
        stasis verify --key-file game.key Saves
        STASIS_KEY_FILE=game.key stasis verify Saves

      With a key, each line ends `signature: valid` or `signature: unsigned`,
      and a file whose signature does not match is INVALID. Without one, a
      signed file is `intact` (every checksum is right) and its line ends
      `signed: yes (not checked: no key)`: never `ok`.

      Exit 0 when every file is valid or intact, 1 when any is invalid, 74 when
      a path cannot be read.
      """
  )

  @Argument(help: "Files or folders.")
  var paths: [String]

  @OptionGroup var key: KeyFileOption

  func validate() throws {
    guard !paths.isEmpty else { throw ValidationError("give at least one file or folder") }
  }

  func run() throws {
    let signing = try key.policy()
    let out = Terminal.standardOutput
    let progress = Terminal.standardError
    var files: [String] = []
    var unreadable = 0
    for path in paths {
      var isFolder: ObjCBool = false
      if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
        let found = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? [])
          .filter { $0.hasSuffix(".stasis") }.sorted()
        files += found.map { (path as NSString).appendingPathComponent($0) }
      } else {
        files.append(path)
      }
    }
    var valid = 0
    var invalid = 0
    var notChecked = 0
    let showProgress = progress.isTerminal && files.count > 20
    for (index, file) in files.enumerated() {
      if showProgress {
        let done = (index * 30) / max(files.count, 1)
        progress.write(
          "\r[" + String(repeating: "#", count: done) + String(repeating: ".", count: 30 - done)
            + "] \(index)/\(files.count)")
      }
      do {
        let report = try FileReport(path: file, signing: signing)
        if showProgress { progress.write("\r\u{1B}[K") }
        let signature = report.signature
        if let error = report.error {
          invalid += 1
          out.line(out.paint("INVALID ", .red) + error.description)
        } else if signature.notCheckedForWantOfKey {
          notChecked += 1
          out.line(out.paint("intact  ", .yellow) + file + "  " + (signature.line ?? ""))
        } else {
          valid += 1
          out.line(out.paint("ok      ", .green) + file + (signature.keyGiven ? "  " + (signature.line ?? "") : ""))
        }
      } catch {
        if showProgress { progress.write("\r\u{1B}[K") }
        invalid += 1
        if Exit.code(for: error) == Exit.io { unreadable += 1 }
        out.line(out.paint("ERROR   ", .red) + error.description)
      }
    }
    var summary = "\(valid) valid, \(invalid) invalid"
    if notChecked > 0 { summary += ", \(notChecked) signed but not checked (no key)" }
    out.line(summary)
    if unreadable > 0 { throw Exit.io }
    if invalid > 0 { throw Exit.invalid }
  }
}
