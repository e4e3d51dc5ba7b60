#if _endian(big)
  #error("Stasis stores bulk arrays as this machine's memory: it supports little-endian machines only")
#endif

/// The format's documented limits (docs/FORMAT.md). A file beyond any of them is refused
/// with `limitExceeded` before anything is allocated for it.
public enum FormatLimits {
  /// The format version this build writes and the newest it reads.
  public static let formatVersion: UInt16 = 2
  /// Largest file, in bytes (1 GiB).
  public static let maxFileSize = 1 << 30
  /// Largest header (fixed part, strings and section table), in bytes.
  public static let maxHeaderSize = 64 * 1024
  /// Most sections in one file.
  public static let maxSections = 256
  /// Longest section name, in UTF-8 bytes.
  public static let maxSectionNameBytes = 64
  /// Longest game name, build or slot name in the header, in UTF-8 bytes.
  public static let maxHeaderStringBytes = 255
  /// Largest game summary (``SaveSummary/details``) once encoded, in bytes.
  public static let maxSummaryDetailsBytes = 4096
  /// Longest field name, in UTF-8 bytes.
  public static let maxFieldNameBytes = 255
  /// Deepest nesting of arrays and objects.
  public static let maxDepth = 64
  /// Most fields in one object shape or bulk layout.
  public static let maxFieldsPerShape = 4096
}
