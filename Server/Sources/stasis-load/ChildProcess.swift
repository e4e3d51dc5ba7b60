import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A child process started with no signal blocked and every signal at its default action.
/// Foundation's `Process` passes on the calling thread's signal mask, and the threads this
/// tool's tasks run on block SIGALRM and SIGTERM: pgbench, which ends a `-T` run on SIGALRM,
/// then never ends (it ran for 15 minutes of a 10-second run before this).
final class ChildProcess {
  let pid: pid_t
  /// Its standard output.
  let output: FileHandle
  private var status: Int32?

  /// Starts `executable` (looked up in `PATH` when it has no `/`); its standard error goes to
  /// this process's when `showErrors`, else to /dev/null.
  init(_ executable: String, _ arguments: [String], showErrors: Bool = true) throws {
    var pipe: [Int32] = [0, 0]
    guard Glibc.pipe(&pipe) == 0 else { throw ChildProcessError("pipe failed: errno \(errno)") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipe[1], STDOUT_FILENO)
    posix_spawn_file_actions_addclose(&actions, pipe[0])
    posix_spawn_file_actions_addclose(&actions, pipe[1])
    if !showErrors { posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    var all = sigset_t()
    sigemptyset(&none)
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var pid: pid_t = 0
    let result = posix_spawnp(&pid, executable, &actions, &attributes, argv, environ)
    close(pipe[1])
    guard result == 0 else {
      close(pipe[0])
      throw ChildProcessError("\(executable) did not start: errno \(result)")
    }
    self.pid = pid
    output = FileHandle(fileDescriptor: pipe[0], closeOnDealloc: true)
  }

  /// Sends `signal`.
  func signal(_ signal: Int32) { kill(pid, signal) }

  /// Waits for it to end; its exit status (128 + N for a signal).
  @discardableResult
  func wait() -> Int32 {
    if let status { return status }
    var raw: Int32 = 0
    while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
    let code = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
    status = code
    return code
  }

  /// Runs a tool to its end and returns its standard output; throws unless it exits 0.
  static func run(_ tool: String, _ arguments: [String]) throws -> String {
    let child = try ChildProcess(tool, arguments)
    let data = child.output.readDataToEndOfFile()
    guard child.wait() == 0 else { throw ChildProcessError("\(tool) failed") }
    return String(decoding: data, as: UTF8.self)
  }
}

struct ChildProcessError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// CPU time, in seconds, that the machine and some processes used: the load tool, the server,
/// the client (pgbench), and PostgreSQL, so a row says who used the two cores, and how much went
/// to everything else on the machine (other builds: the noise).
struct CPUSample {
  var machineBusy: Double
  var machineTotal: Double
  var processes: [String: Double]
  /// Each PostgreSQL process's time, by pid: a delta sums the processes alive at the end (from 0
  /// for one that started in between), so one that exits between the samples never counts
  /// negative (its time is lost instead, and lands in "other").
  var postgres: [pid_t: Double]

  /// Reads `/proc` now: the machine, and the named processes (`postgres` sums every process
  /// whose name is `postgres`).
  static func now(_ pids: [String: pid_t]) -> CPUSample {
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    var busy = 0.0
    var total = 0.0
    if let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
      let line = stat.split(separator: "\n").first
    {
      let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
      // user nice system idle iowait irq softirq steal
      total = fields.prefix(8).reduce(0, +) / ticks
      busy = total - (fields.count > 4 ? (fields[3] + fields[4]) / ticks : 0)
    }
    var processes: [String: Double] = [:]
    for (name, pid) in pids where pid != 0 { processes[name] = processTime(pid, ticks) }
    var postgres: [pid_t: Double] = [:]
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
      guard let pid = pid_t(entry),
        let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
      else { continue }
      if comm.hasPrefix("postgres") { postgres[pid] = processTime(pid, ticks) }
      // A part named with pid 0: every process of that name (the servers of a cluster).
      for (name, wanted) in pids where wanted == 0 && comm.hasPrefix("stasis-server") {
        processes[name, default: 0] += processTime(pid, ticks)
      }
    }
    return CPUSample(machineBusy: busy, machineTotal: total, processes: processes, postgres: postgres)
  }

  /// utime + stime of a process (0 once it is gone).
  private static func processTime(_ pid: pid_t, _ ticks: Double) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return 0 }
    // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / ticks
  }

  /// The CPU a part used between `start` and `self`, in cores (CPU seconds per second of wall
  /// time); nil when no time passed.
  func cores(of part: String, since start: CPUSample) -> Double? {
    let wall = (machineTotal - start.machineTotal) / Double(ProcessInfo.processInfo.activeProcessorCount)
    guard wall > 0 else { return nil }
    let used =
      part == "postgres"
      ? postgres.reduce(0) { $0 + $1.value - (start.postgres[$1.key] ?? 0) }
      : (processes[part] ?? 0) - (start.processes[part] ?? 0)
    return used / wall
  }

  /// What each part used between `start` and `self`, in cores (CPU seconds per second), and what
  /// the rest of the machine used; "server 0.9, postgres 0.6, client 0.4, other 0.1 of 2".
  func cores(since start: CPUSample, parts: [String]) -> String {
    let wall = (machineTotal - start.machineTotal) / Double(ProcessInfo.processInfo.activeProcessorCount)
    guard wall > 0 else { return "-" }
    var named = 0.0
    var text: [String] = []
    for part in parts {
      let used =
        part == "postgres"
        ? postgres.reduce(0) { $0 + $1.value - (start.postgres[$1.key] ?? 0) }
        : (processes[part] ?? 0) - (start.processes[part] ?? 0)
      named += used
      text.append("\(part) \(String(format: "%.2f", used / wall))")
    }
    let other = max(0, (machineBusy - start.machineBusy) - named)
    text.append("other \(String(format: "%.2f", other / wall))")
    return text.joined(separator: ", ") + " of \(ProcessInfo.processInfo.activeProcessorCount)"
  }
}
