import ArgumentParser
import Stasis
import StasisInspect
import StasisMerge
import StasisReplay

struct ReplayCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "replay",
    abstract: "Read replays and desync bundles, without the game.",
    discussion: """
      A replay (SAVES/replays/NAME.stasis) holds a run's inputs, keyframes and
      digest timeline; a desync bundle (NAME.desync.stasis) what a verifier found
      at a replay's first divergence. Verifying a replay needs the game's step,
      so it runs inside the game (the demo: stasis-demo --verify-replay FILE).

      Example:
        stasis replay info SAVES/replays/run-7.stasis
        stasis replay diff SAVES/replays/run-7.desync.stasis
      """,
    subcommands: [Info.self, Diff.self]
  )

  struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Print a replay's manifest, ticks, keyframes, digests and size by part.",
      discussion: "Exit 0; 1 when the file is not a whole replay (the error names the part), 74 when it cannot be read."
    )

    @Argument(help: "The replay file.")
    var file: String

    func run() throws {
      let replay: ReplayFile
      do {
        replay = try ReplayFile(bytes: try readSaveFile(file), path: file)
      } catch {
        throw fail(error)
      }
      let manifest = replay.manifest
      let out = Terminal.standardOutput
      out.line("replay: \(file)")
      out.line(
        "game: \(manifest.game) (build \(manifest.build.isEmpty ? "-" : manifest.build), schema \(manifest.schemaVersion))"
      )
      out.line("seed: \(manifest.seed)")
      out.line("tick rate: \(manifest.tickRate) a second")
      out.line(
        "ticks: \(manifest.ticks), from \(manifest.startTick) to \(manifest.endTick) "
          + "(\(Self.duration(Double(manifest.ticks) / Double(manifest.tickRate))))")
      if !manifest.resumedAt.isEmpty {
        out.line("resumed in a new process at: " + manifest.resumedAt.map(String.init).joined(separator: ", "))
      }
      out.line("inputs: \(manifest.inputEncoding)")
      if let compression = manifest.inputCompression, let bytes = manifest.inputBytes {
        let stored = replay.sizes.first { $0.part == "inputs" }?.bytes ?? 0
        out.line("  \(compression): \(bytes) bytes of inputs stored in \(stored)")
      }
      out.line(
        "keyframes: \(replay.keyframes.count + 1), \(Self.every(manifest.keyframeInterval)) "
          + "(the start and \(Self.ticks(replay.keyframes.map(\.tick))))")
      out.line(
        "digests: \(replay.digests.count), \(Self.every(manifest.digestInterval)), over '\(manifest.digestScope)'")
      out.line("size: \(replay.length) bytes")
      for part in replay.sizes { out.line("  \(part.part): \(part.bytes) bytes") }
    }

    /// `600, 1200, 1800`; past eight, the first six, `…` and the last.
    static func ticks(_ ticks: [Int64]) -> String {
      guard !ticks.isEmpty else { return "none after it" }
      let shown =
        ticks.count > 8
        ? ticks.prefix(6).map(String.init) + ["…", String(ticks[ticks.count - 1])] : ticks.map(String.init)
      return shown.joined(separator: ", ")
    }

    static func every(_ ticks: Int) -> String { ticks == 1 ? "every tick" : "every \(ticks) ticks" }

    static func duration(_ seconds: Double) -> String {
      let whole = Int(seconds.rounded())
      return whole >= 60 ? "\(whole / 60) min \(whole % 60) s" : "\(whole) s"
    }
  }

  struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Print a desync bundle's first divergence and the recorded and replayed states' differences.",
      discussion: """
        The fields are printed as stasis diff prints them, recorded → replayed,
        at the tick the bundle compared them (the divergence's, when a keyframe
        was there; else the first keyframe after it).

        Exit 1 when the bundle holds a divergence (it always does), as diff does
        when files differ; 74 when it cannot be read.
        """
    )

    @Argument(help: "The desync bundle.")
    var file: String

    func run() throws {
      let bundle: DesyncBundle
      let differences: [SaveDifference]
      do {
        bundle = try DesyncBundle(bytes: try readSaveFile(file), path: file)
        differences = try bundle.differences()
      } catch {
        throw fail(error)
      }
      let report = bundle.report
      let out = Terminal.standardOutput
      out.line(report.summary)
      out.line(
        "game: \(report.manifest.game) (build \(report.manifest.build.isEmpty ? "-" : report.manifest.build)), seed \(report.manifest.seed)"
      )
      out.line(
        "digest at tick \(report.tick): recorded \(Self.hex(report.recordedDigest)), replayed \(Self.hex(report.replayedDigest))"
      )
      out.line("inputs from the keyframe at tick \(report.keyframeTick)")
      if let compared = report.comparedTick {
        out.line(
          "recorded → replayed at tick \(compared)\(compared == report.tick ? "" : " (the first keyframe after it)"):")
        if differences.isEmpty {
          // The digests differed at the divergence, yet the states agree at the keyframe after
          // it: the difference healed on the way (a clamp, a collision that settles).
          out.line("the states agree again at tick \(compared): the divergence healed before it")
        } else {
          out.write(SaveInspection.diff(differences))
        }
      } else {
        out.line("no keyframe at or after tick \(report.tick): the recorded state there is not known")
      }
      throw ExitCode(1)
    }

    static func hex(_ value: UInt64) -> String {
      let digits = String(value, radix: 16)
      return String(repeating: "0", count: 16 - digits.count) + digits
    }
  }
}
