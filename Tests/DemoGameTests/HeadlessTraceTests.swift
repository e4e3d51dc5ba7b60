import Foundation
import StasisTestSupport
import Testing

@Suite("stasis-demo --headless --trace")
struct HeadlessTraceTests {
  @Test("a background round trip traces the lifecycle in UIKit's order")
  func roundTripOrder() throws {
    let saves = try temporaryFolder()
    let result = try run(
      "stasis-demo",
      [
        "--headless", "--frames", "120", "--background-at", "60", "--foreground-at", "60", "--trace", "--saves",
        saves.path,
      ])
    #expect(result.status == 0, "\(result.stderr)")
    let lifecycle = result.lines.filter { $0.hasPrefix("lifecycle: ") }.map { $0.dropFirst("lifecycle: ".count) }
    #expect(
      lifecycle == [
        "didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground", "willEnterForeground",
        "didBecomeActive",
      ])
    let tasks = result.lines.filter { $0.hasPrefix("task: ") }
    #expect(tasks.first?.hasPrefix("task: begin") == true)
    #expect(tasks.contains { $0.hasPrefix("task: end") })
  }

  @Test("--foreground-at before --background-at is a usage error, exit 64")
  func badFlags() throws {
    let result = try run("stasis-demo", ["--headless", "--background-at", "10", "--foreground-at", "5"])
    #expect(result.status == 64)
    #expect(result.stderr.contains("--foreground-at (5) must not come before --background-at (10)"))
  }

  @Test("--upload-rate must be positive and, like --whole-uploads, goes with --cloud: exit 64 naming the flag")
  func cloudLinkFlags() throws {
    let cases: [([String], String)] = [
      (["--upload-rate", "0"], "--upload-rate must be more than 0 bytes per second"),
      (["--upload-rate=-5"], "--upload-rate must be more than 0 bytes per second"),
      (["--upload-rate", "1000000"], "--upload-rate goes with --cloud URL"),
      (["--whole-uploads"], "--whole-uploads goes with --cloud URL"),
    ]
    for (flags, message) in cases {
      let result = try run("stasis-demo", ["--headless", "--frames", "1"] + flags)
      #expect(result.status == 64, "\(flags)")
      #expect(result.stderr.contains(message), "\(flags): \(result.stderr)")
    }
  }
}
