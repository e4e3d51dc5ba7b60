import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`): every connection, database
/// file and socket takes one, and a process that reaches it (`EMFILE`) fails in places that
/// cannot recover. The server raises its soft limit to the hard one at start, then sizes its
/// connection cap below it (``ConnectionLimits``).
package struct DescriptorLimit: Sendable, Equatable {
  /// The soft limit the process had at start.
  package var initialSoft: Int
  /// The soft limit now: the one that applies.
  package var soft: Int
  /// The hard limit: the most the soft one can be raised to without privileges.
  package var hard: Int

  /// Creates a description of limits (tests; ``raiseToHard()`` reads the real ones).
  package init(initialSoft: Int, soft: Int, hard: Int) {
    self.initialSoft = initialSoft
    self.soft = soft
    self.hard = hard
  }

  /// Raises the soft limit to the hard one (or to the kernel's `nr_open` when the hard limit
  /// is unlimited) and returns the limits that apply. When raising fails, the soft limit stays.
  package static func raiseToHard() -> DescriptorLimit {
    var limits = rlimit()
    guard getrlimit(resourceLimit, &limits) == 0 else {
      return DescriptorLimit(initialSoft: 1024, soft: 1024, hard: 1024)
    }
    let initial = limits.rlim_cur
    var target = limits.rlim_max
    if target == rlim_t.max { target = rlim_t(kernelMaximum()) }
    if target > initial {
      var raised = limits
      raised.rlim_cur = target
      if setrlimit(resourceLimit, &raised) == 0 { limits = raised }
    }
    return DescriptorLimit(
      initialSoft: clamp(initial), soft: clamp(limits.rlim_cur),
      hard: limits.rlim_max == rlim_t.max ? Int.max : clamp(limits.rlim_max))
  }

  /// `soft 1024 (raised from 256), hard 1024`, for the `listening on` line.
  package var description: String {
    let hardText = hard == Int.max ? "unlimited" : String(hard)
    let raised = soft != initialSoft ? " (raised from \(initialSoft))" : ""
    return "soft \(soft)\(raised), hard \(hardText)"
  }

  #if canImport(Glibc)
    private static let resourceLimit = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
  #else
    private static let resourceLimit = RLIMIT_NOFILE
  #endif

  private static func clamp(_ value: rlim_t) -> Int { value > rlim_t(Int.max) ? Int.max : Int(value) }

  /// Linux's ceiling for any process's descriptors (`/proc/sys/fs/nr_open`), 1 Mi when unknown.
  private static func kernelMaximum() -> Int {
    let text = (try? String(contentsOfFile: "/proc/sys/fs/nr_open", encoding: .utf8)) ?? ""
    return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)).flatMap { $0 > 0 ? $0 : nil } ?? 1 << 20
  }
}
