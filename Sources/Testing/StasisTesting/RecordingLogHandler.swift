import Logging
import Synchronization

/// A swift-log handler that keeps every message, for tests that count log lines ("one line
/// per failure") or check that none says something.
///
/// ```swift
/// let lines = RecordingLogHandler.Lines()
/// let store = SaveStore(directory: folder, logger: Logger(label: "test") { _ in RecordingLogHandler(lines) })
/// #expect(lines.messages.isEmpty)
/// ```
public struct RecordingLogHandler: LogHandler {
  /// The messages, shared by every copy of the handler.
  public final class Lines: Sendable {
    private let stored = Mutex<[String]>([])
    /// Creates an empty record.
    public init() {}
    /// Every message so far, oldest first.
    public var messages: [String] { stored.withLock { $0 } }
    func append(_ line: String) { stored.withLock { $0.append(line) } }
  }

  private let lines: Lines
  /// Metadata, kept as swift-log requires.
  public var metadata: Logger.Metadata = [:]
  /// Every level is recorded by default.
  public var logLevel: Logger.Level = .trace

  /// A handler that appends to `lines`.
  public init(_ lines: Lines) { self.lines = lines }

  /// Metadata by key.
  public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  /// Records the message.
  public func log(event: LogEvent) { lines.append("\(event.message)") }
}
